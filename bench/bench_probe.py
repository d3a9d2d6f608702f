"""Benchmark: the probe against a loopback sshd, side by side with its baselines in one run.

    .venv/bin/python bench/bench_probe.py [--runs 5] [--fleet 100]

Measures, for a remote account whose shell rc files do no work ("quiet") and one whose
``.bashrc`` does (sleeps 0.05 s and runs a few subprocesses, "busy"):
- one host: our probe of the reference fake host (a fresh connection each run, so connect +
  auth + probe) as a ratio to OpenSSH's ``ssh host true`` (target ≤ 1.3×), and to
  ``PY -m torch.utils.collect_env`` over the same ssh (PY: ``--torch-python``, by default the
  tests' cached CPU-torch venv when it exists), the probe then inspecting PY as well;
- the end-to-end CLI (``detective-tui probe HOST --json``: the whole process, Python start-up
  included) against ``ssh host true`` at the same key exchange (target ≤ 1.3×), beside the floor
  any asyncssh client process has: Python start-up + ``import asyncssh``, and a bare asyncssh
  ``true`` in a fresh process (where that floor alone passes 1.3×, the target cannot be met);
- a fleet of N inventory hosts (all this loopback sshd) probed concurrently, as a ratio to a
  bare asyncssh fan-out of ``true`` to the same N hosts (target ≤ 1.2×), with client CPU seconds.
The negotiated key exchange is printed for both clients. Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
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
BUSY_BASHRC = "sleep 0.05\n/bin/true; /bin/true; /bin/true\nexport BUSY_RC=$(date +%s)\n"
ACCOUNTS = {"quiet": "", "busy": BUSY_BASHRC}


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
    def __init__(self, work: Path, server: SSHD, account: str) -> None:
        self.server = server
        self.account = account
        self.ssh_config, self.known_hosts = server.write_client_files(work / f"client-{account}")
        self.ssh_argv = [
            "ssh", "-F", str(self.ssh_config), "-o", f"UserKnownHostsFile={self.known_hosts}",
            "-o", "BatchMode=yes", "-o", "ControlMaster=no", "-o", "ControlPath=none", "fakehost",
        ]  # fmt: skip
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

    def ssh(self, *command: str, options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        # ssh joins its arguments with spaces into one remote command line: quote them
        argv = [*self.ssh_argv[:-1], *options, self.ssh_argv[-1], shlex.join(command)]
        return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)

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


_FORK = re.compile(r"^(?:clone3?|v?fork)\(.*\) += (\d+)$")
_EXEC = re.compile(r'^execve\("([^"]*)",.*\) += 0$')


def execve_counts(logs: dict[str, str], tree_root: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Successful execve per program name in ``strace -ff`` logs (pid → its log): those of the
    probe itself, and those the fake host's stand-ins (programs under ``tree_root``, such as its
    ``nvidia-smi`` script) start in turn — a real host's binaries start none of these."""
    parent = {
        child.group(1): pid
        for pid, log in logs.items()
        for child in map(_FORK.match, log.splitlines())
        if child
    }
    standins = {
        pid
        for pid, log in logs.items()
        for run in map(_EXEC.match, log.splitlines())
        if run and run.group(1).startswith(f"{tree_root}/")
    }
    own: dict[str, int] = {}
    theirs: dict[str, int] = {}
    for pid, log in logs.items():
        up, by_standin = parent.get(pid), False
        while up is not None and not by_standin:
            by_standin, up = up in standins, parent.get(up)
        counts = theirs if by_standin else own
        for run in map(_EXEC.match, log.splitlines()):
            if run:
                name = run.group(1).rsplit("/", 1)[-1]
                counts[name] = counts.get(name, 0) + 1
    return own, theirs


def process_count(tree_root: Path, env: dict[str, str]) -> str:
    """The processes one probe of the reference host starts (``strace -f``, successful execve),
    most frequent first, apart from those its stand-ins start; the target is ≤ 15."""
    strace = shutil.which("strace")
    if strace is None:
        return "| processes per probe: skipped, strace is not installed | | | | |"
    with tempfile.TemporaryDirectory(prefix="dt-strace-") as tmp:
        log = Path(tmp) / "execve"
        subprocess.run(
            [strace, "-ff", "-qq", "-e", "trace=execve,clone,clone3,fork,vfork", "-o", str(log),
             "sh", "-s"],
            input=probe_script(), text=True, capture_output=True, check=False,
            env={**os.environ, "SHELL": "/bin/sh", **env},
        )  # fmt: skip
        logs = {f.suffix[1:]: f.read_text() for f in Path(tmp).glob("execve.*")}
        own, theirs = execve_counts(logs, tree_root)

    def top(names: dict[str, int]) -> str:
        ranked = sorted(names.items(), key=lambda kv: -kv[1])
        return ", ".join(f"{n} ×{c}" for n, c in ranked[:8])

    label = (
        f"processes per probe of {tree_root.name} (strace -ff): **{sum(own.values())}** — "
        f"{top(own)}; its stand-ins start {sum(theirs.values())} more ({top(theirs) or 'none'})"
    )
    return f"| {label} | | | | ≤15 |"


def row(label: str, ours: float, base: float, target: str = "") -> str:
    return f"| {label:<66} | {ours:8.3f} | {base:8.3f} | {ours / base:6.2f}× | {target:>6} |"


def measure(
    work: Path, account: str, rc: str, runs: int, fleet: int, torch_python: str | None
) -> list[str]:
    home = work / f"home-{account}"
    home.mkdir()
    (home / ".bashrc").write_text(rc)
    (home / ".profile").write_text('[ -f "$HOME/.bashrc" ] && . "$HOME/.bashrc"\n')
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
        "--torch-python",
        default=str(VENV / "bin" / "python") if (VENV / "bin" / "python").exists() else None,
        help="an interpreter with torch for the collect_env figure (default: the tests' cached "
        "CPU-torch venv, when a slow test has built it)",
    )
    args = parser.parse_args()
    reason = sshd_available()
    if reason:
        raise SystemExit(f"cannot benchmark: {reason}")
    print(f"# detective-tui probe benchmark — {os.cpu_count()} CPUs, loopback sshd, "
          f"median of {args.runs} runs ({max(1, args.runs // 2)} for the fleet)\n")  # fmt: skip
    print(f"| {'what':<66} | {'ours s':>8} | {'base s':>8} | {'ratio':>7} | {'target':>6} |")
    print(f"|{'-' * 68}|{'-' * 10}|{'-' * 10}|{'-' * 9}|{'-' * 8}|")
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="dt-bench-") as tmp:
        for account, rc in ACCOUNTS.items():
            for line in measure(Path(tmp), account, rc, args.runs, args.fleet, args.torch_python):
                print(line, flush=True)
    print(f"\nload average (1 min) before/after: {load_before:.2f} / {os.getloadavg()[0]:.2f}"
          " — figures from a loaded machine are not comparable")  # fmt: skip


if __name__ == "__main__":
    main()
