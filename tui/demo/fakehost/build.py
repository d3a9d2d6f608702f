"""Fake GPU hosts, the builder: a ``FakeHostSpec`` made into a directory tree that the real probe
inspects through its root prefix (shims, toolkit and venv trees, ``proc/``, units)."""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tui.core.facts.contexts import SYSTEMD_DEFAULT_PATH
from tui.core.fixes.unitenv import FILE_MARK, UNIT_DIRS, unit_files_script, unit_start
from tui.core.hosts import Host
from tui.demo.container_logs import ENGINE_SHIM
from tui.demo.fakehost.spec import (
    PROC_VERSION_TEMPLATE,
    QUOTED_SMI_FAILURES,
    SMI_ALL_ARGS,
    SMI_FABRIC_ARGS,
    SMI_FAILURES,
    SMI_QUERY_ARGS,
    SMI_STATE_ARGS,
    FakeHost,
    FakeHostSpec,
    ProcessSpec,
    ToolkitSpec,
    VenvSpec,
    fixture_text,
    in_tree,
)
from tui.demo.journal import JOURNALCTL_SHIM

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
    in_tree(root, "/run/systemd/system").mkdir(parents=True, exist_ok=True)
    in_tree(root, posixpath.dirname(SYSTEMCTL_LOG)).mkdir(parents=True, exist_ok=True)
    package_dir = Path(__file__).resolve().parents[2]
    shim = (
        SYSTEMCTL_SHIM.replace("@LOG@", shlex.quote(SYSTEMCTL_LOG))
        .replace("@PACKAGE_DIR@", shlex.quote(str(package_dir)))
        .replace("@PYTHON@", shlex.quote(sys.executable))
    )
    _write(in_tree(root, "/usr/bin/systemctl"), shim, 0o755)
    _write(in_tree(root, "/usr/bin/journalctl"), JOURNALCTL_SHIM, 0o755)


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
    link = in_tree(root, link_host)
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
        _write(in_tree(root, "/proc/driver/nvidia/version"), fixture_text(drv.proc_fixture))
    elif drv.proc_version:
        _write(
            in_tree(root, "/proc/driver/nvidia/version"),
            PROC_VERSION_TEMPLATE.format(version=drv.proc_version),
        )
    if not drv.installed:
        return
    _write(in_tree(root, "/usr/bin/nvidia-smi"), NVIDIA_SMI_SHIM, 0o755)
    data = in_tree(root, "/usr/share/detective-tui-fake/nvidia-smi")
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
    home = in_tree(root, tk.home)
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
    base = in_tree(root, venv.path)
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


# a pod's slice as the kubelet's systemd cgroup driver names it (netdata/netdata#4868)
KUBE_POD = "kubepods-burstable-pod03f3f104_3215_44f2_9686_d4dd1f05a7ed.slice"


def _build_process(root: Path, proc: ProcessSpec) -> None:
    pdir = in_tree(root, f"/proc/{proc.pid}")
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
    engine, _, cid = (proc.container or "").partition(" ")
    scope = {
        "docker": f"/system.slice/docker-{cid}.scope",
        "podman": f"/system.slice/libpod-{cid}.scope",
        "crictl": f"/kubepods.slice/kubepods-burstable.slice/{KUBE_POD}/cri-containerd-{cid}.scope",
    }.get(engine)
    if proc.container and scope is None:
        raise ValueError(f"container {proc.container!r}: the engine is docker, podman or crictl")
    cgroup = (
        f"0::/system.slice/{proc.unit}\n"
        if proc.unit
        else f"0::{scope}\n"
        if scope
        else "0::/user.slice/user-0.slice/session-1.scope\n"
    )
    if scope:
        _write(in_tree(root, f"/usr/bin/{engine}"), ENGINE_SHIM, 0o755)
    _write(pdir / "cgroup", cgroup)
    if proc.stdout:
        (pdir / "fd").mkdir()
        for fd in ("1", "2"):
            (pdir / "fd" / fd).symlink_to(proc.stdout)


def _add_env_files(root: Path, unit: str, env_files: Mapping[str, str | None]) -> None:
    """``EnvironmentFile=`` lines at the top of the unit file's ``[Service]`` section, and the
    files they name."""
    unit_file = next(
        (p for d in reversed(UNIT_DIRS) if (p := in_tree(root, f"{d}/{unit}")).is_file()), None
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
            _write(in_tree(root, value.removeprefix("-")), content)


def build_fake_host(dest: Path, spec: FakeHostSpec) -> FakeHost:
    """Write the tree of ``spec`` into ``dest`` (created; must not hold another host)."""
    root = Path(dest)
    root.mkdir(parents=True, exist_ok=True)
    _write(in_tree(root, "/etc/hostname"), f"{spec.hostname}\n")
    _write(in_tree(root, "/etc/os-release"), spec.os_release)
    _build_systemd(root)
    _build_driver(root, spec)
    for tk in spec.toolkits:
        _build_toolkit(root, tk)
    if spec.usr_local_cuda:
        _symlink(root, "/usr/local/cuda", spec.usr_local_cuda)
    for w in spec.wrappers:
        text = w.text if w.text is not None else f'#!/bin/sh\nexec {shlex.quote(w.target)} "$@"\n'
        _write(in_tree(root, w.path), text, 0o755)
    for venv in spec.venvs:
        _build_venv(root, venv)
    for proc in spec.processes:
        _build_process(root, proc)
    for path, text in spec.files.items():
        _write(in_tree(root, path), text)
    for unit, env_files in spec.unit_env_files.items():
        _add_env_files(root, unit, env_files)
    for d in spec.jit_cache_dirs:
        (in_tree(root, d) / "cached_ops").mkdir(parents=True, exist_ok=True)
    for versioned in spec.lib_files:
        _write(in_tree(root, versioned), _ELF_JUNK)
        stem, _, rest = posixpath.basename(versioned).partition(".so.")
        soname = f"{stem}.so.{rest.split('.')[0]}"
        _symlink(root, posixpath.join(posixpath.dirname(versioned), soname), versioned)
    for link, target in spec.links:
        _symlink(root, link, target)
    pythons = spec.inventory_pythons or tuple(v.python for v in spec.venvs)
    return FakeHost(root=root, env=dict(spec.env), pythons=pythons)
