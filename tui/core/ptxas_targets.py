"""Which GPU targets each CUDA toolkit's ptxas accepts — data, derived from real ``ptxas --help``.

Source: the ``--gpu-name`` "Allowed values" of the real ptxas binaries recorded in
``shared/fixtures/ptxas/ptxas-<version>-gpu-name-help.txt`` (``tests/test_replay.py`` re-derives
this table from those files and fails if it drifts). ``compute_X`` and ``sm_X`` accept exactly
the same set in every release, so one set per toolkit is kept, written as FlashInfer spells a
target without its prefix: ``"90a"``, ``"120f"``.

``nvcc --list-gpu-arch`` is no substitute: it never lists the ``a``/``f`` variants.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from packaging.version import InvalidVersion, Version

# toolkit "major.minor" -> (ptxas release the list was read from, accepted targets)
_TABLE: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "11.8": ("11.8.89", "35 37 50 52 53 60 61 62 70 72 75 80 86 87 89 90"),
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
PTXAS_RELEASES: Mapping[str, str] = MappingProxyType(
    {mm: release for mm, (release, _targets) in _TABLE.items()}
)

_KNOWN = sorted(PTXAS_TARGETS, key=Version)


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
    exact = PTXAS_TARGETS.get(f"{v.major}.{v.minor}")
    if exact is not None:
        return target in exact
    lower = [k for k in _KNOWN if Version(k) < v]
    upper = [k for k in _KNOWN if Version(k) > v]
    if lower and upper:
        below, above = target in PTXAS_TARGETS[lower[-1]], target in PTXAS_TARGETS[upper[0]]
        return below if below == above else None
    if lower and Version(lower[-1]).major == v.major:
        return target in PTXAS_TARGETS[lower[-1]]
    return None


def first_toolkit_for(target: str) -> str | None:
    """The oldest recorded toolkit (``"12.9"``) whose ptxas accepts ``target``."""
    for mm in _KNOWN:
        if target in PTXAS_TARGETS[mm]:
            return mm
    return None
