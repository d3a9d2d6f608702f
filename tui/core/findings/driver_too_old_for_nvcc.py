"""The JIT toolkit is newer than the driver supports. `critical` across a major version (code
it builds links a runtime the driver cannot serve: error 35), `warning` within one (SASS runs,
PTX cannot be JIT-compiled: error 222).

```
[warning] nvcc 12.9 is newer than the driver's CUDA 12.8
The JIT toolkit (CUDA_HOME=/usr/local/cuda-12.9) is CUDA 12.9, but driver 570.148.08 supports CUDA
12.8 at most: SASS it builds runs (minor-version compatibility), but PTX it emits cannot be
JIT-compiled by this driver: 'the provided PTX was compiled with an unsupported toolchain' (error
222). Upgrade the driver (CUDA 12.9 needs ≥ 575.51.03) or use a toolkit no newer than CUDA 12.8.
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from packaging.version import Version

from tui.core.facts import Facts
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding as _finding
from tui.core.rules.rulekit import toolkit_evidence as _toolkit_evidence
from tui.core.rules.subject import Subject, toolkit_identity
from tui.core.tables import support_matrix

ID = "driver-too-old-for-nvcc"


def rule_driver_nvcc(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    d = facts.driver
    driver_cuda = facts.driver.max_cuda
    if d.state != "ok" or driver_cuda is None:
        return
    seen: set[str] = set()
    for s in subs:
        v = s.jit_version
        if v is None or s.jit_toolkit is None:
            continue
        key = toolkit_identity(s.jit_toolkit)
        if key in seen or Version(v) <= Version(driver_cuda):
            continue
        seen.add(key)
        major_gap = support_matrix.cuda_major(v) != support_matrix.cuda_major(driver_cuda)
        severity: Severity = "critical" if major_gap else "warning"
        consequence = (
            "code it builds links a CUDA runtime the driver cannot serve: "
            "'CUDA driver version is insufficient for CUDA runtime version' (error 35)"
            if major_gap
            else "SASS it builds runs (minor-version compatibility), but PTX it emits cannot be "
            "JIT-compiled by this driver: 'the provided PTX was compiled with an unsupported "
            "toolchain' (error 222)"
        )
        yield _finding(
            ID,
            severity,
            f"nvcc {v} is newer than the driver's CUDA {driver_cuda}",
            f"The JIT toolkit ({s.jit_origin}) is CUDA {v}, but driver "
            f"{d.driver_version or d.proc_version} supports CUDA {driver_cuda} at most: "
            f"{consequence}. Upgrade the driver (CUDA {v} needs ≥ "
            f"{support_matrix.TOOLKIT_MIN_DRIVER.get(_mm(v), support_matrix.driver_floor_for(v))}) or use a "
            f"toolkit no newer than CUDA {driver_cuda}.",
            [
                f"driver {d.driver_version or d.proc_version} (CUDA {driver_cuda})",
                s.jit_origin,
                _toolkit_evidence(s.jit_toolkit, s.jit_nvcc),
            ],
            s,
        )


def _mm(version: str) -> str:
    v = Version(version)
    return f"{v.major}.{v.minor}"


FINDING = FindingRecord(
    id=ID,
    title="The JIT toolkit is newer than the driver's CUDA",
    severities=("critical", "warning"),
    reads=(
        "driver.state",
        "driver.driver_version",
        "driver.driver_cuda",
        "toolkits.version",
        "contexts.vars",
    ),
    rules=(rule_driver_nvcc,),
    fixes=("use-installed-toolkit",),
    cause="driver CUDA {driver_cuda} < nvcc {jit}",
    consequence="JIT-built kernels fail to load",
    implicates=("driver", "jit"),
    fires_when=(
        "the JIT toolkit is newer than the driver's CUDA (error 35 across majors, PTX error 222 "
        "within one)"
    ),
    example="nvcc 12.9 on driver 570 (CUDA 12.8)",
    doc=__doc__ or "",
)
