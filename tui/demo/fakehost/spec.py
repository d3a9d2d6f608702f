"""Fake GPU hosts, the spec: plain data saying what a fake host's tree holds, and the
captured outputs (``tui/demo/fixtures``) its shims print."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from tui.core.facts.gpu_state import STATE_FIELDS

DEMO_PACKAGE = "tui.demo"  # the fixtures and captures are its data
FIXTURES = "fixtures"
CAPTURES = "captures"  # outputs captured by this project's slow tests (captures/README.md)
SMI_QUERY_ARGS = "--query-gpu=index,name,compute_cap,memory.total,uuid --format=csv,noheader"
SMI_STATE_ARGS = f"--query-gpu={STATE_FIELDS} --format=csv,noheader,nounits"
SMI_FABRIC_ARGS = "--query-gpu=index,fabric.state,fabric.status --format=csv,noheader"
# the probe's one call for all three (SMI_ALL in probes/probe.sh)
SMI_ALL_ARGS = (
    "--query-gpu=index,name,compute_cap,memory.total,uuid,utilization.gpu,memory.used,"
    "temperature.gpu,fabric.state,fabric.status --format=csv,noheader"
)
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# DriverSpec.failure → (what nvidia-smi prints for the table, -L and --query-gpu; exit status).
# Real captures except the mismatch exit status, which is unverified (fixtures README).
SMI_FAILURES: Mapping[str, tuple[Mapping[str, str], int]] = {
    "not-loaded": (
        {
            "table": "nvidia-smi/nvidia-smi-550.163.01-no-kernel-driver.txt",
            "list": "nvidia-smi/nvidia-smi-550.163.01-no-kernel-driver-L.txt",
            "query": "nvidia-smi/nvidia-smi-550.163.01-no-kernel-driver-query-gpu.txt",
        },
        9,
    ),
    "no-nvml": (
        dict.fromkeys(
            ("table", "list", "query"), "nvidia-smi/nvidia-smi-550.163.01-no-libnvidia-ml.txt"
        ),
        12,
    ),
    "version-mismatch": (
        dict.fromkeys(
            ("table", "list", "query"),
            "nvidia-smi/nvidia-smi-driver-library-version-mismatch-580.159.txt",
        ),
        18,
    ),
}
# DriverSpec.failure → (the one line nvidia-smi prints for every call, exit status), quoted from
# public threads where no capture exists: NVIDIA/nvidia-docker#1671 (a container whose device
# cgroup lost the GPUs; exit status 255 as reported there)
QUOTED_SMI_FAILURES: Mapping[str, tuple[str, int]] = {
    "nvml-unknown-error": ("Failed to initialize NVML: Unknown Error\n", 255),
}
# /proc/driver/nvidia/version in the open-module layout of the fixture, for drivers we have no
# capture of (the build line and date are those of the 580.95.05 capture).
PROC_VERSION_TEMPLATE = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {version}  Release Build  "
    "(dvs-builder@U22-I3-B17-02-5)  Tue Sep 23 09:55:41 UTC 2025\n"
    "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04.2) \n"
)


def fixture_text(name: str) -> str:
    """A fixture shipped with the package, e.g. ``"nvcc/nvcc-12.8.93.txt"``; a name starting
    with ``captures/`` is one of this project's own captures."""
    if name.startswith(CAPTURES + "/"):
        return resources.files(DEMO_PACKAGE).joinpath(name).read_text(encoding="utf-8")
    return resources.files(DEMO_PACKAGE).joinpath(FIXTURES, name).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------
# the spec (data)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GpuSpec:
    name: str
    compute_cap: str | None  # None prints [N/A] (the probe then uses the name table)
    memory_mib: int | None
    mig: tuple[str, ...] = ()  # MIG device profiles ("1g.24gb") listed by nvidia-smi -L


@dataclass(frozen=True)
class DriverSpec:
    """What nvidia-smi prints. ``failure`` picks a real failure text instead of the table."""

    table_fixture: str | None = None  # nvidia-smi/… default table
    proc_version: str | None = None  # "580.95.05"; None: /proc/driver/nvidia/version absent
    proc_fixture: str | None = None  # a captured proc file to use verbatim
    failure: str | None = None  # a key of SMI_FAILURES or QUOTED_SMI_FAILURES
    hang: bool = False  # nvidia-smi sleeps forever (the probe's step deadline must hit)
    query_unsupported: bool = False  # an old nvidia-smi that rejects the compute_cap field
    installed: bool = True  # False: no nvidia-smi binary at all
    # every GPU's (fabric.state, fabric.status): ("In Progress", "N/A") as on the HGX node of
    # NVIDIA/gpu-operator#2511; None: ("N/A", "N/A"), a GPU in no NVLink fabric (SYNTHETIC)
    fabric: tuple[str, str] | None = None


@dataclass(frozen=True)
class ToolkitSpec:
    home: str  # "/usr/local/cuda-12.8"
    nvcc_fixture: str  # "nvcc/nvcc-12.8.93.txt"
    toolkit_cuda: str  # toolkit release for version.json, "12.8.1"
    list_gpu_arch_fixture: str | None = None
    executable: bool = True  # False: bin/nvcc has mode 0644
    runtime_only: bool = False  # a CUDA runtime image's tree: lib64/libcudart, no bin/nvcc
    ptxas_fixture: str | None = None  # bin/ptxas printing this `--version` output
    header_fixture: str | None = None  # include/cuda_runtime_api.h (its CUDART_VERSION lines)


@dataclass(frozen=True)
class WrapperSpec:
    """A shell-script nvcc that execs another (``/usr/local/bin/nvcc``, Debian's ``/usr/bin``)."""

    path: str
    target: str
    text: str | None = None  # verbatim script; default: ``exec <target> "$@"``


@dataclass(frozen=True)
class VenvSpec:
    path: str  # "/root/venv_sglang211"
    dists: tuple[tuple[str, str], ...] = ()  # (dist-info name, version): ("torch", "2.9.1")
    torch_version_py: str | None = None  # fixture name of torch/version.py
    torch_version: str | None = None  # rewrite __version__ in that file (see reference_ct200)
    torch_arch_flags: str | None = None  # the get_arch_list() string in libtorch_python.so
    # the string merged into the tail of another, as the linker left it in torch 2.8/2.9
    # ("…std::string ipc_hsm_70 sm_75 …")
    torch_arch_merged: bool = False
    flashinfer: str | None = None  # writes flashinfer/_build_meta.py and its dist-info
    pip_nvcc_fixture: str | None = None  # nvidia/cu13/bin/nvcc printing this fixture
    requires: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # dist → Requires-Dist
    records: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # dist → RECORD paths
    # more files under site-packages: text, or a Path on this machine to link to (real .so files)
    site_files: Mapping[str, str | Path] = field(default_factory=dict)
    # triton/backends/nvidia/bin/<name> printing <fixture> for --version: ((name, fixture), …)
    triton_ptxas: tuple[tuple[str, str], ...] = ()
    triton_ptxas_runs: bool = True  # False: the binaries cannot run here (mode 0644, ELF junk)
    nvidia_libs: tuple[str, ...] = ()  # CUDA libraries of nvidia-* wheels, under site-packages
    pip_header_fixture: str | None = None  # nvidia/cu13/include/cuda_runtime_api.h

    @property
    def python(self) -> str:
        return posixpath.join(self.path, "bin", "python3")


@dataclass(frozen=True)
class ProcessSpec:
    pid: int
    argv: tuple[str | bytes, ...]  # exactly as in /proc/PID/cmdline (bytes: not UTF-8 text)
    environ: Mapping[str, str]
    exe: str  # what /proc/PID/exe points to (a host path; need not exist in the tree)
    unit: str | None = None  # systemd service named in /proc/PID/cgroup
    environ_readable: bool = True
    ppid: int = 1
    mapped: tuple[str, ...] = ()  # files in /proc/PID/maps (host paths), in /proc's own layout
    gpu_memory_mib: int = 0  # > 0: listed in nvidia-smi's Processes (SYNTHETIC)
    gpu_index: int | None = None  # the GPU it holds memory on (None: every GPU)
    # a host path /proc/PID/fd/1 and 2 lead to (started with `> FILE 2>&1`); None: no fd dir
    stdout: str | None = None
    # "docker <64 hex>", "podman <id>" or "crictl <id>" (a Kubernetes pod's container under
    # containerd): the container it runs in (its cgroup says so), whose log the tree's
    # usr/bin/<engine> stand-in prints (tui.demo.container_logs)
    container: str | None = None


@dataclass(frozen=True)
class FakeHostSpec:
    hostname: str
    os_release: str
    gpus: tuple[GpuSpec, ...]
    driver: DriverSpec
    toolkits: tuple[ToolkitSpec, ...] = ()
    usr_local_cuda: str | None = None  # link target, e.g. "/usr/local/cuda-12.8"
    wrappers: tuple[WrapperSpec, ...] = ()
    venvs: tuple[VenvSpec, ...] = ()
    inventory_pythons: tuple[str, ...] = ()  # default: every venv's bin/python3
    processes: tuple[ProcessSpec, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # the SSH session's variables
    files: Mapping[str, str] = field(default_factory=dict)  # more files: unit files, profiles
    # unit → {EnvironmentFile= value as written ("-" prefix allowed): the file's text, or None
    # for no such file}; the lines go first in the unit file's [Service] section
    unit_env_files: Mapping[str, Mapping[str, str | None]] = field(default_factory=dict)
    jit_cache_dirs: tuple[str, ...] = ()  # FlashInfer workspaces to create (host paths)
    # versioned library files (…/libnvrtc.so.12.4.127), each with its soname link beside it
    lib_files: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()  # (link, target): more symlinks (…/lib64 → …)


@dataclass(frozen=True)
class FakeHost:
    root: Path
    env: dict[str, str]  # the SSH-session env (PATH, CUDA_HOME…) as host paths
    pythons: tuple[str, ...]  # inventory interpreters (host paths)

    @property
    def standins(self) -> dict[str, str]:
        """The machine tools this builder made for the tree (``Host.standins``)."""
        return standins(self.root)


def in_tree(root: Path, host_path: str) -> Path:
    """Where the absolute host path ``host_path`` is in the tree at ``root``."""
    if not host_path.startswith("/"):
        raise ValueError(f"fake host paths must be absolute: {host_path!r}")
    return root / host_path.lstrip("/")


def standins(root: Path) -> dict[str, str]:
    """The stand-ins of a tree this module built: its fake ``systemctl`` and ``journalctl``."""
    return {tool: str(in_tree(root, f"/usr/bin/{tool}")) for tool in ("systemctl", "journalctl")}
