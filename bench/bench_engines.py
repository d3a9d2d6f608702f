"""Benchmark: detective-tui's own fan-out against Ansible and ClusterShell, and ``ingest``.

    .venv/bin/python bench/bench_engines.py [--hosts 20] [--runs 3] [--ingest 1000]
        [--ingest-only] [--before REV]

One loopback sshd, N ssh aliases of it, the reference fake host as every host's root. Side by
side in one run (alternating, median of --runs): ``Session.probe_many`` over the N hosts;
``ansible all -m script probe.sh`` (forks 50); ``clush -f 64 --outdir``; each running the same
standalone probe. Then ``ingest`` of --ingest captured outputs (the standalone probe's real
output, copied under that many names), each run in a fresh interpreter: parsing alone
(``tui.core.run.ingest.ingest``, timed inside the process) and the whole ``detective-tui ingest
DIR --json`` process (diagnosis, redacted JSON, transcript), wall and CPU seconds; with
``--before REV`` the code of git revision REV (extracted to a temporary directory) runs through
the same harness, alternating with this tree. ``--ingest-only`` skips the engines (no sshd or
engine venv needed). Goals (issue 11): own fan-out ≥ 2× faster than Ansible, no slower than
clush; ingest of 1,000 outputs < 2 s; client RSS < 200 MB. Engines come from the tests' cache
venv (ansible-core, ClusterShell from the package index). Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from engines_venv import engines_bin  # noqa: E402
from sshd import SSHD, sshd_available, start_sshd  # noqa: E402

from tui.core.hosts import Host  # noqa: E402
from tui.core.reach.standalone import standalone_probe  # noqa: E402
from tui.core.run.runner import Session  # noqa: E402
from tui.demo.fakehost import FakeHost, build_fake_host, reference_ct200  # noqa: E402


class Bench:
    def __init__(self, work: Path, server: SSHD, fake: FakeHost, n: int) -> None:
        self.work, self.fake, self.n = work, fake, n
        self.names = [f"h{i:04d}" for i in range(1, n + 1)]
        self.known = work / "known_hosts"
        self.known.write_text(server.host_key_line + "\n")
        self.config = work / "ssh_config"
        self.config.write_text(
            f"Host {' '.join(self.names)}\n  HostName 127.0.0.1\n  Port {server.port}\n"
            f"  User root\n  IdentityFile {server.client_key}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {self.known}\n  StrictHostKeyChecking yes\n  BatchMode yes\n"
        )
        self.script = work / "probe.sh"
        self.script.write_text(
            standalone_probe(
                host=None,
                env=fake.env,
                pythons=fake.pythons,
                root=str(fake.root),
                step_timeout_s=10,
                deadline_s=120,
            )
        )
        bin_dir = engines_bin()
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "ANSIBLE_HOME": str(work / "ansible-home"),
            "ANSIBLE_LOCAL_TEMP": str(work / "ansible-tmp"),
        }
        self.inventory = work / "inventory.ini"
        args = f"ansible_ssh_common_args='-F {self.config}' ansible_ssh_use_tty=false"
        self.inventory.write_text("".join(f"{h} {args}\n" for h in self.names))

    def own(self) -> None:
        hosts = [
            Host(name=h, ssh=h, root=str(self.fake.root), env=self.fake.env,
                 python=self.fake.pythons)
            for h in self.names
        ]  # fmt: skip

        async def go() -> None:
            async with Session(known_hosts=self.known, ssh_config=self.config) as s:
                results = await s.probe_many(hosts)
            bad = [r.error for r in results if r.error]
            assert not bad, bad[:3]

        asyncio.run(go())

    def ansible(self) -> None:
        subprocess.run(
            ["ansible", "all", "-i", str(self.inventory), "-f", "50", "-m", "script",
             "-a", str(self.script)],
            env=self.env, check=True, capture_output=True, timeout=1800,
        )  # fmt: skip

    def clush(self) -> None:
        out = Path(tempfile.mkdtemp(dir=self.work))
        with open(self.script) as stdin:
            subprocess.run(
                ["clush", "-f", "64", "-w", ",".join(self.names), "-o", f"-F {self.config}",
                 "--outdir", str(out), "sh", "-s"],
                env=self.env, check=True, capture_output=True, timeout=1800, stdin=stdin,
            )  # fmt: skip


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _extract(rev: str, dest: Path) -> Path:
    """The files of git revision ``rev`` under ``dest``; exits with a message if unknown."""
    check = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", "--short", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if check.returncode != 0:
        sys.exit(f"bench_engines: --before {rev!r} is not a commit of {REPO}")
    archive = dest / "before.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "-C", str(REPO), "archive", rev], stdout=f, check=True)
    tree = dest / "before"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


# run in a fresh interpreter with TREE first on sys.path: parse DIR once to warm the page cache
# and the imports, then time ingest() of DIR; prints {"wall": s, "cpu": s}
_PARSE = """import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from tui.core.run.ingest import ingest
ingest([Path(sys.argv[2])])
wall, cpu = time.perf_counter(), time.process_time()
done = ingest([Path(sys.argv[2])])
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                  "hosts": len(done.results)}))
"""
# the whole CLI process of TREE: detective-tui ingest DIR --json; its peak RSS (KiB) to $BENCH_RSS
_CLI = """import os, resource, sys
sys.path.insert(0, sys.argv.pop(1))
from tui.cli import main
code = main()
with open(os.environ["BENCH_RSS"], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
sys.exit(code)
"""


def _parse_run(tree: Path, captured: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _PARSE, str(tree), str(captured)],
        capture_output=True, text=True, check=True, timeout=1800,
    )  # fmt: skip
    return json.loads(out.stdout.splitlines()[-1])


def _cli_run(tree: Path, captured: Path, state: Path) -> dict[str, float]:
    """Exit status 1 (a critical finding) is what the reference host gives."""
    state.mkdir(exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    with open(os.devnull, "w") as sink:
        subprocess.run(
            [sys.executable, "-c", _CLI, str(tree), "ingest", str(captured), "--json"],
            stdout=sink, stderr=sink, timeout=3600,
            env={**os.environ, "XDG_STATE_HOME": str(state), "BENCH_RSS": str(state / "rss")},
        )  # fmt: skip
    took = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"wall": took, "cpu": cpu, "rss_mb": int((state / "rss").read_text()) / 1024}


def _ingest_bench(args: argparse.Namespace, work: Path, output: bytes) -> None:
    captured = work / "captured"
    captured.mkdir()
    for i in range(args.ingest):
        (captured / f"gpu{i:05d}").write_bytes(output)
    sides = [("this tree", REPO)]
    if args.before:
        sides.insert(0, (f"before {args.before}", _extract(args.before, work)))
    width = max(len(label) for label, _ in sides)
    print(f"ingest of {args.ingest} captured outputs ({len(output)} bytes each), "
          f"{args.runs} run(s) per side{', alternating' if args.before else ''}, "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    runs: dict[str, dict[str, list[float]]] = {label: {} for label, _ in sides}
    for i in range(args.runs):
        for label, tree in sides:
            load = os.getloadavg()[0]
            parse = _parse_run(tree, captured)
            cli = _cli_run(tree, captured, work / "state")
            for key, value in (
                ("parse wall", parse["wall"]),
                ("parse cpu", parse["cpu"]),
                ("cli wall", cli["wall"]),
                ("cli cpu", cli["cpu"]),
                ("cli rss", cli["rss_mb"]),
            ):
                runs[label].setdefault(key, []).append(value)
            print(f"  {label:<{width}}  run {i + 1}  load {load:4.1f}  "
                  f"parse {parse['wall']:6.2f} s (cpu {parse['cpu']:6.2f})  "
                  f"detective-tui ingest --json {cli['wall']:6.2f} s (cpu {cli['cpu']:6.2f}, "
                  f"peak RSS {cli['rss_mb']:.0f} MB)", flush=True)  # fmt: skip
    print(f"  medians (goal: ingest of 1,000 outputs < 2 s), load {os.getloadavg()[0]:.1f} at end:")
    med = {label: {k: statistics.median(v) for k, v in r.items()} for label, r in runs.items()}
    for label, m in med.items():
        print(f"  {label:<{width}}  parse {m['parse wall']:6.2f} s (cpu {m['parse cpu']:6.2f})  "
              f"whole ingest --json {m['cli wall']:6.2f} s (cpu {m['cli cpu']:6.2f}, "
              f"peak RSS {m['cli rss']:.0f} MB)")  # fmt: skip
    if args.before:
        old, new = med[sides[0][0]], med["this tree"]
        keys = ("parse wall", "parse cpu", "cli wall", "cli cpu", "cli rss")
        print("  this tree / before: " + "  ".join(f"{k} {new[k] / old[k]:.2f}×" for k in keys))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=20, help="loopback hosts per engine run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ingest", type=int, default=1000, help="captured outputs to ingest")
    parser.add_argument("--ingest-only", action="store_true", help="skip the engines")
    parser.add_argument("--before", metavar="REV", help="also run ingest of git revision REV")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        fake = build_fake_host(work / "tree", reference_ct200())
        script = work / "probe.sh"
        script.write_text(
            standalone_probe(host=None, env=fake.env, pythons=fake.pythons, root=str(fake.root),
                             step_timeout_s=10, deadline_s=120)
        )  # fmt: skip
        output = subprocess.run(
            ["sh", str(script)], capture_output=True, check=True, timeout=120
        ).stdout
        if not args.ingest_only:
            _engines(args, work, fake)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"  peak RSS of this process (own fan-out) {rss:.0f} MB (goal < 200 MB)")
        _ingest_bench(args, work, output)


def _engines(args: argparse.Namespace, work: Path, fake: FakeHost) -> None:
    problem = sshd_available()
    if problem:
        sys.exit(f"no loopback sshd: {problem}")
    server = start_sshd(
        work / "sshd", extra=f"SetEnv HOME={work}\nMaxStartups {args.hosts * 2}\nMaxSessions 20\n"
    )
    try:
        bench = Bench(work, server, fake, args.hosts)
        times: dict[str, list[float]] = {"own": [], "ansible": [], "clush": []}
        for _ in range(args.runs):
            for name in times:
                times[name].append(timed(getattr(bench, name)))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{args.hosts} loopback hosts, median of {args.runs} runs, load "
              f"{os.getloadavg()[0]:.1f}")  # fmt: skip
        print(f"  own fan-out            {med['own']:7.2f} s")
        print(f"  ansible -m script -f50 {med['ansible']:7.2f} s  "
              f"ansible/own = {med['ansible'] / med['own']:.2f}× (goal ≥ 2×)")  # fmt: skip
        print(f"  clush -f 64 --outdir   {med['clush']:7.2f} s  "
              f"own/clush = {med['own'] / med['clush']:.2f}× (goal ≤ 1×)")  # fmt: skip
    finally:
        server.stop()


if __name__ == "__main__":
    main()
