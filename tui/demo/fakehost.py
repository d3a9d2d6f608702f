"""Fake GPU hosts: directory trees that the real probe inspects through its root prefix.

A fake host is a temp dir holding what the probe looks at — ``usr/bin/nvidia-smi`` and
``…/bin/nvcc`` shims that print real captured outputs (``tui/demo/fixtures/``, copies of
``shared/fixtures/``), toolkit trees with ``version.json``, venv-like trees whose
``bin/python3`` links to this machine's interpreter (so the probe's stdlib snippet runs) with
``torch/version.py`` and ``*.dist-info/METADATA`` files, ``proc/<pid>/…`` of a serving
process, ``proc/driver/nvidia/version``, ``etc/os-release``, unit files and profile files.
Every tree carries ``run/systemd/system`` and a ``usr/bin/systemctl`` shim
(``fake_systemctl``). The host object built for the tree names that shim as its systemctl
stand-in (``FakeHost.standins`` → ``Host.standins``): fixes run it instead of this machine's
``systemctl``, so a restart really gives the tree's processes their unit's new environment.
Nothing in the tree itself makes a fix run anything.

Trees are relocatable (relative symlinks; shims find their data next to ``$0``), so a tree can
be built in a staging dir and renamed. Specs are plain data; the presets at the bottom are the
demo fleet and the test hosts.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from tui.core.factbuild import SYSTEMD_DEFAULT_PATH
from tui.core.fixes.unitenv import FILE_MARK, UNIT_DIRS, unit_files_script, unit_start
from tui.core.gpu_state import STATE_FIELDS
from tui.core.hosts import Host
from tui.demo.journal import JOURNALCTL_SHIM, journal_path, sglang_flashinfer_rejected

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
        return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return resources.files(__package__).joinpath(FIXTURES, name).read_text(encoding="utf-8")


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


def standins(root: Path) -> dict[str, str]:
    """The stand-ins of a tree this module built: its fake ``systemctl`` and ``journalctl``."""
    return {tool: str(_under(root, f"/usr/bin/{tool}")) for tool in ("systemctl", "journalctl")}


# ---------------------------------------------------------------------------------------
# the builder
# ---------------------------------------------------------------------------------------

NVIDIA_SMI_SHIM = (
    """#!/bin/sh
# detective-tui fake nvidia-smi: prints captured outputs stored next to this script.
d="${0%/*}/../share/detective-tui-fake/nvidia-smi"
[ -f "$d/hang" ] && exec sleep 100000
case "$*" in
  "") f=table ;;
  "-L") f=list ;;
  "QUERY_ARGS") f=query ;;
  "STATE_ARGS") f=state ;;
  "FABRIC_ARGS") f=fabric ;;
  "ALL_ARGS") f=all ;;
  *) echo "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help."; exit 2 ;;
esac
cat "$d/$f.out"
exit "$(cat "$d/$f.rc")"
""".replace("QUERY_ARGS", SMI_QUERY_ARGS)
    .replace("STATE_ARGS", SMI_STATE_ARGS)
    .replace("FABRIC_ARGS", SMI_FABRIC_ARGS)
    .replace("ALL_ARGS", SMI_ALL_ARGS)
)

NVCC_SHIM = """#!/bin/sh
# detective-tui fake nvcc: prints captured outputs stored next to this script.
d="${0%/*}"
case "$1" in
  --version | -V) cat "$d/.nvcc-version.out" ;;
  --list-gpu-arch)
    [ -f "$d/.nvcc-list-gpu-arch.out" ] || exit 1
    cat "$d/.nvcc-list-gpu-arch.out" ;;
  "") echo "nvcc fatal   : No input files specified; use option --help for more information" >&2
      exit 1 ;;
  *) echo "nvcc fatal   : this is a detective-tui fake nvcc: it cannot compile" >&2; exit 1 ;;
esac
"""


SYSTEMCTL_LOG = "/var/log/detective-tui-fake/systemctl.log"  # every call's arguments, a line each
SYSTEMCTL_SHIM = """#!/bin/sh
# detective-tui fake systemctl: daemon-reload and restart UNIT in the fake host tree around it.
root=$(cd "${0%/*}/../.." && pwd) || exit 1
echo "$*" >> "$root"@LOG@
PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}@PACKAGE_DIR@
export PYTHONPATH
run='import sys; from tui.demo.fakehost import fake_systemctl as f
sys.exit(f(sys.argv[1], sys.argv[2:]))'
exec @PYTHON@ -c "$run" "$root" "$@"
"""


def fake_systemctl(root: str | Path, argv: Sequence[str]) -> int:
    """What the fake host's ``usr/bin/systemctl`` does: ``daemon-reload`` (nothing to reload:
    unit files are read when a unit restarts) and ``restart UNIT…``.

    A restart gives every process under ``proc/`` whose ``cgroup`` names the unit the
    environment the unit starts with — systemd's default ``PATH`` overridden by the unit
    file's and drop-ins' ``Environment=`` lines and then by the ``EnvironmentFile=`` files they
    name (``tui.core.fixes.unitenv``, as the probe's unit context) — and the unit's main
    process (its parent is not in the unit) the effective ``ExecStart=`` as its command line
    (its words as systemd splits them). A restarted process has loaded no library yet, so its
    ``maps`` file goes (the fake does not simulate loading). Other verbs exit 1; a unit
    without a unit file exits 5, as systemctl does; a unit whose required environment file
    is missing fails to start (exit 1) and its processes keep what they had.
    """
    base = Path(root)
    if list(argv) == ["daemon-reload"]:
        return 0
    if len(argv) < 2 or argv[0] != "restart":
        print(f"fake systemctl: only daemon-reload and restart UNIT, not {argv}", file=sys.stderr)
        return 1
    for unit in argv[1:]:
        listing = subprocess.run(
            ["sh", "-c", unit_files_script(Host(name="fake", root=str(base)), unit)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        if not any(f"{FILE_MARK}{d}/{unit}" in listing.splitlines() for d in UNIT_DIRS):
            print(f"Failed to restart {unit}: Unit {unit} not found.", file=sys.stderr)
            return 5
        start = unit_start(listing, unit)
        if start.missing_env_files:  # systemd fails the start before running anything
            print(
                f"Job for {unit} failed: Failed to load environment files: "
                + ", ".join(start.missing_env_files),
                file=sys.stderr,
            )
            return 1
        env = {"PATH": SYSTEMD_DEFAULT_PATH, **start.env}
        pids = _unit_pids(base, unit)
        for pid in pids:
            pdir = base / "proc" / str(pid)
            (pdir / "environ").write_bytes(_nul_joined(f"{k}={v}" for k, v in env.items()))
            (pdir / "maps").unlink(missing_ok=True)
            if start.exec_argv and _ppid(pdir) not in pids:
                (pdir / "cmdline").write_bytes(_nul_joined(start.exec_argv))
    return 0


def _nul_joined(items: Iterable[str | bytes]) -> bytes:
    """``/proc/PID/cmdline`` and ``environ`` layout: each item (text as UTF-8) NUL-terminated."""
    return b"".join((i if isinstance(i, bytes) else i.encode()) + b"\0" for i in items)


def _unit_pids(root: Path, unit: str) -> set[int]:
    """The pids of the fake tree whose ``cgroup`` is the unit's."""
    pids = set()
    for cgroup in (root / "proc").glob("*/cgroup"):
        lines = cgroup.read_text(encoding="utf-8").splitlines()
        if cgroup.parent.name.isdigit() and any(ln.endswith("/" + unit) for ln in lines):
            pids.add(int(cgroup.parent.name))
    return pids


def _ppid(pdir: Path) -> int | None:
    for line in (pdir / "status").read_text(encoding="utf-8").splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    return None


def _build_systemd(root: Path) -> None:
    """``run/systemd/system`` (systemd "runs") and the ``systemctl`` shim."""
    _under(root, "/run/systemd/system").mkdir(parents=True, exist_ok=True)
    _under(root, posixpath.dirname(SYSTEMCTL_LOG)).mkdir(parents=True, exist_ok=True)
    package_dir = Path(__file__).resolve().parents[2]
    shim = (
        SYSTEMCTL_SHIM.replace("@LOG@", shlex.quote(SYSTEMCTL_LOG))
        .replace("@PACKAGE_DIR@", shlex.quote(str(package_dir)))
        .replace("@PYTHON@", shlex.quote(sys.executable))
    )
    _write(_under(root, "/usr/bin/systemctl"), shim, 0o755)
    _write(_under(root, "/usr/bin/journalctl"), JOURNALCTL_SHIM, 0o755)


def _under(root: Path, host_path: str) -> Path:
    if not host_path.startswith("/"):
        raise ValueError(f"fake host paths must be absolute: {host_path!r}")
    return root / host_path.lstrip("/")


def _write(path: Path, text: str | bytes, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)


def _symlink(root: Path, link_host: str, target_host: str) -> None:
    """A relative symlink, so the tree stays valid when moved."""
    link = _under(root, link_host)
    link.parent.mkdir(parents=True, exist_ok=True)
    rel = posixpath.relpath(target_host, posixpath.dirname(link_host))
    link.symlink_to(rel)


def _metadata(name: str, version: str) -> str:
    return f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: fake\n\n"


def _uuid(hostname: str, index: int) -> str:
    h = hashlib.sha256(f"{hostname}/{index}".encode()).hexdigest()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def mig_uuid(hostname: str, gpu: int, device: int) -> str:
    h = hashlib.sha256(f"{hostname}/{gpu}/mig{device}".encode()).hexdigest()
    return f"MIG-{h[:8]}-{h[8:12]}-5{h[13:16]}-{h[16:20]}-{h[20:32]}"


def _smi_outputs(spec: FakeHostSpec) -> dict[str, tuple[str, int]]:
    drv = spec.driver
    if drv.failure in QUOTED_SMI_FAILURES:
        return dict.fromkeys(("table", "list", "query"), QUOTED_SMI_FAILURES[drv.failure])
    if drv.failure is not None:
        if drv.failure not in SMI_FAILURES:
            raise ValueError(
                f"unknown driver failure {drv.failure!r}; known: "
                f"{sorted([*SMI_FAILURES, *QUOTED_SMI_FAILURES])}"
            )
        texts, rc = SMI_FAILURES[drv.failure]
        return {k: (fixture_text(v), rc) for k, v in texts.items()}
    query = "".join(
        f"{i}, {g.name}, {g.compute_cap or '[N/A]'}, "
        f"{f'{g.memory_mib} MiB' if g.memory_mib is not None else '[N/A]'}, "
        f"{_uuid(spec.hostname, i)}\n"
        for i, g in enumerate(spec.gpus)
    )
    listing = "".join(
        f"GPU {i}: {g.name} (UUID: {_uuid(spec.hostname, i)})\n"
        + "".join(  # the layout of the MIG user guide's and public nvidia-smi -L captures
            f"  MIG {p:<12}Device {j:>2}: (UUID: {mig_uuid(spec.hostname, i, j)})\n"
            for j, p in enumerate(g.mig)
        )
        for i, g in enumerate(spec.gpus)
    )
    table = fixture_text(drv.table_fixture) if drv.table_fixture else ""
    table = _with_processes(table, spec)
    state = _gpu_state(spec)
    if drv.query_unsupported:  # nvidia-smi's wording for an unknown field (no capture of it)
        return {
            "table": (table, 0),
            "query": ('Field "compute_cap" is not a valid field to query.\n', 2),
            "all": ('Field "compute_cap" is not a valid field to query.\n', 2),
            "list": (listing, 0),
        }
    outputs = {"table": (table, 0), "query": (query, 0), "list": (listing, 0)}
    fabric = drv.fabric or ("N/A", "N/A")
    fabric_lines = "".join(f"{i}, {fabric[0]}, {fabric[1]}\n" for i in range(len(spec.gpus)))
    every = "".join(  # the one call's lines: the query's, the state's with units, the fabric's
        f"{q}, {util} %, {used} MiB, {temp}, {fabric[0]}, {fabric[1]}\n"
        for q, (_, util, used, _, temp) in zip(
            query.splitlines(), (ln.split(", ") for ln in state.splitlines()), strict=True
        )
    )
    return {**outputs, "state": (state, 0), "fabric": (fabric_lines, 0), "all": (every, 0)}


# SYNTHETIC: no real capture of a busy GPU's --query-gpu state or Processes rows is in the
# fixtures, so a fake host's live state is made up from its spec — a serving process with
# gpu_memory_mib holds that much on every GPU, at a steady 35 °C and no load; demo only.
SYNTHETIC_TEMPERATURE_C = 35
NO_PROCESSES = "No running processes found"


def _on_gpu(spec: FakeHostSpec) -> list[tuple[int, ProcessSpec]]:
    """(GPU index, process) for each GPU a serving process holds memory on."""
    return [
        (i, p)
        for i in range(len(spec.gpus))
        for p in spec.processes
        if p.gpu_memory_mib and p.gpu_index in (None, i)
    ]


def _gpu_state(spec: FakeHostSpec) -> str:
    used = [0] * len(spec.gpus)
    for i, p in _on_gpu(spec):
        used[i] += p.gpu_memory_mib
    return "".join(
        f"{i}, 0, {used[i]}, {g.memory_mib if g.memory_mib is not None else '[N/A]'}, "
        f"{SYNTHETIC_TEMPERATURE_C}\n"
        for i, g in enumerate(spec.gpus)
    )


def _with_processes(table: str, spec: FakeHostSpec) -> str:
    """The table with its "No running processes found" row replaced by one row per GPU for
    each serving process that holds GPU memory (SYNTHETIC rows in nvidia-smi's layout)."""
    busy = _on_gpu(spec)
    lines = table.splitlines(keepends=True)
    at = next((i for i, ln in enumerate(lines) if NO_PROCESSES in ln), None)
    if not busy or at is None:
        return table
    width = len(lines[at].rstrip("\n")) - 2
    rows = []
    for i, p in busy:
        first = p.argv[0]
        name = first.decode(errors="replace") if isinstance(first, bytes) else first
        cells = f"  {i:>3}   N/A  N/A  {p.pid:>14}      C   {name:<35}"
        mem = f"{p.gpu_memory_mib}MiB "
        rows.append("|" + cells + mem.rjust(width - len(cells)) + "|\n")
    return "".join([*lines[:at], *rows, *lines[at + 1 :]])


def _build_driver(root: Path, spec: FakeHostSpec) -> None:
    drv = spec.driver
    if drv.proc_fixture:
        _write(_under(root, "/proc/driver/nvidia/version"), fixture_text(drv.proc_fixture))
    elif drv.proc_version:
        _write(
            _under(root, "/proc/driver/nvidia/version"),
            PROC_VERSION_TEMPLATE.format(version=drv.proc_version),
        )
    if not drv.installed:
        return
    _write(_under(root, "/usr/bin/nvidia-smi"), NVIDIA_SMI_SHIM, 0o755)
    data = _under(root, "/usr/share/detective-tui-fake/nvidia-smi")
    for name, (text, rc) in _smi_outputs(spec).items():
        _write(data / f"{name}.out", text)
        _write(data / f"{name}.rc", f"{rc}\n")
    if drv.hang:
        _write(data / "hang", "")


def _write_nvcc(bin_dir: Path, nvcc_fixture: str, arch_fixture: str | None, mode: int) -> None:
    _write(bin_dir / "nvcc", NVCC_SHIM, mode)
    _write(bin_dir / ".nvcc-version.out", fixture_text(nvcc_fixture))
    if arch_fixture:
        _write(bin_dir / ".nvcc-list-gpu-arch.out", fixture_text(arch_fixture))


PTXAS_SHIM = """#!/bin/sh
# detective-tui fake ptxas: prints the captured --version output stored next to this script.
case "$1" in
  --version) cat "${0%/*}/.${0##*/}-version.out" ;;
  *) echo "ptxas fatal   : this is a detective-tui fake ptxas: it cannot assemble" >&2; exit 255 ;;
esac
"""


def _write_ptxas(bin_dir: Path, name: str, fixture: str, runs: bool = True) -> None:
    """A ptxas shim, or (``runs=False``) a file that cannot run here — another machine's binary
    on a noexec mount — holding the version string among bytes, as the real binary does."""
    text = fixture_text(fixture)
    if runs:
        _write(bin_dir / name, PTXAS_SHIM, 0o755)
        _write(bin_dir / f".{name}-version.out", text)
        return
    release = next(ln for ln in text.splitlines() if "release " in ln)
    junk = b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 64
    _write(bin_dir / name, junk + b"\0" + release.encode() + b"\0" + junk, 0o644)


def _build_toolkit(root: Path, tk: ToolkitSpec) -> None:
    home = _under(root, tk.home)
    if tk.runtime_only:  # an empty stand-in for the library; no compiler at all
        _write(home / "lib64" / f"libcudart.so.{tk.toolkit_cuda}", "")
        cudart = {"cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": tk.toolkit_cuda}}
        _write(home / "version.json", json.dumps(cudart, indent=3) + "\n")
        return
    _write_nvcc(
        home / "bin", tk.nvcc_fixture, tk.list_gpu_arch_fixture, 0o755 if tk.executable else 0o644
    )
    if tk.ptxas_fixture:
        _write_ptxas(home / "bin", "ptxas", tk.ptxas_fixture)
    if tk.header_fixture:
        _write(home / "include" / "cuda_runtime_api.h", fixture_text(tk.header_fixture))
    nvcc_full = fixture_text(tk.nvcc_fixture).split(", V")[-1].split()[0]
    version_json = {
        "cuda": {"name": "CUDA SDK", "version": tk.toolkit_cuda},
        "cuda_nvcc": {"name": "CUDA NVCC", "version": nvcc_full},
    }
    _write(home / "version.json", json.dumps(version_json, indent=3) + "\n")


def torch_python_lib(arch_flags: str, merged: bool = False) -> bytes:
    """A stand-in for the 30 MB ``torch/lib/libtorch_python.so``: the real arch-flags string
    among bytes, with a decoy " sm_" (``merged``: in the tail of another string, as the linker
    left it in torch 2.8/2.9)."""
    junk = b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 64
    head = b"\0e, std::string ipc_h" if merged else b"\0"
    return junk + b"\0cudaDeviceProp sm_count" + head + arch_flags.encode() + b"\0" + junk


def _build_venv(root: Path, venv: VenvSpec) -> None:
    base = _under(root, venv.path)
    real = Path(os.path.realpath(sys.executable))
    (base / "bin").mkdir(parents=True, exist_ok=True)
    for name in ("python3", "python"):
        link = base / "bin" / name
        if not link.exists():
            link.symlink_to(real)
    _write(
        base / "pyvenv.cfg",
        f"home = {real.parent}\ninclude-system-site-packages = false\n"
        f"version = {'.'.join(map(str, sys.version_info[:3]))}\n",
    )
    # the interpreter is this machine's, so the site dir is named for its version
    site = base / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site.mkdir(parents=True, exist_ok=True)
    for dist, version in venv.dists:
        info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
        requires = "".join(f"Requires-Dist: {r}\n" for r in venv.requires.get(dist, ()))
        _write(info / "METADATA", _metadata(dist, version).replace("\n\n", f"\n{requires}\n"))
        _write(info / "INSTALLER", "pip\n")  # what pip writes: who installed it
        if dist in venv.records:
            _write(info / "RECORD", "".join(f"{r},," + "\n" for r in venv.records[dist]))
    for rel, content in venv.site_files.items():
        if isinstance(content, Path):
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).symlink_to(content)
        else:
            _write(site / rel, content)
    if venv.torch_version_py:
        text = fixture_text(venv.torch_version_py)
        if venv.torch_version:
            lines = [
                f"__version__ = '{venv.torch_version}'" if ln.startswith("__version__") else ln
                for ln in text.split("\n")
            ]
            text = "\n".join(lines)
        _write(site / "torch" / "version.py", text)
        _write(site / "torch" / "__init__.py", "")
    if venv.torch_arch_flags:
        lib = torch_python_lib(venv.torch_arch_flags, venv.torch_arch_merged)
        _write(site / "torch" / "lib" / "libtorch_python.so", lib)
    if venv.flashinfer:
        _write(site / "flashinfer" / "__init__.py", "")
        _write(site / "flashinfer" / "_build_meta.py", f"__version__ = {venv.flashinfer!r}\n")
        _write(
            site / f"flashinfer_python-{venv.flashinfer}.dist-info" / "METADATA",
            _metadata("flashinfer-python", venv.flashinfer),
        )
    if venv.triton_ptxas:
        _write(site / "triton" / "__init__.py", "")
        for name, fixture in venv.triton_ptxas:
            bin_dir = site / "triton" / "backends" / "nvidia" / "bin"
            _write_ptxas(bin_dir, name, fixture, venv.triton_ptxas_runs)
    for rel in venv.nvidia_libs:
        _write(site / rel, _ELF_JUNK)
    if venv.pip_header_fixture:
        header = site / "nvidia" / "cu13" / "include" / "cuda_runtime_api.h"
        _write(header, fixture_text(venv.pip_header_fixture))
    if venv.pip_nvcc_fixture:
        _write_nvcc(site / "nvidia" / "cu13" / "bin", venv.pip_nvcc_fixture, None, 0o755)
        full = fixture_text(venv.pip_nvcc_fixture).split(", V")[-1].split()[0]
        _write(
            site / f"nvidia_cuda_nvcc-{full}.dist-info" / "METADATA",
            _metadata("nvidia-cuda-nvcc", full),
        )


_ELF_JUNK = b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 4


def _maps_text(paths: Sequence[str]) -> str:
    """``/proc/PID/maps`` lines (address range, perms, offset, device, inode, path) for each
    file, as the kernel writes them: a read-only and an executable mapping per library."""
    lines = []
    base = 0x7F3C2A000000
    for n, path in enumerate(paths):
        for k, perms in enumerate(("r--p", "r-xp")):
            start = base + (2 * n + k) * 0x200000
            lines.append(
                f"{start:012x}-{start + 0x1FF000:012x} {perms} {k * 0x1000:08x} 103:02 "
                f"{1835000 + n:<26d}{path}"
            )
    return "\n".join(lines) + "\n"


def _build_process(root: Path, proc: ProcessSpec) -> None:
    pdir = _under(root, f"/proc/{proc.pid}")
    if proc.mapped:
        _write(pdir / "maps", _maps_text(proc.mapped))
    _write(pdir / "cmdline", _nul_joined(proc.argv))
    environ = _nul_joined(f"{k}={v}" for k, v in proc.environ.items())
    _write(pdir / "environ", environ, 0o644 if proc.environ_readable else 0o000)
    (pdir / "exe").symlink_to(proc.exe)
    name = posixpath.basename(proc.exe)
    _write(pdir / "comm", name[:15] + "\n")  # the kernel cuts a task's comm to 15 characters
    _write(
        pdir / "status",
        f"Name:\t{name}\nState:\tS (sleeping)\nPid:\t{proc.pid}\nPPid:\t{proc.ppid}\n",
    )
    cgroup = (
        f"0::/system.slice/{proc.unit}\n"
        if proc.unit
        else "0::/user.slice/user-0.slice/session-1.scope\n"
    )
    _write(pdir / "cgroup", cgroup)
    if proc.stdout:
        (pdir / "fd").mkdir()
        for fd in ("1", "2"):
            (pdir / "fd" / fd).symlink_to(proc.stdout)


def _add_env_files(root: Path, unit: str, env_files: Mapping[str, str | None]) -> None:
    """``EnvironmentFile=`` lines at the top of the unit file's ``[Service]`` section, and the
    files they name."""
    unit_file = next(
        (p for d in reversed(UNIT_DIRS) if (p := _under(root, f"{d}/{unit}")).is_file()), None
    )
    if unit_file is None:
        raise ValueError(f"unit_env_files names {unit}, which has no unit file in the spec")
    lines = "".join(f"EnvironmentFile={value}\n" for value in env_files)
    text = unit_file.read_text(encoding="utf-8")
    if "[Service]\n" not in text:
        raise ValueError(f"the unit file of {unit} has no [Service] section")
    unit_file.write_text(text.replace("[Service]\n", "[Service]\n" + lines, 1), encoding="utf-8")
    for value, content in env_files.items():
        if content is not None:
            _write(_under(root, value.removeprefix("-")), content)


def build_fake_host(dest: Path, spec: FakeHostSpec) -> FakeHost:
    """Write the tree of ``spec`` into ``dest`` (created; must not hold another host)."""
    root = Path(dest)
    root.mkdir(parents=True, exist_ok=True)
    _write(_under(root, "/etc/hostname"), f"{spec.hostname}\n")
    _write(_under(root, "/etc/os-release"), spec.os_release)
    _build_systemd(root)
    _build_driver(root, spec)
    for tk in spec.toolkits:
        _build_toolkit(root, tk)
    if spec.usr_local_cuda:
        _symlink(root, "/usr/local/cuda", spec.usr_local_cuda)
    for w in spec.wrappers:
        text = w.text if w.text is not None else f'#!/bin/sh\nexec {shlex.quote(w.target)} "$@"\n'
        _write(_under(root, w.path), text, 0o755)
    for venv in spec.venvs:
        _build_venv(root, venv)
    for proc in spec.processes:
        _build_process(root, proc)
    for path, text in spec.files.items():
        _write(_under(root, path), text)
    for unit, env_files in spec.unit_env_files.items():
        _add_env_files(root, unit, env_files)
    for d in spec.jit_cache_dirs:
        (_under(root, d) / "cached_ops").mkdir(parents=True, exist_ok=True)
    for versioned in spec.lib_files:
        _write(_under(root, versioned), _ELF_JUNK)
        stem, _, rest = posixpath.basename(versioned).partition(".so.")
        soname = f"{stem}.so.{rest.split('.')[0]}"
        _symlink(root, posixpath.join(posixpath.dirname(versioned), soname), versioned)
    for link, target in spec.links:
        _symlink(root, link, target)
    pythons = spec.inventory_pythons or tuple(v.python for v in spec.venvs)
    return FakeHost(root=root, env=dict(spec.env), pythons=pythons)


# ---------------------------------------------------------------------------------------
# presets
# ---------------------------------------------------------------------------------------

UBUNTU_2204 = (
    'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\n'
    'VERSION="22.04.5 LTS (Jammy Jellyfish)"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\n'
)
RTX_PRO_6000 = GpuSpec("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", 97887)
CUDA_128 = ToolkitSpec("/usr/local/cuda-12.8", "nvcc/nvcc-12.8.93.txt", "12.8.1")
CUDA_130 = ToolkitSpec(
    "/usr/local/cuda-13.0", "nvcc/nvcc-13.0.88.txt", "13.0.2", "nvcc/nvcc-13.0.88-list-gpu-arch.txt"
)


def pypi_torch_arch_flags(torch_version: str) -> str:
    """The arch flags embedded in the PyPI x86_64 wheel of ``torch_version`` (real captures)."""
    table = fixture_text("torch/torch-pypi-wheels-CUDA_ARCH_FLAGS-from-libtorch_python.tsv")
    for line in table.splitlines():
        tag, version, flags = [*line.split("\t"), "", "", ""][:3]
        if version == torch_version and not tag.endswith("-aarch64"):
            return flags
    raise KeyError(f"no captured arch flags for torch {torch_version}")


def _ssh_env(path_head: str, **extra: str) -> dict[str, str]:
    return {"HOME": "/root", "USER": "root", "PATH": f"{path_head}:{SYSTEM_PATH}", **extra}


def reference_ct200(
    *,
    with_cuda13: bool = False,
    flashinfer: str = "0.6.8",
    service: bool = True,
    cuda: str = "/usr/local/cuda-12.8",
    torch: str = "2.9.1",
) -> FakeHostSpec:
    """The seed case: 8× RTX PRO 6000 (SM 12.0), driver 580.95.05 (CUDA 13.0), only CUDA 12.8
    on disk and in CUDA_HOME, torch 2.9.1+cu130, FlashInfer 0.6.8, SGLang as a systemd service.
    ``cuda`` is the toolkit CUDA_HOME and PATH name (everywhere), ``torch`` torch's version.
    """
    venv = "/root/venv_sglang211"
    py = f"{venv}/bin/python3"
    unit = "sglang.service"
    env_path = f"{cuda}/bin:{venv}/bin:/usr/local/bin:/usr/bin:/bin"
    processes: tuple[ProcessSpec, ...] = ()
    files: dict[str, str] = {
        "/root/.bashrc": f"export CUDA_HOME={cuda}\nexport PATH={cuda}/bin:$PATH\n",
    }
    if service:
        server_env = {
            "PATH": env_path,
            "CUDA_HOME": cuda,
            "HOME": "/root",
            "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
            "HF_TOKEN": "hf_demo_secret_value",
            "SGLANG_API_KEY": "sk-demo-secret-value",
            "LANG": "C.UTF-8",
        }
        processes = (
            ProcessSpec(
                pid=4242,
                argv=(
                    py,
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "/models/Kimi-K2.6",
                    "--tp",
                    "8",
                    "--port",
                    "30000",
                ),
                environ=server_env,
                exe="/usr/bin/python3.12",
                unit=unit,
            ),
            # its tensor-parallel workers retitle themselves (setproctitle); the probe skips them
            *(
                ProcessSpec(
                    pid=4300 + tp,
                    argv=(f"sglang::scheduler_TP{tp}",),
                    environ=server_env,
                    exe="/usr/bin/python3.12",
                    unit=unit,
                    ppid=4242,
                    gpu_memory_mib=88_312,  # SYNTHETIC: weights + KV cache of one TP rank
                    gpu_index=tp,
                )
                for tp in range(8)
            ),
        )
        files[f"/etc/systemd/system/{unit}"] = (
            "[Unit]\nDescription=SGLang server\n\n[Service]\n"
            f"Environment=CUDA_HOME={cuda}\n"
            f'Environment="PATH={env_path}"\n'
            "Environment=CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
            'Environment="HF_TOKEN=hf_demo_secret_value" SGLANG_API_KEY=sk-demo-secret-value\n'
            f"ExecStart={py} -m sglang.launch_server --model-path /models/Kimi-K2.6"
            " --tp 8 --port 30000\n"
            "Restart=always\n\n[Install]\nWantedBy=multi-user.target\n"
        )
        files[journal_path(unit)] = sglang_flashinfer_rejected("ct200", py, 4242)
    return FakeHostSpec(
        hostname="ct200",
        os_release=UBUNTU_2204,
        gpus=(RTX_PRO_6000,) * 8,
        driver=DriverSpec(
            table_fixture="nvidia-smi/SYNTHETIC-nvidia-smi-rtxpro6000-server-x8-580.95.05.txt",
            proc_fixture="proc/proc-driver-nvidia-version-580.95.05-open-x86_64.txt",
        ),
        toolkits=(CUDA_128, CUDA_130) if with_cuda13 else (CUDA_128,),
        venvs=(
            VenvSpec(
                path=venv,
                dists=(
                    ("torch", torch),
                    ("sglang", "0.5.6"),
                    ("sgl-kernel", "0.3.18"),
                    ("triton", "3.5.1"),
                    ("nvidia-cuda-runtime", "13.0.96"),
                    ("nvidia-nccl-cu13", "2.27.7"),
                    # what `python3.12 -m venv` puts there: the pip CPython 3.12.3's ensurepip
                    # bundles (Lib/ensurepip/__init__.py: _PIP_VERSION = "24.0")
                    ("pip", "24.0"),
                ),
                site_files={"pip/__init__.py": '__version__ = "24.0"\n'},
                # torch 2.9.1+cu130's version.py: the real 2.11.0+cu130 file with __version__
                # rewritten (no 2.9.1+cu130 capture exists; the layout is the same apart from
                # the extra rocm field 2.10+ adds).
                torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py",
                torch_version=f"{torch}+cu130",
                # the 2.11.0+cu130 wheel's list, for the same reason as version.py above
                torch_arch_flags=pypi_torch_arch_flags("2.11.0+cu130"),
                flashinfer=flashinfer,
            ),
        ),
        processes=processes,
        env=_ssh_env(f"{venv}/bin:{cuda}/bin", CUDA_HOME=cuda, LD_LIBRARY_PATH=f"{cuda}/lib64"),
        files=files,
        jit_cache_dirs=(f"/root/.cache/flashinfer/{flashinfer}",),
    )


def healthy_h100() -> FakeHostSpec:
    """4× H100 (SM 9.0) on driver 570.148.08 (CUDA 12.8; the real 4-GPU capture), nvcc 12.8 at
    /usr/local/cuda-12.8 with /usr/local/cuda → it, torch 2.8.0+cu128, FlashInfer 0.6.8."""
    venv = "/opt/venv"
    return FakeHostSpec(
        hostname="h100-node",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA H100 80GB HBM3", "9.0", 81559),) * 4,
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-h100x4-570.148.08.txt", proc_version="570.148.08"
        ),
        toolkits=(CUDA_128,),
        usr_local_cuda="/usr/local/cuda-12.8",
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.8.0"), ("vllm", "0.10.1"), ("triton", "3.4.0")),
                torch_version_py="torch/torch-version.py-2.8.0+cu128-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.8.0+cu128"),
                flashinfer="0.6.8",
            ),
        ),
        env=_ssh_env(f"{venv}/bin:/usr/local/cuda/bin", CUDA_HOME="/usr/local/cuda"),
    )


def b200_old_driver() -> FakeHostSpec:
    """8× B200 (SM 10.0) on driver 575.57.08 (CUDA 12.9, the real capture) with a cu130 torch:
    the driver is too old for torch (13.x needs ≥580); nvcc 13.0 at /usr/local/cuda-13.0."""
    venv = "/opt/venv"
    return FakeHostSpec(
        hostname="b200-old-driver",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA B200", "10.0", 183359),) * 8,
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-b200x8-575.57.08.txt", proc_version="575.57.08"
        ),
        toolkits=(CUDA_130,),
        usr_local_cuda="/usr/local/cuda-13.0",
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.11.0"), ("sglang", "0.5.9"), ("triton", "3.6.0")),
                torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.11.0+cu130"),
                flashinfer="0.7.2",
            ),
        ),
        env=_ssh_env(f"{venv}/bin:/usr/local/cuda/bin"),
    )


def rtx5090_cu124_torch() -> FakeHostSpec:
    """RTX 5090 (SM 12.0) on driver 570.124.06 (the real capture) with torch 2.6.0+cu124, which
    has no sm_120 kernels; nvcc 12.8 at /usr/local/cuda-12.8."""
    venv = "/home/ml/venv"
    return FakeHostSpec(
        hostname="rtx5090-cu124",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA GeForce RTX 5090", "12.0", 32607),),
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-rtx5090-570.124.06.txt", proc_version="570.124.06"
        ),
        toolkits=(CUDA_128,),
        usr_local_cuda="/usr/local/cuda-12.8",
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.6.0"), ("vllm", "0.8.1"), ("triton", "3.2.0")),
                torch_version_py="torch/torch-version.py-2.6.0+cu124-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.6.0+cu124"),
            ),
        ),
        env=_ssh_env(f"{venv}/bin:/usr/local/cuda/bin"),
    )


def no_driver() -> FakeHostSpec:
    """nvidia-smi present, kernel module not loaded: the real 550.163.01 text, exit 9;
    /proc/driver/nvidia/version absent."""
    return FakeHostSpec(
        hostname="no-driver",
        os_release=UBUNTU_2204,
        gpus=(),
        driver=DriverSpec(failure="not-loaded"),
        toolkits=(CUDA_128,),
        usr_local_cuda="/usr/local/cuda-12.8",
        env=_ssh_env("/usr/local/cuda/bin"),
    )


CUDA_130_PTXAS = replace(CUDA_130, ptxas_fixture="ptxas/ptxas-13.0.88-version.txt")
TRITON_351_PTXAS = (("ptxas", "captures/triton/triton-3.5.1-ptxas-version.txt"),)


def gb10_triton_old_ptxas(*, triton: str = "3.5.1", override: bool = False) -> FakeHostSpec:
    """A DGX Spark (GB10, SM 12.1) on driver 580.95.05 (the real capture), CUDA 13.0 installed
    and in CUDA_HOME, torch 2.9.1+cu130 with vLLM as a systemd service — and triton 3.5.1, whose
    bundled ptxas (12.8.93, from the real wheel) predates sm_121a. ``triton="3.6.0"`` bundles
    ptxas-blackwell 12.9.86 (it builds sm_121a); ``override`` sets TRITON_PTXAS_PATH to the
    toolkit's ptxas in the service."""
    venv = "/home/ml/venv"
    py = f"{venv}/bin/python3"
    cuda = "/usr/local/cuda-13.0"
    unit = "vllm.service"
    env_path = f"{venv}/bin:{cuda}/bin:/usr/local/bin:/usr/bin:/bin"
    bundled = (
        TRITON_351_PTXAS
        if triton == "3.5.1"
        else tuple(
            (name, f"captures/triton/triton-{triton}-{name}-version.txt")
            for name in ("ptxas", "ptxas-blackwell")
        )
    )
    server_env = {"PATH": env_path, "CUDA_HOME": cuda, "HOME": "/home/ml", "LANG": "C.UTF-8"}
    extra = {"TRITON_PTXAS_PATH": f"{cuda}/bin/ptxas"} if override else {}
    argv = (py, "-m", "vllm.entrypoints.openai.api_server", "--model", "/models/Qwen3-8B")
    unit_env = "".join(f'Environment="{k}={v}"\n' for k, v in {**server_env, **extra}.items())
    return FakeHostSpec(
        hostname="spark-01",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA GB10", "12.1", None),),
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-gb10-dgx-spark-580.95.05.txt",
            proc_version="580.95.05",
        ),
        toolkits=(CUDA_130_PTXAS,),
        usr_local_cuda=cuda,
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.9.1"), ("vllm", "0.11.0"), ("triton", triton)),
                # as reference_ct200: the real 2.11.0+cu130 version.py and arch list, with
                # __version__ rewritten (sm_120 cubins run on SM 12.1)
                torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py",
                torch_version="2.9.1+cu130",
                torch_arch_flags=pypi_torch_arch_flags("2.11.0+cu130"),
                triton_ptxas=bundled,
            ),
        ),
        processes=(
            ProcessSpec(
                pid=5151,
                argv=argv,
                environ={**server_env, **extra},
                exe="/usr/bin/python3.12",
                unit=unit,
            ),
        ),
        env=_ssh_env(f"{venv}/bin:{cuda}/bin", CUDA_HOME=cuda, HOME="/home/ml", USER="ml"),
        files={
            f"/etc/systemd/system/{unit}": "[Unit]\nDescription=vLLM server\n\n[Service]\n"
            + unit_env
            + f"ExecStart={' '.join(argv)}\nRestart=always\n\n"
            "[Install]\nWantedBy=multi-user.target\n",
        },
    )


CUDA_124 = ToolkitSpec("/usr/local/cuda-12.4", "nvcc/nvcc-12.4.131.txt", "12.4.1")
CU12_WHEEL_LIBS = (
    "nvidia/cuda_runtime/lib/libcudart.so.12",
    "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
    "nvidia/nvjitlink/lib/libnvJitLink.so.12",
    "nvidia/cublas/lib/libcublasLt.so.12",
)


def _cuda_libs(home: str, version: str, stems: Sequence[str]) -> tuple[str, ...]:
    """A runfile toolkit's libraries: targets/x86_64-linux/lib/<stem>.so.<full version>."""
    return tuple(f"{home}/targets/x86_64-linux/lib/{stem}.so.{version}" for stem in stems)


def nvrtc_shadowed_server() -> FakeHostSpec:
    """8× RTX PRO 6000 (SM 12.0) on driver 580.95.05, torch 2.8.0+cu128 and vLLM as a systemd
    service whose unit puts an old CUDA 12.4 runtime first on LD_LIBRARY_PATH; the running
    server has that toolkit's libnvrtc 12.4 mapped, which cannot compile for SM 12.0."""
    venv = "/opt/venv"
    py = f"{venv}/bin/python3"
    unit = "vllm.service"
    old = "/usr/local/cuda-12.4"
    site = f"{venv}/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    ld = f"{old}/lib64"
    server_env = {
        "PATH": f"{venv}/bin:/usr/local/cuda-12.8/bin:/usr/bin:/bin",
        "CUDA_HOME": "/usr/local/cuda-12.8",
        "LD_LIBRARY_PATH": ld,
        "HOME": "/root",
    }
    argv = (py, "-m", "vllm.entrypoints.openai.api_server", "--model", "/models/Llama-3.3-70B")
    unit_env = "".join(f'Environment="{k}={v}"\n' for k, v in server_env.items())
    old_libs = _cuda_libs(old, "12.4.127", ("libcudart", "libnvrtc", "libnvJitLink"))
    return FakeHostSpec(
        hostname="rtxpro-04",
        os_release=UBUNTU_2204,
        gpus=(RTX_PRO_6000,) * 8,
        driver=DriverSpec(
            table_fixture="nvidia-smi/SYNTHETIC-nvidia-smi-rtxpro6000-server-x8-580.95.05.txt",
            proc_fixture="proc/proc-driver-nvidia-version-580.95.05-open-x86_64.txt",
        ),
        toolkits=(CUDA_128, CUDA_124),
        usr_local_cuda="/usr/local/cuda-12.8",
        venvs=(
            VenvSpec(
                path=venv,
                dists=(
                    ("torch", "2.8.0"),
                    ("vllm", "0.10.1"),
                    ("triton", "3.4.0"),
                    ("nvidia-cuda-runtime-cu12", "12.8.90"),
                    ("nvidia-cuda-nvrtc-cu12", "12.8.93"),
                    ("nvidia-nvjitlink-cu12", "12.8.93"),
                    ("nvidia-cublas-cu12", "12.8.4.1"),
                ),
                torch_version_py="torch/torch-version.py-2.8.0+cu128-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.8.0+cu128"),
                nvidia_libs=CU12_WHEEL_LIBS,
            ),
        ),
        processes=(
            ProcessSpec(
                pid=6060,
                argv=argv,
                environ=server_env,
                exe="/usr/bin/python3.12",
                unit=unit,
                mapped=(
                    f"{site}/nvidia/cuda_runtime/lib/libcudart.so.12",
                    f"{old}/targets/x86_64-linux/lib/libnvrtc.so.12.4.127",
                    f"{site}/nvidia/nvjitlink/lib/libnvJitLink.so.12",
                ),
            ),
        ),
        env=_ssh_env(f"{venv}/bin:/usr/local/cuda/bin", CUDA_HOME="/usr/local/cuda"),
        files={
            f"/etc/systemd/system/{unit}": "[Unit]\nDescription=vLLM server\n\n[Service]\n"
            + unit_env
            + f"ExecStart={' '.join(argv)}\nRestart=always\n\n"
            "[Install]\nWantedBy=multi-user.target\n",
        },
        lib_files=old_libs,
        links=((f"{old}/lib64", f"{old}/targets/x86_64-linux/lib"),),
    )


def nvjitlink_shadowed_login(torch: str = "2.5.1") -> FakeHostSpec:
    """4× H100 with torch <torch>+cu124 from the wheels and ~/.bashrc exporting
    LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64 (pytorch#140797): 2.5.1 lets cuSPARSE take that
    toolkit's libnvJitLink 12.1; 2.6.0 loads the wheel's own first."""
    venv = "/opt/venv"
    old = "/usr/local/cuda-12.1"
    return FakeHostSpec(
        hostname="h100-ldpath",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA H100 80GB HBM3", "9.0", 81559),) * 4,
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-h100x4-570.148.08.txt", proc_version="570.148.08"
        ),
        toolkits=(CUDA_128,),
        usr_local_cuda="/usr/local/cuda-12.8",
        venvs=(
            VenvSpec(
                path=venv,
                dists=(
                    ("torch", torch),
                    ("nvidia-cuda-runtime-cu12", "12.4.127"),
                    ("nvidia-cuda-nvrtc-cu12", "12.4.127"),
                    ("nvidia-nvjitlink-cu12", "12.4.127"),
                    ("nvidia-cublas-cu12", "12.4.5.8"),
                ),
                torch_version_py="torch/torch-version.py-2.6.0+cu124-x86_64-pypi.py",
                torch_version=f"{torch}+cu124",
                torch_arch_flags=pypi_torch_arch_flags("2.6.0+cu124"),
                nvidia_libs=CU12_WHEEL_LIBS,
            ),
        ),
        env=_ssh_env(
            f"{venv}/bin:/usr/local/cuda/bin",
            CUDA_HOME="/usr/local/cuda",
            LD_LIBRARY_PATH=f"{old}/lib64",
        ),
        files={"/root/.bashrc": f"export LD_LIBRARY_PATH={old}/lib64\n"},
        lib_files=_cuda_libs(old, "12.1.105", ("libcudart", "libnvrtc", "libnvJitLink")),
        links=((f"{old}/lib64", f"{old}/targets/x86_64-linux/lib"),),
    )


CUDART_130_HEADER = (
    "captures/cuda-headers/nvidia-cuda-runtime-13.0.96-cuda_runtime_api.h-lines-138-139.txt"
)
CUDART_128_HEADER = (
    "captures/cuda-headers/nvidia-cuda-runtime-cu12-12.8.90-cuda_runtime_api.h-lines-138-139.txt"
)


def pip_toolkit_mixed(nvcc: str = "13.3.73") -> FakeHostSpec:
    """8× RTX PRO 6000 on driver 580.95.05, torch 2.11.0+cu130 and FlashInfer 0.6.8 in a venv
    whose CUDA_HOME is the pip toolkit site-packages/nvidia/cu13 — nvcc (and crt, nvvm) from
    nvidia-cuda-nvcc <nvcc>, the runtime headers from nvidia-cuda-runtime 13.0.96, which torch
    pins (flashinfer#3493). ``nvcc="13.0.88"`` is the coherent near miss."""
    venv = "/opt/venv"
    site = f"{venv}/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    home = f"{site}/nvidia/cu13"
    return FakeHostSpec(
        hostname="pip-cuda",
        os_release=UBUNTU_2204,
        gpus=(RTX_PRO_6000,) * 8,
        driver=DriverSpec(
            table_fixture="nvidia-smi/SYNTHETIC-nvidia-smi-rtxpro6000-server-x8-580.95.05.txt",
            proc_fixture="proc/proc-driver-nvidia-version-580.95.05-open-x86_64.txt",
        ),
        venvs=(
            VenvSpec(
                path=venv,
                dists=(
                    ("torch", "2.11.0"),
                    ("nvidia-cuda-runtime", "13.0.96"),
                    ("nvidia-cuda-crt", nvcc),
                    ("nvidia-nvvm", nvcc),
                ),
                torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.11.0+cu130"),
                flashinfer="0.6.8",
                pip_nvcc_fixture=f"nvcc/nvcc-{nvcc}.txt",
                pip_header_fixture=CUDART_130_HEADER,
            ),
        ),
        env=_ssh_env(f"{venv}/bin:{home}/bin", CUDA_HOME=home),
    )


def h200_driver_550_cu128() -> FakeHostSpec:
    """8× H200 (SM 9.0) on driver 550.163.01 (CUDA 12.4, the real capture) with torch
    2.8.0+cu128: minor-version compatibility runs torch's sm_90 cubins, but PTX from the CUDA
    12.8 toolchain cannot be JIT-compiled by this driver (error 222)."""
    venv = "/opt/venv"
    return FakeHostSpec(
        hostname="h200-r550",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA H200", "9.0", 143771),) * 8,
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-h200x8-550.163.01.txt", proc_version="550.163.01"
        ),
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.8.0"), ("vllm", "0.10.1")),
                torch_version_py="torch/torch-version.py-2.8.0+cu128-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.8.0+cu128"),
            ),
        ),
        env=_ssh_env(f"{venv}/bin"),
    )
