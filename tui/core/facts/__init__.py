"""The facts model: everything the probe learned about one host, typed and immutable.

The JSON form (``Facts.to_json()``) is the ``facts`` object of the contract; the README
documents every field. Nothing here imports Textual, and nothing here runs commands: the
probe collects raw records (see ``probes/``), ``tui.core.facts.build`` turns them into these.

Conventions
- Paths are host paths (never prefixed by a probe root).
- Versions are strings as the tool printed them ("12.8", "12.8.93", "2.9.1+cu130");
  compare them with ``packaging.version``.
- ``None`` means "not known"; an empty tuple means "looked, found none".
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from tui.core.facts.gpu_state import GpuLoad, GpuProcess, MigDevice
from tui.core.facts.host_changes import DistInstall, HostChanges
from tui.core.tables.support_matrix import driver_cuda_from_number

SCHEMA_VERSION = 1

DriverState = Literal[
    "ok",  # nvidia-smi answered
    "no-driver",  # no kernel module and no NVML library
    "not-loaded",  # NVML present, kernel module not loaded (nvidia-smi exit 9)
    "no-nvml",  # libnvidia-ml.so missing (nvidia-smi exit 12)
    "version-mismatch",  # Driver/library version mismatch
    "no-nvidia-smi",  # /proc says a driver is loaded, but no nvidia-smi binary
    "timeout",  # nvidia-smi hit its deadline
    "error",  # anything else; see ``message``
    "not-run",  # the probe did not run it (the trust rule: ``message`` says why)
]

# "current": the environment detective-tui itself runs in (the `local` target: an activated
# conda env, `module load cuda`, exported CUDA_HOME/PATH) — where the user's next command runs
EnvKind = Literal["ssh", "login", "process", "unit", "current"]


def _frozen_map(m: Mapping[str, str] | None) -> Mapping[str, str]:
    return MappingProxyType(dict(m or {}))


@dataclass(frozen=True)
class HostInfo:
    hostname: str | None = None
    os_id: str | None = None  # /etc/os-release ID: ubuntu, debian, rhel …
    os_version_id: str | None = None  # "22.04", "12"
    os_pretty: str | None = None
    kernel: str | None = None
    arch: str | None = None  # uname -m: x86_64, aarch64
    user: str | None = None
    is_root: bool = False
    sudo_nopasswd: bool | None = None  # `sudo -n true` worked; None: no sudo
    shell: str | None = None  # login shell from $SHELL
    python3: str | None = None  # a system python3, if any (for the stdlib snippet)


@dataclass(frozen=True)
class DriverInfo:
    state: DriverState = "no-driver"
    proc_version: str | None = None  # from /proc/driver/nvidia/version
    kernel_module: Literal["open", "proprietary"] | None = None
    driver_version: str | None = None  # "Driver Version"/"KMD Version" from nvidia-smi
    driver_cuda: str | None = None  # nvidia-smi's "CUDA Version": the highest CUDA it runs
    smi_exit: int | None = None
    message: str | None = None  # the real text nvidia-smi printed when it failed

    @property
    def max_cuda(self) -> str | None:
        """The highest CUDA the driver runs: nvidia-smi's "CUDA Version", else what the driver
        number implies (``compat.TOOLKIT_MIN_DRIVER``) when nvidia-smi did not say."""
        return self.driver_cuda or driver_cuda_from_number(self.driver_version or self.proc_version)


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    compute_cap: str | None = None  # "12.0"
    cc_source: Literal["nvidia-smi", "name-table"] | None = None
    memory_mib: int | None = None
    uuid: str | None = None
    mig_mode: str | None = None  # the table's "MIG M.": Enabled, Disabled, N/A


@dataclass(frozen=True)
class Toolkit:
    """One CUDA toolkit on disk: a directory whose ``bin/nvcc`` exists (or is named)."""

    home: str  # the directory FlashInfer/torch would call CUDA_HOME
    nvcc: str  # home/bin/nvcc
    exists: bool = True
    executable: bool = True
    version: str | None = None  # "12.8" (release X.Y)
    full_version: str | None = None  # "12.8.93"
    # "binary": the release string read from the ELF nvcc's .rodata (nothing run); "file":
    # version.txt or the release string grepped from bin/nvcc (not ELF, not run: the trust rule)
    version_source: Literal["nvcc", "binary", "version.json", "file"] | None = None
    realpath: str | None = None  # readlink -f of home, when it differs
    wrapper_of: str | None = None  # for shell wrappers such as /usr/bin/nvcc: the real nvcc
    sources: tuple[str, ...] = ()  # how found: CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda,
    # /usr/local/cuda-*, /opt/cuda*, conda:<prefix>, pip:<python>
    error: str | None = None  # why nvcc --version could not run
    home_exists: bool = True  # False: the directory itself is missing (a mistyped CUDA_HOME)
    cudart: str | None = None  # no nvcc, but this libcudart: a runtime-only tree
    ptxas: str | None = None  # home/bin/ptxas when it is executable (the probe looked)
    # CUDART_VERSION of home/include/cuda_runtime_api.h as major.minor ("13.0"); None: no header
    headers_version: str | None = None


@dataclass(frozen=True)
class PtxasBinary:
    """A ptxas the probe looked at: bundled by Triton, or named by a ``TRITON_PTXAS*`` override."""

    path: str
    exists: bool = True
    version: str | None = None  # "12.8" (release X.Y)
    full_version: str | None = None  # "12.8.93"
    # "run": `ptxas --version` answered; "binary": the release string read from its ELF .rodata
    # (not run); "file": grepped from a file that is not such an ELF (it could not run here)
    version_source: Literal["run", "binary", "file"] | None = None
    error: str | None = None  # why --version could not run


@dataclass(frozen=True)
class LibFile:
    """A CUDA library file the probe found: in a ``LD_LIBRARY_PATH`` directory or ld.so.cache."""

    path: str  # as the loader would name it: <dir>/libnvrtc.so.12
    target: str | None = None  # where its symlinks lead: …/libnvrtc.so.12.4.127


@dataclass(frozen=True)
class EnvContext:
    """An environment a program on the host runs under.

    FlashInfer in a server sees the server's environment, not the SSH session's, so every
    context is kept: the SSH session, a login shell, each discovered serving process.
    """

    kind: EnvKind
    label: str  # "ssh session", "login shell (bash -lc)", "pid 4242 sglang.launch_server"
    vars: Mapping[str, str] = field(default_factory=dict)  # the variables that matter, redacted
    which_nvcc: tuple[str, ...] = ()  # `which -a nvcc` under this context's PATH, in order
    usr_local_cuda_exists: bool = False
    pid: int | None = None
    exe: str | None = None  # /proc/PID/exe for processes
    cmdline: str | None = None
    unit: str | None = None  # systemd unit, when the process belongs to one
    environ_readable: bool = True
    # a unit's EnvironmentFile= paths in the order systemd reads them (their variables
    # override Environment=); "-" (missing is fine) dropped, an empty value resets the list
    env_files: tuple[str, ...] = ()
    # a process's arguments exactly as in /proc/PID/cmdline (argv[0] first; secret values
    # ***; ``cmdline`` is them joined by spaces); None: not known (facts from an older probe,
    # or ``argv_note`` says why)
    argv: tuple[str, ...] | None = None
    argv_note: str | None = None
    # CUDA libraries in this context's LD_LIBRARY_PATH directories, in search order
    ld_libs: tuple[LibFile, ...] = ()
    # CUDA libraries a running process has mapped (/proc/PID/maps): what it really loaded
    mapped_libs: tuple[str, ...] = ()
    ld_path_files: tuple[str, ...] = ()  # unit/profile files that set LD_LIBRARY_PATH
    # the container a process runs in, as its cgroup names it: "docker <64 hex>", "podman <id>"
    container: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "vars", _frozen_map(self.vars))

    @property
    def words(self) -> tuple[str, ...]:
        """The process's arguments: exactly, when known; else the command line split on
        whitespace (facts from an older probe)."""
        if self.argv is not None:
            return self.argv
        return tuple((self.cmdline or "").split())

    @property
    def argv0(self) -> str | None:
        """The program the process was started as."""
        words = self.words
        return words[0] if words else None


@dataclass(frozen=True)
class ExtensionBuild:
    """A compiled extension (flash-attn, xformers, vLLM, torchvision…) and the torch it was
    built for: what it declares, and what its ``.so`` files need from the installed torch."""

    name: str  # distribution name, normalised ("flash-attn")
    version: str | None = None
    requires_torch: tuple[str, ...] = ()  # its Requires-Dist lines naming torch
    built_torch: str | None = None  # xformers/cpp_lib.json "version.torch"
    so_read: int = 0  # .so files whose symbol tables were read
    torch_symbols: int = 0  # torch symbols they need (undefined, non-weak)
    missing_symbols: int = 0  # of those, how many the installed torch's libraries lack
    missing_sample: tuple[str, ...] = ()  # the first few, mangled
    lacking_libs: tuple[str, ...] = ()  # torch libraries they need that this torch lacks
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class PythonEnv:
    """One Python interpreter and what is installed for it (read from files, never imported)."""

    path: str  # the interpreter as named (inventory) or found (/proc/PID/exe)
    source: Literal["inventory", "process", "discovered"] = "inventory"
    context: str | None = None  # label of the EnvContext this interpreter runs under
    exists: bool = True
    version: str | None = None  # "3.12.3"
    prefix: str | None = None  # sys.prefix
    site_packages: tuple[str, ...] = ()
    torch_version: str | None = None  # "2.9.1+cu130"
    torch_cuda: str | None = None  # torch.version.cuda: "13.0"; None for CPU builds
    torch_arch_list: tuple[str, ...] | None = None  # from libtorch_python.so, when read
    flashinfer_version: str | None = None
    flashinfer_cubin_version: str | None = None
    flashinfer_jit_cache_version: str | None = None
    packages: Mapping[str, str] = field(default_factory=dict)  # sglang, vllm, triton, nvidia-*…
    jit_cache_dirs: tuple[str, ...] = ()  # existing ~/.cache/flashinfer/<ver>/<archs> dirs
    error: str | None = None
    extensions: tuple[ExtensionBuild, ...] = ()  # compiled extensions checked against torch
    triton_bin_dir: str | None = None  # triton/backends/nvidia/bin (its bundled ptxas)
    cuda_libs: tuple[str, ...] = ()  # CUDA libraries of the nvidia-* wheels (nvidia/*/lib)
    # (path, dist) for each of cuda_libs: the nvidia-* dist-infos whose RECORD lists it
    lib_owners: tuple[tuple[str, str], ...] = ()
    has_pip: bool | None = None  # a pip package in its site dirs (None: not looked for)
    torch_lib: str | None = None  # the torch/lib folder holding libtorch_global_deps.so
    # that library's ("rpath" | "runpath", value): where its CUDA libraries are looked for
    torch_rpath: tuple[str, str] | None = None
    torch_needs: tuple[str, ...] = ()  # the CUDA sonames it needs (DT_NEEDED: libcudnn.so.8…)
    torch_lib_files: tuple[str, ...] = ()  # CUDA libraries bundled in torch/lib (1.x wheels)
    torch_requires: tuple[str, ...] = ()  # torch's Requires-Dist lines naming nvidia-cudnn
    # when two NCCL wheels wrote libnccl.so.2: the one torch/lib/libtorch_cuda.so finds through
    # its DT_RPATH, how many nccl* symbols it needs, how many that file lacks, the first few
    torch_nccl: str | None = None
    torch_nccl_needed: int | None = None
    torch_nccl_missing: int | None = None
    torch_nccl_missing_names: tuple[str, ...] = ()
    # DeepSpeed's git_version_info_installed.py: (op, prebuilt) for each op of installed_ops
    # (None: no such file), and the accelerator it was installed for ("cuda", "cpu")
    deepspeed_ops: tuple[tuple[str, bool], ...] | None = None
    deepspeed_accelerator: str | None = None
    installs: tuple[DistInstall, ...] = ()  # who installed each reported distribution, when

    def __post_init__(self) -> None:
        object.__setattr__(self, "packages", _frozen_map(self.packages))


@dataclass(frozen=True)
class ProbeMeta:
    probe_version: str = ""
    root: str | None = None  # root prefix, for inspected images and fake hosts
    duration_s: float | None = None
    timed_out: tuple[str, ...] = ()  # steps that hit their deadline (e.g. "nvidia-smi")
    errors: tuple[str, ...] = ()  # steps that failed, with the reason
    # programs the trust rule kept from running ("python /home/u/venv/bin/python3: …owned by
    # uid 1000…"): what they would have told is missing unless a file said it
    not_run: tuple[str, ...] = ()
    # output a step printed past its cap, counted, not kept ("nvidia-smi table: 768 more bytes
    # of output not kept (over its 262144-byte cap)"): what it would have told may be missing
    cut: tuple[str, ...] = ()
    complete: bool = True  # False: the stream ended before the end record


@dataclass(frozen=True)
class ContainerInfo:
    """Whether the probe ran in a container, and what a GPU runtime would have put there."""

    markers: tuple[str, ...] = ()  # /.dockerenv, /run/.containerenv, kubernetes, cgroup …
    devices: tuple[str, ...] = ()  # /dev/nvidia* nodes
    driver_libs: tuple[str, ...] = ()  # libcuda.so.1 / libnvidia-ml.so.1 found
    # "pod" (Kubernetes markers) or "container": the GPUs, nvidia-smi, devices and driver
    # libraries in these facts are what the runtime put in there, not the node's; None: neither
    scope: str | None = None
    # NVIDIA_VISIBLE_DEVICES, NVIDIA_DRIVER_CAPABILITIES, CUDA_VISIBLE_DEVICES of PID 1 (what
    # the container was started with)
    runtime_env: Mapping[str, str] = field(default_factory=dict)
    allocated: tuple[str, ...] = ()  # the device plugin's volume-mounts list (device IDs)


@dataclass(frozen=True)
class LoaderInfo:
    """What the dynamic loader is configured to search, and the libcuda builds it can find."""

    ld_conf: tuple[tuple[str, str], ...] = ()  # (file, directory) in /etc/ld.so.conf{,.d}
    libcuda: tuple[str, ...] = ()  # libcuda.so.<version> files in those dirs and compat dirs


@dataclass(frozen=True)
class GpuFabric:
    """One GPU's NVLink fabric registration (``nvidia-smi --query-gpu=fabric.state,…``)."""

    index: int | None
    state: str  # "Completed", "In Progress", "Not Started", "Not Supported", "N/A"
    status: str  # "Success" once Completed, else an error or "N/A"


@dataclass(frozen=True)
class FabricInfo:
    """The NVLink fabric of a multi-GPU host and the fabric manager that registers its GPUs."""

    gpus: tuple[GpuFabric, ...] = ()  # read only with two or more GPUs; () = not read
    query_rc: int | None = None  # the fabric query's exit status (None: not run)
    manager_pids: tuple[int, ...] = ()  # nv-fabricmanager processes (/proc/PID/comm)
    packages: tuple[tuple[str, str], ...] = ()  # (package, version) of nvidia-fabricmanager*

    @property
    def registered(self) -> bool | None:
        """False: some GPU of an NVLink fabric is not registered; None: no fabric seen."""
        joined = [g for g in self.gpus if g.state in FABRIC_STATES]
        if not joined:
            return None
        return all(g.state == "Completed" and g.status == "Success" for g in joined)


# fabric.state values of a GPU that joins an NVLink fabric (utkuozdemir/nvidia_gpu_exporter#448
# maps NVML's enum: Not Supported, Not Started, In Progress, Completed)
FABRIC_STATES = ("Not Started", "In Progress", "Completed")


@dataclass(frozen=True)
class LogLine:
    """A recent error-looking line of a serving unit's journal, masked on the host."""

    source: str  # "unit sglang.service"
    line: str  # as journalctl -o short-iso printed it, cut to 400 characters


@dataclass(frozen=True)
class Facts:
    host: HostInfo = field(default_factory=HostInfo)
    driver: DriverInfo = field(default_factory=DriverInfo)
    gpus: tuple[Gpu, ...] = ()
    toolkits: tuple[Toolkit, ...] = ()
    usr_local_cuda: str | None = None  # where /usr/local/cuda points (None: absent)
    contexts: tuple[EnvContext, ...] = ()  # contexts[0] is the SSH session
    pythons: tuple[PythonEnv, ...] = ()
    probe: ProbeMeta = field(default_factory=ProbeMeta)
    ptxas: tuple[PtxasBinary, ...] = ()  # Triton's bundled ptxas and TRITON_PTXAS* overrides
    ld_cache: tuple[LibFile, ...] = ()  # the CUDA libraries of ld.so.cache (`ldconfig -p`)
    schema: int = SCHEMA_VERSION
    container: ContainerInfo = field(default_factory=ContainerInfo)
    mig_devices: tuple[MigDevice, ...] = ()
    loader: LoaderInfo = field(
        default_factory=LoaderInfo
    )  # from nvidia-smi -L, when a GPU is in MIG mode
    gpu_load: tuple[GpuLoad, ...] = ()  # live: utilisation, memory, temperature per GPU
    gpu_processes: tuple[GpuProcess, ...] = ()  # live: compute processes on the GPUs
    changes: HostChanges = field(default_factory=HostChanges)  # what the host logged changing
    log_lines: tuple[LogLine, ...] = ()  # the serving units' recent error lines (symptoms)
    fabric: FabricInfo = field(default_factory=FabricInfo)  # NVLink fabric and its manager

    # -- lookups used by rules and the UI ---------------------------------------------
    def toolkit_at(self, home: str) -> Toolkit | None:
        norm = home.rstrip("/") or "/"
        for tk in self.toolkits:
            if (tk.home.rstrip("/") or "/") == norm:
                return tk
        return None

    def context(self, label: str | None) -> EnvContext | None:
        if label is None:
            return self.contexts[0] if self.contexts else None
        for c in self.contexts:
            if c.label == label:
                return c
        return None

    def python_context(self, py: PythonEnv) -> EnvContext | None:
        return self.context(py.context)

    # -- JSON -------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return _to_jsonable(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Facts:
        return _from_jsonable(cls, data)


# field → the JSON key older releases wrote (CONTRACT.md keeps it): written beside the field's
# own key, and read when a document has only the old one
JSON_ALIASES: Mapping[type, Mapping[str, str]] = MappingProxyType(
    {DriverInfo: MappingProxyType({"driver_version": "smi_version", "driver_cuda": "cuda_version"})}
)


@functools.cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    """The fields of a dataclass, None for any other type."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


def _to_jsonable(obj: Any) -> Any:
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    names = _field_names(type(obj))
    if names is not None:
        out = {name: _to_jsonable(getattr(obj, name)) for name in names}
        for name, alias in JSON_ALIASES.get(type(obj), {}).items():
            out[alias] = out[name]
        return out
    if isinstance(obj, Mapping):
        return {str(k): _to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return [_to_jsonable(v) for v in obj]
    return obj


def _from_jsonable(cls: Any, data: Mapping[str, Any]) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    aliases = JSON_ALIASES.get(cls, {})
    for f in dataclasses.fields(cls):
        key = f.name if f.name in data else aliases.get(f.name)
        if key is None or key not in data:
            continue
        value = data[key]
        hint = hints[f.name]
        kwargs[f.name] = _coerce(hint, value)
    return cls(**kwargs)


def _coerce(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return _from_jsonable(hint, value)
    if origin is tuple:
        inner = args[0] if args else Any
        return tuple(_coerce(inner, v) for v in value)
    if origin in (typing.Union, types.UnionType):
        for a in args:
            if a is type(None):
                continue
            return _coerce(a, value)
    return value
