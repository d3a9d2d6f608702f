"""The probe's ``probe_changes`` and pyfacts' ``report_install`` on a fake host tree: the tails
of dpkg.log and dnf.rpm.log (CUDA/NVIDIA lines only), apt's history.log, the kernel module's
and the JIT cache's times, a serving process's start, and who installed each distribution."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from fakehost_runs import run_probe

from tui.demo import fakehost
from tui.demo.fleet import CT200_APT_LOG

# the formats of the real logs (this machine's dpkg.log; dnf's CI scenarios for dnf.rpm.log),
# with NVIDIA/CUDA packages in them (SYNTHETIC versions)
DPKG_LOG = """\
2026-11-30 03:12:45 upgrade libnvidia-compute-580:amd64 580.95.05-0ubuntu1 580.105.08-0ubuntu1
2026-11-30 03:12:45 status half-configured libnvidia-compute-580:amd64 580.105.08-0ubuntu1
2026-11-30 03:12:46 upgrade libudev1:amd64 252.36-1~deb12u1 252.38-1~deb12u1
"""
RPM_LOG = """\
2026-11-30T03:12:45+0000 INFO --- logging initialized ---
2026-11-30T03:12:45+0000 SUBDEBUG Upgrade: cuda-toolkit-12-8-12.8.93-1.x86_64
2026-11-30T03:12:46+0000 SUBDEBUG Upgraded: cuda-toolkit-12-8-12.8.61-1.x86_64
2026-11-30T03:12:47+0000 SUBDEBUG Upgrade: flac-1.3.3-3.fc29.x86_64
"""
BTIME = 1_764_000_000
START_TICKS = 12_345_600  # 123456 s after boot at 100 ticks a second
MODULE_TIME = 1_764_100_000


def _stat_line(pid: int) -> str:
    fields = ["S", "1", str(pid), str(pid), "0", "-1", "4194560"] + ["0"] * 12
    fields += [str(START_TICKS)] + ["0"] * 30
    return f"{pid} (python3 -m x) " + " ".join(fields) + "\n"


def test_probe_reads_what_the_host_logged(tmp_path: Path) -> None:
    spec = fakehost.reference_ct200()
    files = {
        **spec.files,
        "/var/log/apt/history.log": CT200_APT_LOG,
        "/var/log/dpkg.log": DPKG_LOG,
        "/var/log/dnf.rpm.log": RPM_LOG,
        "/proc/stat": f"cpu  1 2 3 4\nbtime {BTIME}\n",
        "/proc/4242/stat": _stat_line(4242),
        "/sys/module/nvidia/version": "580.95.05\n",
    }
    fake = fakehost.build_fake_host(tmp_path / "root", replace(spec, files=files))
    os.utime(fake.root / "sys/module/nvidia", (MODULE_TIME, MODULE_TIME))
    facts, _ = run_probe(fake)
    changes = facts.changes
    events = [(e.source, e.action, e.package, e.before, e.after) for e in changes.packages]
    assert events == [
        ("apt history.log", "purge", "cuda-toolkit-13-0", "13.0.2-1", None),
        (
            "dpkg.log",
            "upgrade",
            "libnvidia-compute-580",
            "580.95.05-0ubuntu1",
            "580.105.08-0ubuntu1",
        ),
        ("dnf.rpm.log", "upgrade", "cuda-toolkit-12-8", "12.8.61-1", "12.8.93-1"),
    ]
    assert changes.packages[0].by == "apt-get -y purge cuda-toolkit-13-0 (admin (1000))"
    assert changes.module_loaded_at == MODULE_TIME
    assert [j.path for j in changes.jit_cache] == ["/root/.cache/flashinfer/0.6.8"]
    (start,) = changes.starts
    assert (start.pid, start.unit, start.started_at) == (4242, "sglang.service", BTIME + 123456)
    assert start.restarts is None  # systemctl is never run under a root prefix
    py = facts.pythons[0]
    torch = next(i for i in py.installs if i.name == "torch")
    assert (torch.version, torch.installer) == ("2.9.1", "pip") and torch.mtime
