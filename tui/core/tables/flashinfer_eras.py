"""FlashInfer's behaviour by release — the version table the replay reads.

Every row was read from the FlashInfer source of that era and executed against the real code
(``shared/knowledge/flashinfer-logic.md`` §1–§7, §13). An era starts at ``first`` and lasts
until the next row's ``first``; versions are compared with ``packaging.version``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from packaging.version import InvalidVersion, Version

# How get_cuda_path() (or its predecessor) finds the toolkit.
PathMode = Literal[
    "torch",  # ≤0.3.0: torch.utils.cpp_extension.CUDA_HOME or "/usr/local/cuda"
    "torch-then-which",  # 0.3.1: torch CUDA_HOME, else the *file* `which nvcc` prints, else raise
    "env-which",  # 0.4.x: CUDA_HOME or CUDA_PATH, else dirname(dirname(which nvcc)), else raise
    "env-which-default",  # 0.5.0+: … else /usr/local/cuda if it exists, else raise
]
# How get_cuda_version() finds the CUDA version.
VersionMode = Literal[
    "none",  # < 0.2.14: nothing asks nvcc
    "nvcc-only",  # 0.2.14 – 0.3.1: nvcc at torch CUDA_HOME (or PATH); no fallback
    "nvcc-then-torch",  # 0.4.0+: nvcc, fallback torch.version.cuda for the caught errors
]
# What an explicit FLASHINFER_CUDA_ARCH_LIST entry without a letter suffix becomes.
ListMode = Literal[
    "torch",  # ≤0.3.0: no FLASHINFER_CUDA_ARCH_LIST; torch's TORCH_CUDA_ARCH_LIST/device caps
    "append-a",  # 0.3.1: "a" appended when major >= 9
    "verbatim",  # 0.4.0 – 0.6.6
    "normalise",  # 0.6.7+: _normalize_cuda_arch, errors escape at import
]
# _normalize_cuda_arch for SM 12.x (the only majors whose suffix depends on the CUDA version).
Sm12Mode = Literal[
    "a",  # ≤0.6.6: 12.m → 12.ma, no CUDA check
    "0.6.7",  # ≥12.9 → every 12.x → 12.0f; else raise "SM 12.x requires CUDA >= 12.9"
    "0.6.8",  # 12.0 → 0f (≥12.9); 12.m → ma (≥12.9); else raise "SM 12.x requires CUDA >= 12.9"
    "0.7.1",  # 12.0 → 0f (≥12.9) / 0a (≥12.8) / raise; 12.m → ma (≥12.9) / raise
]
WarningFormat = Literal["str", "repr"]  # f"…: {e}." or "…: %r. torch.cuda.is_available()=…"
CheckFormat = Literal["sm75+", "sm75-or-higher", "sm75-or-higher-detected"]
WorkspaceMode = Literal["archs", "version-archs"]  # <cache>/<archs> or <cache>/<ver>/<archs>


@dataclass(frozen=True)
class Era:
    first: str  # first release of the era
    name: str  # how explanations refer to it: "0.6.8 – 0.7.0.post1"
    path_mode: PathMode
    version_mode: VersionMode
    list_mode: ListMode
    sm12: Sm12Mode
    warning_format: WarningFormat
    check_format: CheckFormat
    check_all_ge75: bool  # 0.2.x: every arch must be ≥ 7.5 (later: any one ≥ 7.5 suffices)
    workspace: WorkspaceMode
    sm7_attribute_error: bool  # 0.3.1: detected SM 7.x crash the check with AttributeError


ERAS: tuple[Era, ...] = (
    Era(
        first="0.2.0",
        name="0.2.0 – 0.2.13",
        path_mode="torch",
        version_mode="none",
        list_mode="torch",
        sm12="a",
        warning_format="str",
        check_format="sm75+",
        check_all_ge75=True,
        workspace="archs",
        sm7_attribute_error=False,
    ),
    Era(
        first="0.2.14",
        name="0.2.14 – 0.2.14.post1",
        path_mode="torch",
        version_mode="nvcc-only",
        list_mode="torch",
        sm12="a",
        warning_format="str",
        check_format="sm75+",
        check_all_ge75=True,
        workspace="archs",
        sm7_attribute_error=False,
    ),
    Era(
        first="0.3.0",
        name="0.3.0",
        path_mode="torch",
        version_mode="nvcc-only",
        list_mode="torch",
        sm12="a",
        warning_format="str",
        check_format="sm75-or-higher",
        check_all_ge75=False,
        workspace="archs",
        sm7_attribute_error=False,
    ),
    Era(
        first="0.3.1",
        name="0.3.1",
        path_mode="torch-then-which",
        version_mode="nvcc-only",
        list_mode="append-a",
        sm12="a",
        warning_format="str",
        check_format="sm75-or-higher",
        check_all_ge75=False,
        workspace="archs",
        sm7_attribute_error=True,
    ),
    Era(
        first="0.4.0",
        name="0.4.0",
        path_mode="env-which",
        version_mode="nvcc-then-torch",
        list_mode="verbatim",
        sm12="a",
        warning_format="str",
        check_format="sm75-or-higher",
        check_all_ge75=False,
        workspace="archs",
        sm7_attribute_error=False,
    ),
    Era(
        first="0.4.1",
        name="0.4.1",
        path_mode="env-which",
        version_mode="nvcc-then-torch",
        list_mode="verbatim",
        sm12="a",
        warning_format="str",
        check_format="sm75-or-higher",
        check_all_ge75=False,
        workspace="version-archs",
        sm7_attribute_error=False,
    ),
    Era(
        first="0.5.0",
        name="0.5.0 – 0.6.6",
        path_mode="env-which-default",
        version_mode="nvcc-then-torch",
        list_mode="verbatim",
        sm12="a",
        warning_format="str",
        check_format="sm75-or-higher",
        check_all_ge75=False,
        workspace="version-archs",
        sm7_attribute_error=False,
    ),
    Era(
        first="0.6.7",
        name="0.6.7",
        path_mode="env-which-default",
        version_mode="nvcc-then-torch",
        list_mode="normalise",
        sm12="0.6.7",
        warning_format="str",
        check_format="sm75-or-higher",
        check_all_ge75=False,
        workspace="version-archs",
        sm7_attribute_error=False,
    ),
    Era(
        first="0.6.8",
        name="0.6.8 – 0.7.0.post1",
        path_mode="env-which-default",
        version_mode="nvcc-then-torch",
        list_mode="normalise",
        sm12="0.6.8",
        warning_format="str",
        check_format="sm75-or-higher",
        check_all_ge75=False,
        workspace="version-archs",
        sm7_attribute_error=False,
    ),
    Era(
        first="0.7.1",
        name="0.7.1 and later",
        path_mode="env-which-default",
        version_mode="nvcc-then-torch",
        list_mode="normalise",
        sm12="0.7.1",
        warning_format="repr",
        check_format="sm75-or-higher-detected",
        check_all_ge75=False,
        workspace="version-archs",
        sm7_attribute_error=False,
    ),
)

# The first release that maps SM 12.0 with nvcc 12.8 to a usable target again (PR #3633).
SM120_CUDA128_FIXED_IN = "0.7.1"


def parse_version(version: str) -> Version | None:
    try:
        return Version(version)
    except InvalidVersion:
        return None


def era_for(version: str) -> Era | None:
    """The era a FlashInfer version belongs to; ``None`` for unparsable or pre-0.2 versions."""
    v = parse_version(version)
    if v is None:
        return None
    found = None
    for era in ERAS:
        # ".dev"/"rc" builds of a release behave like the release they precede
        if Version(v.base_version) >= Version(era.first):
            found = era
    return found
