"""Which GPU targets each CUDA toolkit's ptxas accepts — data, derived from real ``ptxas --help``.

Source: the ``--gpu-name`` "Allowed values" of the real ptxas binaries recorded in
``shared/fixtures/ptxas/ptxas-<version>-gpu-name-help.txt`` (``tests/test_replay.py`` re-derives
this table from those files and fails if it drifts). ``compute_X`` and ``sm_X`` accept exactly
the same set in every release, so one set per toolkit is kept, written as FlashInfer spells a
target without its prefix: ``"90a"``, ``"120f"``.

``nvcc --list-gpu-arch`` is no substitute: it never lists the ``a``/``f`` variants.

Also from real ptxas binaries, captured by this project (``tui/demo/captures/ptxas/``, checked
by ``tests/test_ptxas_old_slow.py``): 11.7.99 and 12.0.140, from the PyPI wheels
``nvidia-cuda-nvcc-cu11``/``-cu12``. Toolkits older than any wheel (10.2 – 11.1) are rows from
public sources, each cited (``RELEASE_NOTE_TARGETS``); they only hold base targets (no
``a``/``f`` variants existed before 12.0).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from packaging.version import InvalidVersion, Version

# toolkit "major.minor" -> (ptxas release the list was read from, accepted targets)
_TABLE: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "11.7": ("11.7.99", "35 37 50 52 53 60 61 62 70 72 75 80 86 87"),
        "11.8": ("11.8.89", "35 37 50 52 53 60 61 62 70 72 75 80 86 87 89 90"),
        "12.0": ("12.0.140", "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a"),
        "12.1": ("12.1.105", "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a"),
        "12.4": ("12.4.131", "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a"),
        "12.6": ("12.6.85", "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a"),
        "12.8": (
            "12.8.93",
            "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a 100 100a 101 101a 120 120a",
        ),
        "12.9": (
            "12.9.86",
            "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a 100 100a 100f 101 101a 101f "
            "103 103a 103f 120 120a 120f 121 121a 121f",
        ),
        "13.0": (
            "13.0.88",
            "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 110 110a 110f "
            "120 120a 120f 121 121a 121f",
        ),
        "13.1": (
            "13.1.115",
            "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 110 110a 110f "
            "120 120a 120f 121 121a 121f",
        ),
        "13.2": (
            "13.2.86",
            "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 110 110a 110f "
            "120 120a 120f 121 121a 121f",
        ),
        "13.3": (
            "13.3.73",
            "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 110 110a 110f "
            "120 120a 120f 121 121a 121f",
        ),
        "13.4": (
            "13.4.92",
            "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 107 107a 107f "
            "110 110a 110f 120 120a 120f 121 121a 121f",
        ),
        "13.5": (
            "13.5.37",
            "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 107 107a 107f "
            "110 110a 110f 120 120a 120f 121 121a 121f",
        ),
    }
)

PTXAS_TARGETS: Mapping[str, frozenset[str]] = MappingProxyType(
    {mm: frozenset(targets.split()) for mm, (_release, targets) in _TABLE.items()}
)

_SM30_32_GONE = "llvm/llvm-project commit 0f49116e ('sm_30 and sm_32 were removed in cuda-11.0')"
_NIX = "NixOS/nixpkgs pkgs/development/compilers/cudatoolkit/gpus.nix (min/max CUDA per SM)"
# toolkit "major.minor" -> (where the list comes from, accepted targets): releases no wheel
# ships a ptxas of. Between two rows a target both accept is answered, one they disagree on
# is unknown (sm_87 between 11.1 and 11.7: sources disagree on 11.4 or 11.5).
_RELEASE_NOTES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "10.2": (
            f"{_NIX}: 3.0 – 7.5 from CUDA 10.0, 3.0/3.2 up to 10.2; {_SM30_32_GONE}",
            "30 32 35 37 50 52 53 60 61 62 70 72 75",
        ),
        "11.0": (
            "clang's CUDA table, reviews.llvm.org D77670 (SM_80 needs CUDA 11.0); " + _SM30_32_GONE,
            "35 37 50 52 53 60 61 62 70 72 75 80",
        ),
        "11.1": (
            "CUDA 11.1 release notes (RN-06722-001_v11.1); clang's CUDA table, "
            "reviews.llvm.org D88668 (SM_86 needs CUDA 11.1)",
            "35 37 50 52 53 60 61 62 70 72 75 80 86",
        ),
    }
)
RELEASE_NOTE_TARGETS: Mapping[str, frozenset[str]] = MappingProxyType(
    {mm: frozenset(targets.split()) for mm, (_source, targets) in _RELEASE_NOTES.items()}
)
TARGETS: Mapping[str, frozenset[str]] = MappingProxyType({**RELEASE_NOTE_TARGETS, **PTXAS_TARGETS})
PTXAS_RELEASES: Mapping[str, str] = MappingProxyType(
    {mm: release for mm, (release, _targets) in _TABLE.items()}
)

_KNOWN = sorted(TARGETS, key=Version)


def _major_minor(version: str) -> Version | None:
    try:
        v = Version(version)
    except InvalidVersion:
        return None
    return Version(f"{v.major}.{v.minor}")


def accepts(toolkit_version: str, target: str) -> bool | None:
    """Can this toolkit's nvcc/ptxas build ``target`` (``"120a"``)? ``None``: not known.

    A release between two recorded ones is answered when both neighbours agree (12.2–12.5
    behave like 12.1 and 12.6); a release newer than the newest recorded one of the same
    major is answered like that newest one (targets are only dropped at a major bump).
    """
    v = _major_minor(toolkit_version)
    if v is None:
        return None
    exact = TARGETS.get(f"{v.major}.{v.minor}")
    if exact is not None:
        return target in exact
    lower = [k for k in _KNOWN if Version(k) < v]
    upper = [k for k in _KNOWN if Version(k) > v]
    if lower and upper:
        below, above = target in TARGETS[lower[-1]], target in TARGETS[upper[0]]
        return below if below == above else None
    if lower and Version(lower[-1]).major == v.major:
        return target in TARGETS[lower[-1]]
    return None


def first_toolkit_for(target: str) -> str | None:
    """The oldest recorded toolkit (``"12.9"``) whose ptxas accepts ``target``; ``None`` when
    the oldest recorded one (10.2) already does — it is older than the table, not 10.2."""
    for mm in _KNOWN:
        if target in TARGETS[mm]:
            return None if mm == _KNOWN[0] else mm
    return None


def last_toolkit_for(target: str) -> str | None:
    """The newest recorded toolkit that still accepts ``target`` (``"12.9"`` for SM 7.0),
    ``None`` when the newest one does."""
    accepting = [mm for mm in _KNOWN if target in TARGETS[mm]]
    if not accepting or accepting[-1] == _KNOWN[-1]:
        return None
    return accepting[-1]


# Every CUDA toolkit release (major.minor) from 10.2 on — there is no 12.7 (NVIDIA's table of
# toolkit releases and their minimum drivers, cuda-facts §3.1): whether a gap between two rows
# hides a release decides whether a row's first appearance is a minimum.
CUDA_RELEASES = (
    "10.2", "11.0", "11.1", "11.2", "11.3", "11.4", "11.5", "11.6", "11.7", "11.8",
    "12.0", "12.1", "12.2", "12.3", "12.4", "12.5", "12.6", "12.8", "12.9",
    "13.0", "13.1", "13.2", "13.3", "13.4", "13.5",
)  # fmt: skip


def toolkit_need(target: str, version: str) -> str:
    """What a toolkit needs to be to build ``target`` ("87"), in words, for a toolkit of
    ``version`` that cannot: an older one when the target was dropped, else the first release
    known to accept it — or only a range when unrecorded releases lie before it."""
    last = last_toolkit_for(target)
    v = _major_minor(version)
    if last is not None and v is not None and v > Version(last):
        return f"was dropped after CUDA {last}: use nvcc ≤ {last}"
    first = first_toolkit_for(target)
    if first is None:
        return "needs nvcc ≤ 10.2 or an older toolkit than detective-tui's table"
    before = [k for k in _KNOWN if Version(k) < Version(first)]
    prev = before[-1] if before else None
    if prev is not None and target not in TARGETS[prev]:
        between = [r for r in CUDA_RELEASES if Version(prev) < Version(r) < Version(first)]
        if between:
            return f"needs an nvcc newer than {prev} (the first one known to build it is {first})"
    return f"needs nvcc ≥ {first}"
