"""cuDNN 9's sub-libraries: which library ``dlopen``s each by name, and where the loader looks.

cuDNN 9 is a frontend (``libcudnn.so.9``, what torch links or preloads) that opens its
sub-libraries at run time by bare name (``libcudnn_graph.so.9.20.0``, then ``.9.20``, then
``.9`` — the ``%s.%d.%d.%d`` formats in both loaders); ``libcudnn_graph.so.9`` in turn opens the
engines and the heuristic. A name without a slash is searched, by glibc's rules, in the caller's
``DT_RPATH`` (only when it has no ``DT_RUNPATH``), then ``LD_LIBRARY_PATH``, then its
``DT_RUNPATH``, then ld.so.cache. So a sub-library comes from outside the wheel when the wheel
lacks it (ld.so.cache is next: pytorch#187824, the 9.20.0.48 wheel without
``libcudnn_engines_tensor_ir.so.9``), or when its caller has a ``RUNPATH`` and
``LD_LIBRARY_PATH`` holds another cuDNN 9 — and cuDNN then stops with
``CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH``.

Each row is read from a real ``nvidia-cudnn-*`` wheel (``readelf -d`` for RPATH/RUNPATH,
``strings`` for the names each loader opens, the zip directory for the files it ships;
``tests/test_cudnn_sublibs_wheels_slow.py`` checks the table against the wheels).
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

FRONTEND = "libcudnn"
GRAPH = "libcudnn_graph"


@dataclass(frozen=True)
class CudnnRelease:
    first: str  # the first cuDNN release this row describes
    frontend_rpath: bool  # libcudnn.so.9 has DT_RPATH $ORIGIN (searched before LD_LIBRARY_PATH)
    frontend_opens: tuple[str, ...]  # stems libcudnn.so.9 opens by name
    graph_opens: tuple[str, ...]  # stems libcudnn_graph.so.9 opens by name (it has a RUNPATH)
    ships: tuple[str, ...]  # the sub-libraries the wheel puts in nvidia/cudnn/lib
    source: str


_FRONT = ("libcudnn_ops", "libcudnn_graph", "libcudnn_cnn", "libcudnn_adv")
_ENGINES = (
    "libcudnn_engines_precompiled",
    "libcudnn_engines_runtime_compiled",
    "libcudnn_heuristic",
)
_TENSOR_IR = "libcudnn_engines_tensor_ir"
RELEASES: tuple[CudnnRelease, ...] = (
    CudnnRelease(
        "9.1.0",
        False,
        _FRONT,
        _ENGINES,
        (*_FRONT, *_ENGINES),
        "nvidia_cudnn_cu12-9.1.0.70, sha256 165764f4…; 9.10.2.21, sha256 949452be…",
    ),
    CudnnRelease(
        "9.20.0",
        False,
        _FRONT,
        (*_ENGINES, _TENSOR_IR),
        (*_FRONT, *_ENGINES),  # the engine its graph opens is not in the wheel
        "nvidia_cudnn_cu13-9.20.0.48, sha256 0c45dd8e…",
    ),
    CudnnRelease(
        "9.24.0",
        True,
        (*_FRONT, "libcudnn_ext"),
        (*_ENGINES, _TENSOR_IR),
        (*_FRONT, "libcudnn_ext", *_ENGINES, _TENSOR_IR),
        "nvidia_cudnn_cu13-9.24.0.43, sha256 71f181cd…",
    ),
)
VERIFIED = ("9.1.0.70", "9.10.2.21", "9.20.0.48", "9.24.0.43")


def release_for(version: str | None) -> CudnnRelease | None:
    """The row for a cuDNN version (the newest row at or below it; None before 9.1)."""
    if not version:
        return None
    try:
        v = Version(version)
    except InvalidVersion:
        return None
    if v.major != 9:
        return None
    rows = [r for r in RELEASES if Version(r.first) <= v]
    return rows[-1] if rows else None


def opened_by(row: CudnnRelease) -> tuple[tuple[str, str, bool], ...]:
    """(sub-library stem, the library that opens it, whether that caller's own directory comes
    before ``LD_LIBRARY_PATH``) for every sub-library of the release."""
    return tuple(
        [(s, FRONTEND, row.frontend_rpath) for s in row.frontend_opens]
        + [(s, GRAPH, False) for s in row.graph_opens]
    )


def first_shipping(stem: str, after: str) -> CudnnRelease | None:
    """The first release read after ``after`` whose wheel ships ``stem``."""
    try:
        v = Version(after)
    except InvalidVersion:
        return None
    return next((r for r in RELEASES if Version(r.first) > v and stem in r.ships), None)
