"""The built-in demo fleet: simulated hosts that go through the real probe and diagnosis.

Each demo host is a fake host tree (``tui.demo.fakehost``) built once into the XDG cache dir
and probed by the local transport with the tree as root prefix — no GPU, no SSH. One more
host never answers (its transport is ``tui.demo.unreachable.NeverAnswers``), to show what
an unreachable host looks like.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from tui.core import locations
from tui.core.hosts import DEMO_SOURCE, Host
from tui.demo import fakehost, journal, neighbours
from tui.demo.unreachable import NeverAnswers

META = ".demo-host.json"  # in each built tree: the fake host's env and interpreters


@dataclass(frozen=True)
class DemoHost:
    name: str
    spec: Callable[[], fakehost.FakeHostSpec] | None  # None: never answers
    tags: tuple[str, ...]


# SYNTHETIC: the demo ct200's apt log — the run that took CUDA 13.0 away (its history's story:
# ``tui.demo.history``); the format is apt's history.log
CT200_APT_LOG = """\
Start-Date: 2026-11-30  03:10:12
Commandline: apt-get -y purge cuda-toolkit-13-0
Requested-By: admin (1000)
Purge: cuda-toolkit-13-0:amd64 (13.0.2-1)
End-Date: 2026-11-30  03:10:40
"""


def _ct200() -> fakehost.FakeHostSpec:
    """The reference case, with the apt log of how CUDA 13.0 left it."""
    spec = fakehost.reference_ct200()
    return replace(spec, files={**spec.files, "/var/log/apt/history.log": CT200_APT_LOG})


def _ct201() -> fakehost.FakeHostSpec:
    """The reference case the day after: CUDA 13.0 installed, but CUDA_HOME still on 12.8."""
    return replace(fakehost.reference_ct200(with_cuda13=True), hostname="ct201")


def _h100_visible() -> fakehost.FakeHostSpec:
    """cuda-visible-devices-selects-no-gpu: the H100 node's vLLM unit with
    CUDA_VISIBLE_DEVICES=4 on four GPUs, and its journal."""
    spec = replace(neighbours.visible_devices_server("4"), hostname="h100-visible")
    (proc,) = spec.processes
    log = journal.vllm_no_gpus_available(spec.hostname, proc.pid)
    return replace(spec, files={**spec.files, journal.journal_path("vllm.service"): log})


def _h100_stub() -> fakehost.FakeHostSpec:
    """libcuda-stub-on-library-path: the H100 node's vLLM unit with CUDA 12.8's lib64/stubs
    first on LD_LIBRARY_PATH, and its journal."""
    ld = "/usr/local/cuda-12.8/lib64/stubs:/usr/local/cuda-12.8/lib64"
    spec = replace(neighbours.stub_on_library_path(ld), hostname="h100-stub")
    (proc,) = spec.processes
    log = journal.vllm_stub_library(spec.hostname, proc.pid)
    return replace(spec, files={**spec.files, journal.journal_path("vllm.service"): log})


def _container_lost() -> fakehost.FakeHostSpec:
    """container-lost-gpu-access: the vLLM container whose device cgroup lost its GPUs, its
    server started by hand with its output in /var/log/vllm.log."""
    spec = replace(neighbours.container_lost_gpus(), hostname="vllm-ctr-lost")
    venv = spec.venvs[0].path
    server = fakehost.ProcessSpec(
        pid=7,
        argv=(f"{venv}/bin/python3", "-m", "vllm.entrypoints.openai.api_server"),
        environ={"PATH": f"{venv}/bin:/usr/bin:/bin", "HOME": "/root"},
        exe=f"{venv}/bin/python3",
        stdout="/var/log/vllm.log",
    )
    files = {**spec.files, "/var/log/vllm.log": journal.container_nvml_unknown_error()}
    return replace(spec, processes=(server,), files=files)


DEMO_HOSTS: tuple[DemoHost, ...] = (
    DemoHost("ct200", _ct200, ("demo", "blackwell", "sglang", "reference")),
    DemoHost("ct201", _ct201, ("demo", "blackwell", "sglang", "cuda13-installed")),
    DemoHost("h100-node", fakehost.healthy_h100, ("demo", "hopper")),
    DemoHost("b200-old-driver", fakehost.b200_old_driver, ("demo", "blackwell")),
    DemoHost("rtx5090-cu124", fakehost.rtx5090_cu124_torch, ("demo", "blackwell", "workstation")),
    DemoHost("no-driver", fakehost.no_driver, ("demo",)),
    DemoHost("pro6000-no-nvcc", neighbours.jit_without_nvcc, ("demo", "blackwell", "sglang")),
    DemoHost("h100-torchvision", neighbours.extension_for_other_torch, ("demo", "hopper")),
    DemoHost("h100-cpu-torch", neighbours.cpu_torch_on_gpus, ("demo", "hopper")),
    DemoHost("vllm-ctr-no-gpus", neighbours.container_without_gpus, ("demo", "container")),
    DemoHost("pro6000-mig", neighbours.mig_without_selection, ("demo", "blackwell", "mig")),
    DemoHost("pro6000-compat", neighbours.compat_over_driver, ("demo", "blackwell", "container")),
    DemoHost("spark-01", fakehost.gb10_triton_old_ptxas, ("demo", "blackwell", "vllm", "triton")),
    DemoHost("rtxpro-04", fakehost.nvrtc_shadowed_server, ("demo", "blackwell", "vllm", "ldpath")),
    # the fabric manager's package left behind by a driver upgrade; vLLM's journal says 802
    DemoHost("h200-hgx", neighbours.fabric_manager_stopped, ("demo", "hopper", "vllm", "nvswitch")),
    DemoHost("h100-visible", _h100_visible, ("demo", "hopper", "vllm")),
    DemoHost("h100-stub", _h100_stub, ("demo", "hopper", "vllm", "ldpath")),
    DemoHost("vllm-ctr-lost", _container_lost, ("demo", "hopper", "container")),
    DemoHost("gone-dark", None, ("demo",)),
)


def _digest(spec: fakehost.FakeHostSpec) -> str:
    """Changes whenever the preset, the fake-host builder, or the interpreter and checkout the
    trees' shims point at change, so stale trees rebuild."""
    package = Path(fakehost.__file__).parent
    builder = b"".join(p.read_bytes() for p in sorted(package.glob("*.py")))
    where = f"{sys.executable}\0{package.resolve()}".encode()
    return hashlib.sha256(repr(spec).encode() + builder + where).hexdigest()[:12]


def _tree(name: str, spec: fakehost.FakeHostSpec, base: Path) -> tuple[Path, dict]:
    """The built tree of one demo host and its meta (env, pythons), building it if needed.

    Built in a staging dir and renamed into place, so a half-built tree is never used and
    two processes starting at once do not trip over each other. The fake host's env and
    interpreters are host paths, so they stay valid after the rename.
    """
    dest = base / f"{name}-{_digest(spec)}"
    meta_file = dest / META
    if not meta_file.is_file():
        if dest.exists():  # damaged (its meta was removed): build it again
            shutil.rmtree(dest)
        base.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=base))
        try:
            fake = fakehost.build_fake_host(staging / "root", spec)
            meta = {"env": dict(fake.env), "pythons": list(fake.pythons)}
            (staging / "root" / META).write_text(json.dumps(meta), encoding="utf-8")
            try:
                os.rename(staging / "root", dest)
            except OSError:
                if not meta_file.is_file():  # not a concurrent build that won: a real error
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return dest, json.loads(meta_file.read_text(encoding="utf-8"))


def demo_host(
    name: str, spec: fakehost.FakeHostSpec, tags: tuple[str, ...], cache_dir: Path | None = None
) -> Host:
    """A demo host probing the tree of ``spec`` (built on first use)."""
    root, meta = _tree(name, spec, (cache_dir or locations.cache_dir()) / "demo")
    return Host(
        name=name,
        local=True,
        root=str(root),
        env=meta["env"],
        python=tuple(meta["pythons"]),
        tags=tags,
        source=DEMO_SOURCE,
        standins=fakehost.standins(root),
    )


def demo_fleet(cache_dir: Path | None = None, copies: int = 1) -> tuple[Host, ...]:
    """The demo hosts, building their trees on first use.

    ``copies`` > 1 repeats the fleet under numbered names (``ct200-07``) sharing the same
    trees — the benchmark probes 100 hosts this way.
    """
    hosts: list[Host] = []
    for entry in DEMO_HOSTS:
        if entry.spec is None:
            hosts.append(
                Host(name=entry.name, transport=NeverAnswers, tags=entry.tags, source=DEMO_SOURCE)
            )
            continue
        hosts.append(demo_host(entry.name, entry.spec(), entry.tags, cache_dir))
    if copies <= 1:
        return tuple(hosts)
    width = len(str(copies))
    return tuple(
        replace(h, name=f"{h.name}-{i:0{width}d}") for i in range(1, copies + 1) for h in hosts
    )
