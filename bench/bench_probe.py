"""Benchmark: the probe against a loopback sshd, side by side with its baselines in one run.

    .venv/bin/python bench/bench_probe.py [--runs 5] [--fleet 100] [--smi-delay 0.2 0]
                                          [--only server|tree]

**The bench host** (``tests/bench_host.py``): this machine reached as a GPU server is — no
``root:`` prefix, so the probe runs the login shell (``bash -il`` reading Debian 12's
``/etc/profile``, ``/etc/bash.bashrc`` and skel files, plus a venv activation) and an
``nvidia-smi`` stand-in that waits ``--smi-delay`` seconds per call (NVML's initialisation: an
assumption, not a measured figure; one table per value, by default 0.2 s and 0 s), with one
serving process, in a PID namespace of its own.
One table, the probe's sh path beside its Python path (``DT_PROBE_PATH=sh|py``; "n/a" where
the probe on this checkout has no such path):
- processes started per probe (``strace -ff``, successful execve): the probe's own (target
  ≤ 15), apart from those its login shell's profile starts and those the stand-ins start;
- the in-process probe (connect + auth + probe) against ``ssh host true`` with ssh forced to
  the key exchange asyncssh negotiated (target ≤ 1.0×), and against the host's own programs
  alone over the same sshd and kex (``HOST_PROGRAMS``: nvidia-smi's two calls and the login
  shell, together), and the login shell alone (``LOGIN_ALONE``), with how long nvidia-smi ran
  in a traced probe (calls together counted once): what is the host's and what is ours;
- the whole ``detective-tui probe HOST --json`` process against the floor of any asyncssh
  client: a fresh Python process that connects with asyncssh and runs ``true`` (target ≤ 1.25×),
  with ``tui`` and ``probes`` compiled first (``compileall``, as an installed package has them).
It fails (exit status) when the host did not run its ``.bashrc`` once per probe and
``nvidia-smi`` at least once: it never reports figures of a host that skipped them.

**The reference tree** (fake ct200 under a ``root:`` prefix, its stand-ins allowed to run), for
figures comparable with earlier runs: processes per probe, the probe against ``ssh host true``
(also at the same kex), our transport alone, the CLI process beside the floor, the probe of this
machine against ``PY -m torch.utils.collect_env`` (``--torch-python``, by default the tests'
cached CPU-torch venv when it exists), and a fleet of N inventory hosts (all this loopback sshd)
probed concurrently against a bare asyncssh fan-out of ``true`` (target ≤ 1.2×) and of the same
probe, with client CPU seconds.
Ratios are printed, nothing is asserted; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncssh

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from bench_host import bench_host_problem, build_bench_host  # noqa: E402
from probe_trace import STRACE, execve_counts, process_count, smi_wait, top, traced_logs  # noqa: E402
from sshd import SSHD, sshd_available, start_sshd  # noqa: E402
from torch_venv import VENV  # noqa: E402

from probes import probe_env, probe_script  # noqa: E402
from tui.core.hosts import Host  # noqa: E402
from tui.core.reach.transport import command_line, script_with_env  # noqa: E402
from tui.core.run.runner import Session  # noqa: E402
from tui.demo.fakehost import build_fake_host, reference_ct200  # noqa: E402

# the least an asyncssh client process does: start Python and import asyncssh (then connect and
# run `true`); what detective-tui adds on top of these is its own cost
FLOOR_IMPORT = "import asyncssh"
FLOOR_TRUE = """
import asyncio, os, asyncssh
async def main():
    async with asyncssh.connect(
        "fakehost", config=[os.environ["DETECTIVE_TUI_SSH_CONFIG"]],
        known_hosts=os.environ["DETECTIVE_TUI_KNOWN_HOSTS"], agent_path=None,
    ) as conn:
        await conn.run("true", check=True)
asyncio.run(main())
"""
# what the bench host's nvidia-smi stand-in waits per call for NVML's initialisation: no file in
# ../shared measured it, so it is an assumption and a parameter (--smi-delay)
SMI_DELAY_S = 0.2


def cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def wall_times(runs: int, fn: Callable[[], object]) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def median_wall(runs: int, fn: Callable[[], object]) -> float:
    return statistics.median(wall_times(runs, fn))


def amedian_wall(runs: int, make: Callable[[], Awaitable[object]]) -> float:
    async def timed() -> float:
        start = time.perf_counter()
        await make()
        return time.perf_counter() - start

    return statistics.median(asyncio.run(timed()) for _ in range(runs))


class Bench:
    def __init__(self, work: Path, server: SSHD, account: str, tree: bool = True) -> None:
        self.server = server
        self.account = account
        self.ssh_config, self.known_hosts = server.write_client_files(work / f"client-{account}")
        self.ssh_argv = [
            "ssh", "-F", str(self.ssh_config), "-o", f"UserKnownHostsFile={self.known_hosts}",
            "-o", "BatchMode=yes", "-o", "ControlMaster=no", "-o", "ControlPath=none", "fakehost",
        ]  # fmt: skip
        if tree:
            self.tree = build_fake_host(work / f"ct200-{account}", reference_ct200())
        self.env = {
            **os.environ,
            "DETECTIVE_TUI_SSH_CONFIG": str(self.ssh_config),
            "DETECTIVE_TUI_KNOWN_HOSTS": str(self.known_hosts),
            "XDG_STATE_HOME": str(work / "state"),
        }
        self.env.pop("SSH_AUTH_SOCK", None)

    def host(self, name: str = "ct200") -> Host:
        return Host(
            name=name, ssh="fakehost", root=str(self.tree.root), simulate="tree", env=self.tree.env,
            python=self.tree.pythons,
        )  # fmt: skip

    async def probe_real_once(self, python: str) -> None:
        """The probe of this machine itself (no fake root), inspecting ``python``."""
        async with self.session() as s:
            result = await s.probe(Host(name="this-machine", ssh="fakehost", python=(python,)))
        if not result.ok:
            raise SystemExit(f"probe failed: {result.error}")

    def session(self, **kw: object) -> Session:
        return Session(known_hosts=self.known_hosts, ssh_config=self.ssh_config, **kw)  # type: ignore[arg-type]

    def ssh(
        self, *command: str, options: tuple[str, ...] = (), stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        # ssh joins its arguments with spaces into one remote command line: quote them
        argv = [*self.ssh_argv[:-1], *options, self.ssh_argv[-1], shlex.join(command)]
        quiet = {"stdin": subprocess.DEVNULL} if stdin is None else {"input": stdin}
        return subprocess.run(
            argv, capture_output=True, text=True, check=False, timeout=120, **quiet
        )

    def ssh_kex(self) -> str:
        err = subprocess.run(
            [*self.ssh_argv[:-1], "-v", "fakehost", "true"], capture_output=True, text=True
        ).stderr
        return next((ln.split("algorithm:")[1].strip() for ln in err.splitlines()
                     if "kex: algorithm:" in ln), "?")  # fmt: skip

    async def asyncssh_kex(self) -> str:
        """asyncssh has no public accessor: read its debug log of the negotiation."""

        class KexLog(logging.Handler):
            alg = "?"

            def emit(self, record: logging.LogRecord) -> None:
                message = record.getMessage()
                if "Key exchange alg:" in message:
                    KexLog.alg = message.split(":", 1)[1].strip().strip("b'")

        logger = logging.getLogger("asyncssh")
        handler, level = KexLog(), logger.level
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        asyncssh.set_debug_level(2)
        try:
            async with self.session() as s:
                await s.run_script(self.host(), "true")
        finally:
            logger.removeHandler(handler)
            logger.setLevel(level)
            asyncssh.set_debug_level(1)
        return KexLog.alg

    async def probe_once(self) -> None:
        async with self.session() as s:
            result = await s.probe(self.host())
        if not result.ok:
            raise SystemExit(f"probe failed: {result.error}")

    async def true_once(self) -> None:
        async with self.session() as s:
            result = await s.run_script(self.host(), "true")
        if not result.ok:
            raise SystemExit(f"run_script failed: {result.error}")

    def cli_probe(self) -> None:
        proc = subprocess.run(
            [sys.executable, "-m", "tui.cli", "--hosts", str(self.inventory(1)), "probe",
             "ct200-0", "--json"],
            cwd=REPO, env=self.env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise SystemExit(f"CLI probe failed ({proc.returncode}): {proc.stderr[-2000:]}")

    def python_process(self, code: str) -> None:
        proc = subprocess.run(
            [sys.executable, "-c", code], env=self.env, capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise SystemExit(f"floor process failed: {proc.stderr[-2000:]}")

    def inventory(self, n: int) -> Path:
        path = self.tree.root.parent / f"hosts-{n}.yaml"
        if not path.exists():
            env = "".join(f"      {k}: '{v}'\n" for k, v in self.tree.env.items())
            pythons = "".join(f"      - {p}\n" for p in self.tree.pythons)
            path.write_text("hosts:\n" + "".join(
                f"  - name: ct200-{i}\n    ssh: fakehost\n    root: {self.tree.root}\n"
                f"    simulate: tree\n    python:\n{pythons}    env:\n{env}"
                for i in range(n)))  # fmt: skip
        return path

    async def fleet_probe(self, n: int) -> None:
        hosts = [self.host(f"ct200-{i}") for i in range(n)]
        async with self.session(concurrency=n) as s:
            results = await s.probe_many(hosts)
        bad = [r for r in results if not r.ok]
        if bad:
            raise SystemExit(f"{len(bad)} of {n} probes failed: {bad[0].error}")

    async def fleet_bare(self, n: int) -> None:
        async def one() -> None:
            async with asyncssh.connect(
                "fakehost", config=[str(self.ssh_config)], known_hosts=str(self.known_hosts),
                agent_path=None,
            ) as conn:  # fmt: skip
                await conn.run("true", check=True)

        await asyncio.gather(*(one() for _ in range(n)))

    async def fleet_bare_probe(self, n: int) -> None:
        """The same probe command and script, fanned out with bare asyncssh: what is left of
        the gap to `true` is the remote work, not this program."""
        tree = self.tree
        env = {**tree.env, **probe_env(tree.pythons, root=str(tree.root), tree_exec=True)}
        command = command_line("sh -s", deadline_s=120)
        script = script_with_env(probe_script(), env, "sh -s")

        async def one() -> None:
            async with asyncssh.connect(
                "fakehost", config=[str(self.ssh_config)], known_hosts=str(self.known_hosts),
                agent_path=None,
            ) as conn:  # fmt: skip
                await conn.run(command, input=script, check=True)

        await asyncio.gather(*(one() for _ in range(n)))


# ---- the bench host: this machine over its own loopback sshd, as a GPU server is reached ----
PATHS = ("sh", "py")  # DT_PROBE_PATH: the probe's sh steps, or one Python run (hostfacts.py)


def path_supported(path: str) -> bool:
    """Whether the probe on this checkout has that path: without the ``DT_PROBE_PATH`` knob,
    today's probe is the sh path and there is no Python one."""
    return "DT_PROBE_PATH" in probe_script() or path == "sh"


# what the probe of the bench host cannot do without, started together as the probe starts
# them: nvidia-smi's table and its one --query-gpu call (smi_pair) and the login shell
# (ctx_login: root's passwd shell, `bash -ilc`); their wait is the host's, not the probe's
HOST_PROGRAMS = (
    "nvidia-smi >/dev/null 2>&1 & "
    "nvidia-smi --query-gpu=index,name --format=csv,noheader >/dev/null 2>&1 & "
    "HISTFILE=/dev/null /bin/bash -ilc 'exec env' >/dev/null 2>&1 </dev/null & wait"
)
LOGIN_ALONE = "HISTFILE=/dev/null /bin/bash -ilc 'exec env' >/dev/null 2>&1 </dev/null"


class Server(Bench):
    """The bench host (``tests/bench_host.py``): a login shell with a real profile, an
    ``nvidia-smi`` stand-in that waits, a serving process, in a PID namespace of its own."""

    def __init__(self, work: Path, smi_delay_s: float) -> None:
        self.bh = build_bench_host(work / "server", smi_delay_s=smi_delay_s)
        super().__init__(work, self.bh.start_sshd(work / "sshd-server"), "server", tree=False)
        self.probes = 0
        self.baseline = 0  # runs of HOST_PROGRAMS: each runs the .bashrc and nvidia-smi too
        self.logins = 0  # runs of LOGIN_ALONE: each runs the .bashrc

    def host(self, name: str = "server", path: str = "sh") -> Host:
        knob = {"DT_PROBE_PATH": path} if "DT_PROBE_PATH" in probe_script() else {}
        return Host(name=name, ssh="fakehost", python=(self.bh.python,), env=knob)

    async def probe_path(self, path: str) -> None:
        async with self.session() as s:
            result = await s.probe(self.host(path=path))
        self.probes += 1
        if not result.ok or result.facts is None or not result.facts.probe.complete:
            raise SystemExit(f"probe of the bench host failed: {result.error}")

    def cli_path(self, path: str) -> None:
        inventory = self.bh.root.parent / f"hosts-{path}.yaml"
        knob = f"    env:\n      DT_PROBE_PATH: {path}\n" if self.host(path=path).env else ""
        inventory.write_text(f"hosts:\n  - name: server\n    ssh: fakehost\n    python:\n"
                             f"      - {self.bh.python}\n{knob}")  # fmt: skip
        proc = subprocess.run(
            [sys.executable, "-m", "tui.cli", "--hosts", str(inventory), "probe", "server",
             "--json"],
            cwd=REPO, env=self.env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        self.probes += 1
        if proc.returncode not in (0, 1):  # 1: a critical finding (CT200 has them)
            raise SystemExit(f"CLI probe failed ({proc.returncode}): {proc.stderr[-2000:]}")

    def counts(self, path: str) -> tuple[dict[str, dict[str, int]], float] | None:
        """One probe under strace, run by the sshd's session exactly as the probe is: the
        programs it started (execve_counts) and how long nvidia-smi ran (smi_wait)."""
        if shutil.which("strace") is None:
            return None
        env = {**self.host(path=path).env, **probe_env((self.bh.python,))}

        def run(log: Path) -> None:
            proc = self.ssh(*STRACE, str(log), "sh", "-s", stdin=script_with_env(
                probe_script(), env, "sh -s"))  # fmt: skip
            if "@@DT1\tend" not in proc.stdout:
                raise SystemExit(f"traced probe did not finish: {proc.stderr[-2000:]}")

        self.probes += 1
        logs = traced_logs(run)
        return execve_counts(logs, self.bh.root), smi_wait(logs)

    def host_programs(self, options: tuple[str, ...], command: str = HOST_PROGRAMS) -> None:
        """The programs the probe must run on this host, alone and together, over the same
        sshd: nvidia-smi's table and query calls and the login shell (HOST_PROGRAMS), or the
        login shell alone (LOGIN_ALONE)."""
        if command == HOST_PROGRAMS:
            self.baseline += 1
        else:
            self.logins += 1
        proc = self.ssh("sh", "-c", command, options=options)
        if proc.returncode != 0:
            raise SystemExit(f"the host's programs failed: {proc.stderr[-2000:]}")


def cell(value: float | None, fmt: str = "8.3f", unit: str = "") -> str:
    return "n/a".rjust(8) if value is None else (format(value, fmt) + unit).rjust(8)


def side_by_side(
    label: str, ours: dict[str, float | None], base: float | None, target: str, fmt: str = "8.3f"
) -> str:
    ratios = [None if v is None or not base else v / base for v in ours.values()]
    values = " | ".join(cell(v, fmt) for v in ours.values())
    return (f"| {label:<58} | {values} | {cell(base)} | "
            f"{' | '.join(cell(r, '.2f', '×') for r in ratios)} | {target:>6} |")  # fmt: skip


def measure_server(work: Path, runs: int, smi_delay_s: float) -> list[str]:
    """The side-by-side table of the bench host: sh path and Python path."""
    b = Server(work, smi_delay_s)
    try:
        kex = asyncio.run(b.asyncssh_kex())
        same_kex = ("-o", f"KexAlgorithms={kex}")
        rows = [
            f"bench host: this machine over a loopback sshd as a server is reached "
            f"(tests/bench_host.py): login shell `bash -il` with Debian 12's /etc/profile, "
            f"/etc/bash.bashrc and skel files plus a venv activation; nvidia-smi stand-in "
            f"waiting {smi_delay_s:.3f} s per call (a parameter, not a measurement); one serving "
            f"process. kex: asyncssh {kex}, ssh forced to the same (plain ssh picks "
            f"{b.ssh_kex()}).\n",
            f"| {'what':<58} | {'sh path':>8} | {'py path':>8} | {'base s':>8} | "
            f"{'sh ratio':>8} | {'py ratio':>8} | target |",
            f"|{'-' * 60}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 10}|--------|",
        ]
        supported = [p for p in PATHS if path_supported(p)]
        traced = {p: b.counts(p) if p in supported else None for p in PATHS}
        counts = {p: None if t is None else t[0] for p, t in traced.items()}
        parts = (
            ("own", "processes per probe (strace -ff): the probe's own"),
            ("login", "  …that its login shell's profile starts"),
            ("standins", "  …that the stand-ins start (not on a real host)"),
        )
        for part, label in parts:
            n = {p: None if c is None else float(sum(c[part].values())) for p, c in counts.items()}
            rows.append(side_by_side(label, n, None, "≤15" if part == "own" else "", "8.0f"))
        b.ssh("true")  # warm caches
        ssh_kex = median_wall(runs, lambda: b.ssh("true", options=same_kex))
        probe = {p: amedian_wall(runs, lambda p=p: b.probe_path(p)) if p in supported else None
                 for p in PATHS}  # fmt: skip
        rows.append(side_by_side("in-process probe vs `ssh host true`, same kex", probe, ssh_kex,
                                 "≤1.0×"))  # fmt: skip
        programs = median_wall(runs, lambda: b.host_programs(same_kex))
        rows.append(side_by_side("  vs `ssh host 'smi & smi --query-gpu & bash -il; wait'`",
                                 probe, programs, ""))  # fmt: skip
        login = median_wall(runs, lambda: b.host_programs(same_kex, LOGIN_ALONE))
        rows.append(side_by_side("  vs `ssh host 'bash -il'` (the login shell alone)", probe,
                                 login, ""))  # fmt: skip
        # how long at least one nvidia-smi ran (strace -ttt, calls together counted once):
        # no probe of this host is faster than that plus the connection
        waits = {p: None if t is None else t[1] for p, t in traced.items()}
        rows.append(side_by_side("  nvidia-smi ran (traced probe; together counted once)",
                                 waits, ssh_kex, ""))  # fmt: skip
        floor = median_wall(runs, lambda: b.python_process(FLOOR_TRUE))
        cli = {p: median_wall(runs, lambda p=p: b.cli_path(p)) if p in supported else None
               for p in PATHS}  # fmt: skip
        rows.append(side_by_side("`probe HOST --json` process vs python + asyncssh `true`", cli,
                                 floor, "≤1.25×"))  # fmt: skip
        for p, c in counts.items():
            if c is not None:
                rows.append(f"\n{p} path, per program — own: {top(c['own'])}; login profile: "
                            f"{top(c['login'])}; stand-ins: {top(c['standins'])}")  # fmt: skip
        logins, smis = b.bh.runs("login"), b.bh.runs("nvidia-smi")
        logins -= b.baseline + b.logins
        smis -= 2 * b.baseline
        if logins != b.probes or smis < b.probes:
            raise SystemExit(f"the bench host skipped its work: {b.probes} probes, but the "
                             f".bashrc ran {logins} times and nvidia-smi {smis} times")  # fmt: skip
        rows.append(f"\nchecked: {b.probes} probes ran the .bashrc {logins} times and "
                    f"nvidia-smi {smis} times")  # fmt: skip
        return rows
    finally:
        b.server.stop()


def row(label: str, ours: float, base: float, target: str = "") -> str:
    return f"| {label:<66} | {ours:8.3f} | {base:8.3f} | {ours / base:6.2f}× | {target:>6} |"


def measure(work: Path, account: str, runs: int, fleet: int, torch_python: str | None) -> list[str]:
    """The reference tree's figures, for an account whose rc files are empty."""
    home = work / f"home-{account}"
    home.mkdir()
    (home / ".bashrc").write_text("")
    server = start_sshd(
        work / f"sshd-{account}",
        extra=f"SetEnv HOME={home}\nMaxStartups {max(fleet * 2, 10)}\nMaxSessions 20\n",
    )
    try:
        b = Bench(work, server, account)
        rows = [f"| **{account} account** — kex: ssh {b.ssh_kex()}, asyncssh "
                f"{asyncio.run(b.asyncssh_kex())} | | | | |"]  # fmt: skip
        tree = b.tree
        rows.append(
            process_count(
                tree.root,
                {**tree.env, **probe_env(tree.pythons, root=str(tree.root), tree_exec=True)},
            )
        )
        b.ssh("true")  # warm caches
        ssh_true = median_wall(runs, lambda: b.ssh("true"))
        probe = amedian_wall(runs, b.probe_once)
        rows.append(row("probe (connect + auth + probe) vs `ssh host true`", probe, ssh_true,
                        "≤1.3×"))  # fmt: skip
        same_kex = ("-o", "KexAlgorithms=curve25519-sha256")
        ssh_true_kex = median_wall(runs, lambda: b.ssh("true", options=same_kex))
        rows.append(row("probe vs `ssh -o KexAlgorithms=curve25519-sha256 host true`", probe,
                        ssh_true_kex, "≤1.3×"))  # fmt: skip
        transport_only = amedian_wall(runs, b.true_once)
        rows.append(row("our transport alone: `true` (fresh connection) vs `ssh host true`",
                        transport_only, ssh_true_kex))  # fmt: skip
        cli_times = wall_times(runs, b.cli_probe)
        kex_times = wall_times(runs, lambda: b.ssh("true", options=same_kex))
        floor_import = wall_times(runs, lambda: b.python_process(FLOOR_IMPORT))
        floor_true = wall_times(runs, lambda: b.python_process(FLOOR_TRUE))
        cli = statistics.median(cli_times)
        rows.append(row("`detective-tui probe HOST --json` (process) vs `ssh host true`", cli,
                        ssh_true))  # fmt: skip
        for pick, how in ((statistics.median, "median"), (min, "fastest run")):
            kex = pick(kex_times)
            rows.append(row(f"`detective-tui probe HOST --json` (process) vs ssh, same kex, {how}",
                            pick(cli_times), kex, "≤1.3×"))  # fmt: skip
            rows.append(row(f"  floor: `python -c 'import asyncssh'`, {how}",
                            pick(floor_import), kex))  # fmt: skip
            rows.append(row(f"  floor: python + bare asyncssh `true`, {how}", pick(floor_true),
                            kex))  # fmt: skip
        if not fleet:
            return rows
        if torch_python and b.ssh(torch_python, "-c", "import torch").returncode == 0:
            collect = median_wall(
                runs, lambda: b.ssh(torch_python, "-m", "torch.utils.collect_env")
            )
            real = amedian_wall(runs, lambda: b.probe_real_once(torch_python))
            rows.append(row("probe of this machine + torch venv vs `PY -m torch.utils.collect_env`",
                            real, collect))  # fmt: skip
        else:
            rows.append("| probe vs collect_env: skipped, no interpreter with torch"
                        " (--torch-python) | | | | |")  # fmt: skip
        cpu0 = cpu_seconds()
        ours = amedian_wall(max(1, runs // 2), lambda: b.fleet_probe(fleet))
        cpu_ours = (cpu_seconds() - cpu0) / max(1, runs // 2)
        cpu0 = cpu_seconds()
        bare = amedian_wall(max(1, runs // 2), lambda: b.fleet_bare(fleet))
        cpu_bare = (cpu_seconds() - cpu0) / max(1, runs // 2)
        bare_probe = amedian_wall(max(1, runs // 2), lambda: b.fleet_bare_probe(fleet))
        rows.append(row(f"{fleet} hosts probed concurrently vs bare asyncssh `true` fan-out",
                        ours, bare, "≤1.2×"))  # fmt: skip
        rows.append(row(f"{fleet} hosts probed vs bare asyncssh fan-out of the same probe",
                        ours, bare_probe))  # fmt: skip
        rows.append(row(f"client CPU seconds, {fleet}-host probe vs bare fan-out", cpu_ours,
                        cpu_bare))  # fmt: skip
        return rows
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    parser.add_argument(
        "--fleet", type=int, default=100, help="hosts in the fleet figure (0: no fleet figures)"
    )
    parser.add_argument(
        "--smi-delay", type=float, nargs="+", default=[SMI_DELAY_S, 0.0],
        help="seconds the bench host's nvidia-smi stand-in waits per call, for NVML's "
        f"initialisation, one bench-host table each (default {SMI_DELAY_S} — an assumption, no "
        "measured figure exists here — and 0: NVML's start-up free)",
    )  # fmt: skip
    parser.add_argument(
        "--only", choices=("server", "tree"), help="only the bench host, or only the tree figures"
    )
    parser.add_argument(
        "--torch-python",
        default=str(VENV / "bin" / "python") if (VENV / "bin" / "python").exists() else None,
        help="an interpreter with torch for the collect_env figure (default: the tests' cached "
        "CPU-torch venv, when a slow test has built it)",
    )
    args = parser.parse_args()
    reason = sshd_available() or (bench_host_problem() if args.only != "tree" else None)
    if reason:
        raise SystemExit(f"cannot benchmark: {reason}")
    load_before = os.getloadavg()
    print(f"# detective-tui probe benchmark — {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in load_before)}, loopback sshd, median of {args.runs} "
          f"runs ({max(1, args.runs // 2)} for the fleet)\n")  # fmt: skip
    # the CLI process with bytecode, as an installed package has it (this environment may set
    # PYTHONDONTWRITEBYTECODE: the editable tui would be compiled from source on every run)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "tui", "probes"], cwd=REPO,
                   check=True)  # fmt: skip
    print("tui and probes compiled first (compileall): the CLI rows run with their bytecode\n")
    with tempfile.TemporaryDirectory(prefix="dt-bench-") as tmp:
        os.chmod(tmp, 0o755)  # the bench host's tree: its parents pass the probe's trust rule
        for delay in args.smi_delay if args.only != "tree" else ():
            work = Path(tmp) / f"smi-{delay}"
            work.mkdir()
            for line in measure_server(work, args.runs, delay):
                print(line, flush=True)
        if args.only != "server":
            print("\nthe reference tree (fake ct200 under a `root:` prefix, stand-ins run)\n")
            head = ("what".ljust(66), "ours s".rjust(8), "base s".rjust(8), "ratio".rjust(7))
            print(f"| {' | '.join(head)} | target |")
            print(f"|{'-' * 68}|{'-' * 10}|{'-' * 10}|{'-' * 9}|{'-' * 8}|")
            for line in measure(Path(tmp), "quiet", args.runs, args.fleet, args.torch_python):
                print(line, flush=True)
    after = os.getloadavg()
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in after)} — figures from a loaded "
          "machine are not comparable")  # fmt: skip


if __name__ == "__main__":
    main()
