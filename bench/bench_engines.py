"""Benchmark: detective-tui's own fan-out against Ansible and ClusterShell, and ``ingest``.

    .venv/bin/python bench/bench_engines.py [--hosts 20] [--runs 3] [--ingest 1000]

One loopback sshd, N ssh aliases of it, the reference fake host as every host's root. Side by
side in one run (alternating, median of --runs): ``Session.probe_many`` over the N hosts;
``ansible all -m script probe.sh`` (forks 50); ``clush -f 64 --outdir``; each running the same
standalone probe. Then ``ingest`` of --ingest captured outputs (one real output copied under
that many names) and this process's peak RSS. Goals (issue 11): own fan-out ≥ 2× faster than
Ansible, no slower than clush; ingest of 1,000 outputs < 2 s; client RSS < 200 MB. Engines come
from the tests' cache venv (ansible-core, ClusterShell from the package index). Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from engines_venv import engines_bin  # noqa: E402
from sshd import SSHD, sshd_available, start_sshd  # noqa: E402

from tui.core.hosts import Host  # noqa: E402
from tui.core.ingest import ingest  # noqa: E402
from tui.core.runner import Session  # noqa: E402
from tui.core.standalone import standalone_probe  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=20, help="loopback hosts per engine run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ingest", type=int, default=1000, help="captured outputs to ingest")
    args = parser.parse_args()
    problem = sshd_available()
    if problem:
        sys.exit(f"no loopback sshd: {problem}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        fake = build_fake_host(work / "tree", reference_ct200())
        server = start_sshd(
            work / "sshd",
            extra=f"SetEnv HOME={work}\nMaxStartups {args.hosts * 2}\nMaxSessions 20\n",
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
            output = subprocess.run(
                ["sh", str(bench.script)], capture_output=True, check=True, timeout=120
            ).stdout
        finally:
            server.stop()
        captured = work / "captured"
        captured.mkdir()
        for i in range(args.ingest):
            (captured / f"gpu{i:05d}").write_bytes(output)
        start = time.perf_counter()
        done = ingest([captured])
        took = time.perf_counter() - start
        assert len(done.results) == args.ingest
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"  ingest of {args.ingest} outputs {took:7.2f} s (goal < 2 s for 1,000)")
        print(f"  peak RSS of this process {rss:.0f} MB (goal < 200 MB)")


if __name__ == "__main__":
    main()
