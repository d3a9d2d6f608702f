"""`LD_LIBRARY_PATH` in the environment a server or interpreter is judged in names a CUDA
toolkit's `stubs` directory (`…/lib64/stubs`, `…/targets/<arch>/lib/stubs`). It holds a stub
`libcuda.so` — an empty driver API that exists only so programs can be linked on a machine
without a driver — and the loader searches `LD_LIBRARY_PATH` before `ld.so.cache`, so a program
that loads `libcuda.so` gets the stub instead of the driver's library, and every CUDA call then
fails with error 34, `CUDA_ERROR_STUB_LIBRARY` ("CUDA driver is a stub library"; numba, warp,
CuPy and JIT loaders ask for `libcuda.so` by that name, and images that add a `libcuda.so.1`
link beside the stub break torch too). A stubs directory belongs on the linker's path at build
time (`LIBRARY_PATH`, `-L`), never on the loader's at run time: remove it from `LD_LIBRARY_PATH`
where it is set. `warning` (`critical` for a serving process or unit). Judged from the variable
as the probe read it: the probe does not list the directory's files.

Examples — NVIDIA/warp#219 ("your system has the directory of the stub (typically
`/usr/local/cuda/lib64/stubs`) configured to be searched before the user-mode driver"),
numba/numba#9732 (`Mapped libcuda.so paths: /usr/local/cuda-11.8/targets/x86_64-linux/lib/stubs/
libcuda.so`, `CudaAPIError: [34]`), xmake-io/xmake#4686 (`LD_LIBRARY_PATH` naming
`/usr/local/cuda/lib64/stubs`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core.facts import Facts
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding

if TYPE_CHECKING:
    from tui.core.rules.subject import Subject

ID = "libcuda-stub-on-library-path"
VAR = "LD_LIBRARY_PATH"


def stub_dirs(value: str) -> list[str]:
    """The entries of a ``LD_LIBRARY_PATH`` value that are a toolkit's stubs directory."""
    out = []
    for entry in value.split(":"):
        norm = posixpath.normpath(entry) if entry else ""
        parent = posixpath.basename(posixpath.dirname(norm))
        if posixpath.basename(norm) == "stubs" and parent in ("lib64", "lib"):
            out.append(entry)
    return out


def rule_stub_on_path(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    seen: set[str] = set()
    for s in subs:
        ctx = s.context
        if ctx is None or ctx.label in seen or not ctx.vars.get(VAR):
            continue
        seen.add(ctx.label)
        value = ctx.vars[VAR]
        stubs = stub_dirs(value)
        if not stubs:
            continue
        severity: Severity = "critical" if ctx.kind in ("process", "unit") else "warning"
        where = ctx.label if ctx.kind in ("process", "unit") else f"the {ctx.label}"
        yield finding(
            ID,
            severity,
            f"{VAR} puts a toolkit's stub libcuda.so ahead of the driver's ({where})",
            f"In the {ctx.label} environment {VAR} names {', '.join(stubs)}: a CUDA toolkit's "
            "stubs directory, whose libcuda.so is an empty stand-in for linking without a "
            f"driver. The loader searches {VAR} before ld.so.cache, so a program that loads "
            "libcuda.so gets the stub, and every CUDA call fails with error 34 "
            "(CUDA_ERROR_STUB_LIBRARY, 'CUDA driver is a stub library'). Keep the stubs "
            f"directory for linking (LIBRARY_PATH, -L) and remove it from {VAR} where it is set.",
            [f"{VAR}={value} ({ctx.label})", *(f"stubs directory: {d}" for d in stubs)],
            s,
        )


FINDING = FindingRecord(
    id=ID,
    title="A toolkit's stub libcuda.so on the library path",
    severities=("critical", "warning"),
    reads=("contexts.vars",),
    rules=(rule_stub_on_path,),
    cause="stub libcuda.so on LD_LIBRARY_PATH",
    consequence="CUDA error 34",
    fires_when=(
        "`LD_LIBRARY_PATH` in the judged environment names a toolkit's `lib64/stubs`: its stub "
        "`libcuda.so` is found ahead of the driver's (CUDA error 34)"
    ),
    example="a unit with `LD_LIBRARY_PATH=/usr/local/cuda-12.8/lib64/stubs:…`",
    doc=__doc__ or "",
    examples=("NVIDIA/warp#219", "numba/numba#9732", "xmake-io/xmake#4686"),
)
