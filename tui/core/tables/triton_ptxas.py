"""Which ptxas each Triton release runs for a GPU, and how it is overridden — data.

Every row was read from the real PyPI wheel (``triton-<version>-cp312-…-manylinux…x86_64``):
``triton/backends/nvidia/compiler.py`` (``_path_to_binary``/``get_ptxas``,
``sm_arch_from_capability``, ``ptx_get_version``), ``triton/knobs.py`` (``env_nvidia_tool``:
the override variable's name) and ``--version`` of the binaries in
``triton/backends/nvidia/bin/``. ``tests/test_triton_ptxas_wheels_slow.py`` downloads each
release, runs its bundled ptxas and its own selection code, and fails when a row drifts.

How every release chooses (the same code shape throughout): the override variable first, when
it names a file that runs and prints ``release X.Y``; otherwise the bundled binary. Releases
from 3.3 bundle a second ptxas, ``ptxas-blackwell``, for newer GPUs, with its own override
variable — spelled ``TRITON_PTXAS-BLACKWELL_PATH`` in 3.3 (``binary.upper()``: a name no shell
can ``export``) and ``TRITON_PTXAS_BLACKWELL_PATH`` from 3.6. The GPU target passed to ptxas is
``sm_<cc>a`` for every GPU ≥ SM 9.0 from 3.3 (``sm_90a`` only, before). ``ptx_get_version``
raises for a ptxas CUDA release the Triton release has no PTX version for (13.x before 3.5,
12.7+ in 3.2): such an override stops every Triton compile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from packaging.version import InvalidVersion, Version

PTXAS = "ptxas"
PTXAS_BLACKWELL = "ptxas-blackwell"


@dataclass(frozen=True)
class TritonRelease:
    first: str  # the first release this row describes ("3.6.0")
    bundled: Mapping[str, str]  # binary name → its `--version` V string ("12.8.93")
    blackwell_from: int | None  # SM (major*10+minor) from which ptxas-blackwell is used
    blackwell_var: str | None  # the override variable of ptxas-blackwell
    a_suffix_from: int | None  # SM from which the target is sm_XYa (None: only SM 9.0)
    ptxas_cuda_below: str | None  # the first ptxas CUDA release ptx_get_version raises for
    source: str  # where the row was read
    wheels: str = ""  # the releases whose wheels were read for this row ("3.5.0, 3.5.1")

    def binary_for(self, sm: int) -> str:
        """The bundled binary this release runs for a GPU of ``sm`` (120 for SM 12.0)."""
        if self.blackwell_from is not None and sm >= self.blackwell_from:
            return PTXAS_BLACKWELL
        return PTXAS

    def override_var(self, binary: str) -> str:
        """The variable that overrides ``binary``."""
        if binary == PTXAS_BLACKWELL and self.blackwell_var:
            return self.blackwell_var
        return "TRITON_PTXAS_PATH"

    def target(self, sm: int) -> str:
        """The ``--gpu-name`` target without ``sm_`` ("121a"), as ptxas_targets spells it."""
        if sm == 90 or (self.a_suffix_from is not None and sm >= self.a_suffix_from):
            return f"{sm}a"
        return str(sm)

    def accepts_ptxas(self, cuda: str) -> bool | None:
        """Does ``ptx_get_version`` of this release accept a ptxas of CUDA ``cuda`` ("13.0")?"""
        try:
            v = Version(cuda)
        except InvalidVersion:
            return None
        if v.major < 10:
            return False
        if self.ptxas_cuda_below is None:
            return True
        return (v.major, v.minor) < _mm(self.ptxas_cuda_below)

    def accepted_ptxas(self) -> str:
        """In words: the ptxas CUDA releases ``ptx_get_version`` accepts."""
        if self.ptxas_cuda_below is None:
            return "any CUDA ≥ 10.0"
        major, minor = _mm(self.ptxas_cuda_below)
        last = f"{major - 1}.x" if minor == 0 else f"{major}.{minor - 1}"
        return f"CUDA 10.0 – {last} only"


def _mm(text: str) -> tuple[int, int]:
    v = Version(text)
    return v.major, v.minor


_WHEEL = "PyPI wheel triton-{v} (x86_64): backends/nvidia/compiler.py{knobs}, bin/ptxas* --version"
_KNOBS = ", knobs.py env_nvidia_tool"
_BW = "TRITON_PTXAS_BLACKWELL_PATH"


def _row(
    first: str, ptxas: str, blackwell: str | None, blackwell_from: int | None, var: str | None,
    a_from: int | None, below: str | None, read: str, knobs: str,
) -> TritonRelease:  # fmt: skip
    bundled = {PTXAS: ptxas, **({PTXAS_BLACKWELL: blackwell} if blackwell else {})}
    source = _WHEEL.format(v=read, knobs=knobs)
    return TritonRelease(
        first, MappingProxyType(bundled), blackwell_from, var, a_from, below, source, read
    )


# first, ptxas, ptxas-blackwell, blackwell from SM, its variable, sm_XYa from SM, first ptxas
# CUDA ptx_get_version raises for, the wheels read, where the override variable is named
# fmt: off
RELEASES: tuple[TritonRelease, ...] = (
    _row("3.0.0", "12.4.99", None, None, None, None, "13.0", "3.0.0, 3.1.0", ""),
    _row("3.2.0", "12.4.99", None, None, None, None, "12.7", "3.2.0", ""),
    _row("3.3.0", "12.4.99", "12.8.61", 100, "TRITON_PTXAS-BLACKWELL_PATH", 90, "13.0",
         "3.3.0, 3.3.1", ""),
    _row("3.4.0", "12.8.93", None, None, None, 90, "13.0", "3.4.0", _KNOBS),
    _row("3.5.0", "12.8.93", None, None, None, 90, None, "3.5.0, 3.5.1", _KNOBS),
    _row("3.6.0", "12.8.93", "12.9.86", 100, _BW, 90, None, "3.6.0", _KNOBS),
    _row("3.7.0", "12.8.93", "13.1.80", 100, _BW, 90, None, "3.7.0, 3.7.1", _KNOBS),
    _row("3.8.0", "12.9.86", "13.3.33", 100, _BW, 90, None, "3.8.0", _KNOBS),
    _row("3.9.0", "12.9.86", "13.4.59", 90, _BW, 90, None, "3.9.0", _KNOBS),
)
# fmt: on
# releases whose wheels were read (the slow test downloads exactly these)
VERIFIED = (
    "3.0.0",
    "3.1.0",
    "3.2.0",
    "3.3.0",
    "3.3.1",
    "3.4.0",
    "3.5.0",
    "3.5.1",
    "3.6.0",
    "3.7.0",
    "3.7.1",
    "3.8.0",
    "3.9.0",
)  # fmt: skip
OVERRIDE_VARS = (
    "TRITON_PTXAS_PATH",
    *dict.fromkeys(r.blackwell_var for r in RELEASES if r.blackwell_var),
)

_SORTED = sorted(RELEASES, key=lambda r: Version(r.first))


@dataclass(frozen=True)
class ReleaseMatch:
    release: TritonRelease
    newer_than_known: bool  # the installed Triton is newer than the newest row


def release_for(triton_version: str | None) -> ReleaseMatch | None:
    """The row describing ``triton_version`` ("3.5.1", "3.6.0+git…"); ``None`` before 3.0."""
    if not triton_version:
        return None
    try:
        v = Version(triton_version)
    except InvalidVersion:
        return None
    base = Version(v.base_version)
    rows = [r for r in _SORTED if Version(r.first) <= base]
    if not rows:
        return None
    newest = Version(_SORTED[-1].first)
    return ReleaseMatch(rows[-1], (base.major, base.minor) > (newest.major, newest.minor))


def sm_of(cc: tuple[int, int]) -> int:
    return cc[0] * 10 + cc[1]


def bundled_versions() -> Mapping[str, Mapping[str, str]]:
    """release "first" → binary → bundled V string (for the README and the slow test)."""
    return {r.first: dict(r.bundled) for r in RELEASES}
