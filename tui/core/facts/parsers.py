"""Every parser of tool and file text the probe brings back, in one place.

Each function takes the text exactly as the tool printed it (or the file held it) and returns
typed values or ``None``; none of them raises on any input. The formats and their variants are
described in ``shared/knowledge/cuda-facts.md`` §1, §2, §5.3 and the fixtures README.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tui.core.facts import DriverState, Gpu
from tui.core.systemd_syntax import split_environment
from tui.core.tables.gpu_table import cc_for_name

# ---------------------------------------------------------------------------------------
# nvcc
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NvccVersion:
    release: str  # "12.8" — what torch and FlashInfer compare
    full: str | None = None  # "12.8.93" — the V string


_NVCC_RELEASE = re.compile(r"release (\d+)\.(\d+),\s*V(\d+\.\d+(?:\.\d+)?)")
_NVCC_RELEASE_ONLY = re.compile(r"release (\d+)\.(\d+),")


def parse_nvcc_version(text: str) -> NvccVersion | None:
    """``nvcc --version`` → release and V string. Keys only on the ``release`` line."""
    m = _NVCC_RELEASE.search(text)
    if m:
        return NvccVersion(f"{int(m.group(1))}.{int(m.group(2))}", m.group(3))
    m = _NVCC_RELEASE_ONLY.search(text)
    if m:
        return NvccVersion(f"{int(m.group(1))}.{int(m.group(2))}")
    return None


_CUDA_VERSION_TXT = re.compile(r"^CUDA Version (\d+)\.(\d+)((?:\.\d+)*)\s*$", re.M)


def parse_cuda_version_txt(text: str) -> NvccVersion | None:
    """A toolkit's ``version.txt`` (CUDA ≤ 11.0: ``CUDA Version 11.0.228``) → its release."""
    m = _CUDA_VERSION_TXT.search(text)
    if m is None:
        return None
    release = f"{int(m.group(1))}.{int(m.group(2))}"
    return NvccVersion(release, f"{release}{m.group(3)}" if m.group(3) else None)


_CUDART_DEFINE = re.compile(r"^#define\s+CUDART_VERSION\s+(\d+)\s*$", re.M)


def parse_cudart_define(text: str) -> str | None:
    """``#define CUDART_VERSION  13000`` (cuda_runtime_api.h) → ``"13.0"``."""
    m = _CUDART_DEFINE.search(text)
    if m is None:
        return None
    n = int(m.group(1))
    return f"{n // 1000}.{n % 1000 // 10}"


_GPU_ARCH_LINE = re.compile(r"^\s*((?:compute|sm|lto)_\d+[af]?)\s*$")


def parse_nvcc_gpu_list(text: str) -> tuple[str, ...]:
    """``nvcc --list-gpu-arch`` / ``--list-gpu-code`` → ("compute_75", …) in printed order."""
    out: list[str] = []
    for line in text.splitlines():
        m = _GPU_ARCH_LINE.match(line)
        if m:
            out.append(m.group(1))
    return tuple(out)


_VERSION_TRIPLE = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)*$")


def parse_cuda_version_json(text: str) -> NvccVersion | None:
    """A toolkit's ``version.json``: the ``cuda_nvcc`` component version, else the toolkit's."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    for key in ("cuda_nvcc", "cuda"):
        entry = data.get(key)
        version = entry.get("version") if isinstance(entry, dict) else None
        if isinstance(version, str):
            m = _VERSION_TRIPLE.match(version.strip())
            if m:
                release = f"{int(m.group(1))}.{int(m.group(2))}"
                return NvccVersion(release, version.strip() if key == "cuda_nvcc" else None)
    return None


# ---------------------------------------------------------------------------------------
# nvidia-smi
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SmiHeader:
    smi_version: str | None  # "NVIDIA-SMI 580.65.05" (differs from the driver on WSL2)
    driver_version: str | None  # "Driver Version" (R≤595) or "KMD Version" (R610+)
    driver_cuda: str | None  # "CUDA Version" / "CUDA UMD Version": the driver's highest CUDA


_SMI_VERSION = re.compile(r"NVIDIA-SMI\s+(\d+(?:\.\d+)+)")
_SMI_DRIVER = re.compile(r"(?:Driver|KMD) Version\s*:\s*(\d+(?:\.\d+)+)")
_SMI_CUDA = re.compile(r"CUDA(?: UMD)? Version\s*:\s*(\d+\.\d+)")


def parse_smi_header(text: str) -> SmiHeader | None:
    """The header of the default ``nvidia-smi`` table, in all four layouts (R535 … R610+).

    Also reads the ``Driver Version : …`` / ``CUDA Version : …`` lines of ``nvidia-smi -q``.
    """
    driver = _SMI_DRIVER.search(text)
    cuda = _SMI_CUDA.search(text)
    smi = _SMI_VERSION.search(text)
    if not (driver or cuda):
        return None
    return SmiHeader(
        smi.group(1) if smi else None,
        driver.group(1) if driver else None,
        cuda.group(1) if cuda else None,
    )


# (substring in nvidia-smi's output, state) — first match wins; texts from the fixtures.
SMI_FAILURE_TEXTS: tuple[tuple[str, DriverState], ...] = (
    ("Driver/library version mismatch", "version-mismatch"),
    ("couldn't find libnvidia-ml.so", "no-nvml"),
    ("couldn't communicate with the NVIDIA driver", "not-loaded"),
    ("No devices were found", "error"),
)
# nvidia-smi exit codes (man page, R550) for when the text is not one we know.
SMI_EXIT_STATES: Mapping[int, DriverState] = {
    9: "not-loaded",
    12: "no-nvml",
    18: "version-mismatch",
}
TIMEOUT_EXIT_CODES = frozenset({124, 137})


def classify_smi_failure(text: str, exit_code: int | None) -> DriverState:
    """The driver state for an nvidia-smi run that produced no usable table."""
    if exit_code in TIMEOUT_EXIT_CODES:
        return "timeout"
    for needle, state in SMI_FAILURE_TEXTS:
        if needle in text:
            return state
    if exit_code is not None and exit_code in SMI_EXIT_STATES:
        return SMI_EXIT_STATES[exit_code]
    return "error"


QUERY_GPU_FIELDS: tuple[str, ...] = ("index", "name", "compute_cap", "memory.total", "uuid")
_NA = {"[N/A]", "N/A", "[Not Supported]", "Not Supported", "[Unknown Error]", ""}
_MIB = re.compile(r"^(\d+)\s*MiB$")
_CC = re.compile(r"^\d+\.\d+$")


def _na(value: str) -> str | None:
    v = value.strip()
    return None if v in _NA else v


def parse_query_gpu(text: str, fields: Sequence[str] = QUERY_GPU_FIELDS) -> tuple[Gpu, ...]:
    """``nvidia-smi --query-gpu=<fields> --format=csv[,noheader]`` → GPUs.

    A header row, when present, names the columns (``memory.total [MiB]``) and overrides
    ``fields``. A name containing ", " is rejoined from the surplus columns.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    cols = list(fields)
    if lines and "name" in [re.sub(r"\s*\[.*\]$", "", c.strip()) for c in lines[0].split(",")]:
        cols = [re.sub(r"\s*\[.*\]$", "", c.strip()) for c in lines[0].split(",")]
        lines = lines[1:]
    gpus: list[Gpu] = []
    for position, line in enumerate(lines):
        parts = [p.strip() for p in line.split(", ")]
        if len(parts) < len(cols) or "name" not in cols:
            continue
        name_at = cols.index("name")
        surplus = len(parts) - len(cols)
        if surplus:
            parts[name_at : name_at + surplus + 1] = [
                ", ".join(parts[name_at : name_at + surplus + 1])
            ]
        row = dict(zip(cols, parts, strict=True))
        gpu = _gpu_from_row(row, position)
        if gpu is not None:
            gpus.append(gpu)
    return tuple(gpus)


def _gpu_from_row(row: Mapping[str, str], position: int) -> Gpu | None:
    name = _na(row.get("name", ""))
    if not name:
        return None
    index_text = _na(row.get("index", ""))
    index = int(index_text) if index_text and index_text.isdigit() else position
    cc = _na(row.get("compute_cap", ""))
    cc_source = "nvidia-smi" if cc and _CC.match(cc) else None
    if cc_source is None:
        cc = cc_for_name(name)
        cc_source = "name-table" if cc else None
    mem = _na(row.get("memory.total", ""))
    mem_m = _MIB.match(mem) if mem else None
    memory = int(mem_m.group(1)) if mem_m else (int(mem) if mem and mem.isdigit() else None)
    return Gpu(
        index=index,
        name=name,
        compute_cap=cc,
        cc_source=cc_source,
        memory_mib=memory,
        uuid=_na(row.get("uuid", "")),
    )


_SMI_L = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: ([^)]+)\))?\s*$")


def parse_smi_list(text: str) -> tuple[Gpu, ...]:
    """``nvidia-smi -L`` → GPUs (compute capability from the name table)."""
    gpus: list[Gpu] = []
    for line in text.splitlines():
        m = _SMI_L.match(line)
        if m:
            name = m.group(2)
            cc = cc_for_name(name)
            gpus.append(
                Gpu(
                    index=int(m.group(1)),
                    name=name,
                    compute_cap=cc,
                    cc_source="name-table" if cc else None,
                    uuid=m.group(3),
                )
            )
    return tuple(gpus)


_TABLE_GPU_ROW = re.compile(r"^\|\s+(\d+)\s+(.+?)\s+(?:On|Off)\s+\|\s+[0-9A-Fa-f]+:[0-9A-Fa-f:.]+")
_TABLE_MEM = re.compile(r"(\d+)MiB\s*/\s*(\d+)MiB")


def parse_smi_table_gpus(text: str) -> tuple[Gpu, ...]:
    """GPU rows of the default table (names may be truncated: ``NVIDIA RTX PRO 6000 Blac...``)."""
    gpus: list[Gpu] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _TABLE_GPU_ROW.match(line)
        if not m:
            continue
        name = m.group(2)
        mem_m = _TABLE_MEM.search(lines[i + 1]) if i + 1 < len(lines) else None
        cc = cc_for_name(name)
        gpus.append(
            Gpu(
                index=int(m.group(1)),
                name=name,
                compute_cap=cc,
                cc_source="name-table" if cc else None,
                memory_mib=int(mem_m.group(2)) if mem_m else None,
            )
        )
    return tuple(gpus)


# ---------------------------------------------------------------------------------------
# /proc
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProcDriverVersion:
    version: str  # "580.95.05"
    kernel_module: str  # "open" | "proprietary"
    first_line: str


_NVRM = re.compile(r"NVRM version:.*?Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)\b")


def parse_proc_driver_version(text: str) -> ProcDriverVersion | None:
    """``/proc/driver/nvidia/version`` → kernel module version and flavour (open/proprietary)."""
    for line in text.splitlines():
        m = _NVRM.search(line)
        if m:
            flavour = "open" if "Open Kernel Module" in line else "proprietary"
            return ProcDriverVersion(m.group(1), flavour, line.strip())
    return None


# ---------------------------------------------------------------------------------------
# OS, environment files
# ---------------------------------------------------------------------------------------


# what shlex.split (posix, whitespace_split, no comments) gives as it is: a word with no
# whitespace, quote or backslash, or one such quoted word with no quote or backslash inside
_PLAIN_WORD = re.compile(r"[^ \t\r\n'\"\\]*")
_QUOTED_WORD = re.compile(r"\"([^\"\\]*)\"|'([^']*)'")


def _unquote(value: str) -> str:
    if _PLAIN_WORD.fullmatch(value):
        return value
    quoted = _QUOTED_WORD.fullmatch(value)
    if quoted:
        return quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
    try:
        parts = shlex.split(value, comments=False, posix=True)
    except ValueError:
        return value.strip().strip("'\"")
    return " ".join(parts)


def parse_os_release(text: str) -> dict[str, str]:
    """``/etc/os-release`` → {"ID": "ubuntu", "VERSION_ID": "22.04", …}."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
            out[key] = _unquote(value)
    return out


_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_VAR_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _expand(value: str, env: Mapping[str, str]) -> str:
    return _VAR_REF.sub(lambda m: env.get(m.group(1) or m.group(2), ""), value)


def apply_shell_assignments(lines: Iterable[str], env: Mapping[str, str]) -> dict[str, str]:
    """Replay plain ``[export] NAME=value`` lines (profile files, ``/etc/environment``) over env.

    Only unconditional assignments are understood: ``$NAME``/``${NAME}`` are expanded from the
    variables known so far, single quotes are literal. Anything else in the file is ignored.
    """
    out = dict(env)
    for line in lines:
        m = _ASSIGN.match(line)
        if not m:
            continue
        name, raw = m.group(1), m.group(2).strip()
        if len(raw) >= 2 and raw[0] == raw[-1] == "'":
            value = raw[1:-1]
        elif len(raw) >= 2 and raw[0] == raw[-1] == '"':
            value = _expand(raw[1:-1], out)
        else:
            value = _expand(re.split(r"\s+#", raw, maxsplit=1)[0].strip(), out)
        out[name] = value
    return out


def environment_files(values: Iterable[str]) -> tuple[tuple[str, bool], ...]:
    """``(path, optional)`` for a unit's ``EnvironmentFile=`` values, in order, as systemd takes
    them: each value is one absolute path or glob (spaces included); a ``-`` prefix makes it
    optional (missing is fine); an empty value resets the list; a relative path is ignored.
    """
    files: list[tuple[str, bool]] = []
    for value in values:
        text = value.strip()
        if not text:
            files.clear()
            continue
        optional = text.startswith("-")
        path = text[1:] if optional else text
        if path.startswith("/"):
            files.append((path, optional))
    return tuple(files)


def environment_file_paths(values: Iterable[str]) -> tuple[str, ...]:
    """The paths of :func:`environment_files`, without the optional flag."""
    return tuple(path for path, _optional in environment_files(values))


def parse_systemd_environment(
    environment_lines: Iterable[str], environment_file_lines: Iterable[str] = ()
) -> dict[str, str]:
    """A unit's ``Environment=`` values (in file order) plus its ``EnvironmentFile=`` contents.

    ``environment_lines`` are the values after ``Environment=``; an empty one resets the list,
    as systemd does. Variables from environment files override ``Environment=`` ones.
    """
    env: dict[str, str] = {}
    for value in environment_lines:
        if not value.strip():
            env.clear()
            continue
        words, _error = split_environment(value)  # systemd keeps what came before an error
        for word in words:
            name, sep, val = word.partition("=")
            if sep and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
                env[name] = val
    for line in environment_file_lines:
        stripped = line.strip()
        if not stripped or stripped[0] in "#;" or "=" not in stripped:
            continue
        name, _, val = stripped.partition("=")
        name = name.strip()
        if name.startswith("export "):
            name = name[len("export ") :].strip()
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            env[name] = _unquote(val)
    return env


# ---------------------------------------------------------------------------------------
# Python packages (read from files, never imported)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TorchVersionInfo:
    version: str  # "2.9.1+cu130"
    cuda: str | None  # "13.0"; None for CPU/ROCm builds
    hip: str | None = None


_TORCH_VERSION = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)
_TORCH_CUDA = re.compile(
    r"""^cuda(?:\s*:\s*[^=\n]+)?\s*=\s*(?:['"]([^'"]*)['"]|None)\s*$""", re.MULTILINE
)
_TORCH_HIP = re.compile(
    r"""^hip(?:\s*:\s*[^=\n]+)?\s*=\s*(?:['"]([^'"]*)['"]|None)\s*$""", re.MULTILINE
)


_DS_OPS = re.compile(r"^installed_ops\s*=\s*(\{.*\})\s*$", re.M)
_DS_ACCELERATOR = re.compile(r"^accelerator_name\s*=\s*['\"]([^'\"]*)['\"]", re.M)


def parse_deepspeed_installed(text: str) -> tuple[tuple[tuple[str, bool], ...], str | None] | None:
    """``deepspeed/git_version_info_installed.py`` (written by DeepSpeed's setup.py) →
    (``installed_ops`` as (op, prebuilt) pairs, ``accelerator_name``); None when unreadable."""
    m = _DS_OPS.search(text)
    if m is None:
        return None
    try:
        ops = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return None
    if not isinstance(ops, dict):
        return None
    acc = _DS_ACCELERATOR.search(text)
    pairs = tuple((str(k), v is True) for k, v in ops.items())
    return pairs, acc.group(1) if acc else None


def parse_torch_version_py(text: str) -> TorchVersionInfo | None:
    """``site-packages/torch/version.py`` → ``__version__`` and ``cuda`` (None for CPU builds)."""
    v = _TORCH_VERSION.search(text)
    if not v:
        return None
    cuda = _TORCH_CUDA.search(text)
    hip = _TORCH_HIP.search(text)
    return TorchVersionInfo(
        v.group(1),
        (cuda.group(1) or None) if cuda else None,
        (hip.group(1) or None) if hip else None,
    )


_ARCH_FLAGS = re.compile(r"^(?:sm|compute)_\d+[af]?(?: (?:sm|compute)_\d+[af]?)*$")


def parse_torch_arch_flags(text: str) -> tuple[str, ...] | None:
    """The arch-flag string of ``libtorch_python.so`` → ``torch.cuda.get_arch_list()``."""
    flags = text.strip()
    return tuple(flags.split()) if _ARCH_FLAGS.match(flags) else None


_BUILD_META_VERSION = re.compile(
    r"""^__version__\s*(?::\s*\w+\s*)?=\s*['"]([^'"]+)['"]""", re.MULTILINE
)


def parse_flashinfer_build_meta(text: str) -> str | None:
    """``flashinfer/_build_meta.py`` (``__version__ = '0.6.8'``) → "0.6.8"."""
    m = _BUILD_META_VERSION.search(text)
    return m.group(1) if m else None


def normalize_dist_name(name: str) -> str:
    """PEP 503 normalisation: ``Flashinfer_Python`` → ``flashinfer-python``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_dist_metadata(text: str) -> tuple[str, str] | None:
    """The header of a ``METADATA``/``PKG-INFO`` file → (normalised name, version)."""
    name = version = None
    for line in text.splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if not sep:
            continue
        if key.strip() == "Name" and name is None:
            name = value.strip()
        elif key.strip() == "Version" and version is None:
            version = value.strip()
    if name and version:
        return normalize_dist_name(name), version
    return None


_DIST_DIR = re.compile(r"^(.+?)-(\d[^-]*?)\.(?:dist-info|egg-info)$")


def parse_dist_dir_name(dirname: str) -> tuple[str, str] | None:
    """``torch-2.9.1.dist-info`` → ("torch", "2.9.1") — used when METADATA is unreadable."""
    m = _DIST_DIR.match(dirname)
    if not m:
        return None
    return normalize_dist_name(m.group(1)), m.group(2)
