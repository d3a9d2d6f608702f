"""Several toolkits are installed and, in one environment, `CUDA_HOME`, `which nvcc` and
`/usr/local/cuda` point at different versions. `warning` when `CUDA_HOME` (which FlashInfer
and torch take first) is older than what `PATH` suggests; `info` otherwise.

```
[warning] Several CUDA toolkits, and the ssh session points at different ones
In the ssh session environment the toolkit pointers disagree: CUDA_HOME=/usr/local/cuda-12.8 gives
CUDA 12.8; `which nvcc` = /usr/local/cuda-13.0/bin/nvcc gives CUDA 13.0. FlashInfer and torch take
CUDA_HOME=/usr/local/cuda-12.8 first, so they build with CUDA 12.8, whatever `nvcc --version` in a
shell says.
```
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence

from packaging.version import Version

from tui.core.facts import Facts, Toolkit
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules_current import rule_current_vs_login
from tui.core.subject import Subject, toolkit_by_nvcc, toolkit_identity

ID = "toolkit-shadowed"


def rule_toolkit_shadowed(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    distinct = {toolkit_identity(t): t for t in facts.toolkits if t.exists and t.version}
    if len({t.version for t in distinct.values()}) < 2:
        return
    seen: set[str] = set()
    for s in subs:
        ctx = s.context
        if ctx is None or ctx.label in seen:
            continue
        seen.add(ctx.label)
        pointers: list[tuple[str, Toolkit]] = []
        home = ctx.vars.get("CUDA_HOME")
        if home:
            tk = toolkit_by_nvcc(facts, posixpath.join(home, "bin/nvcc"))
            if tk is not None:
                pointers.append((f"CUDA_HOME={home}", tk))
        if ctx.which_nvcc:
            tk = toolkit_by_nvcc(facts, ctx.which_nvcc[0])
            if tk is not None and tk.wrapper_of:
                tk = toolkit_by_nvcc(facts, tk.wrapper_of) or tk
            if tk is not None:
                pointers.append((f"`which nvcc` = {ctx.which_nvcc[0]}", tk))
        if ctx.usr_local_cuda_exists and facts.usr_local_cuda:
            tk = toolkit_by_nvcc(facts, posixpath.join(facts.usr_local_cuda, "bin/nvcc"))
            if tk is not None:
                pointers.append((f"/usr/local/cuda → {facts.usr_local_cuda}", tk))
        versions = {tk.version for _, tk in pointers}
        if len(versions) < 2:
            continue
        used = pointers[0][1]
        newer = [
            p
            for p in pointers
            if p[1].version and Version(p[1].version) > Version(used.version or "0")
        ]
        severity: Severity = (
            "warning" if newer and pointers[0][0].startswith("CUDA_HOME") else "info"
        )
        listing = "; ".join(f"{name} gives CUDA {tk.version}" for name, tk in pointers)
        explanation = (
            f"In the {ctx.label} environment the toolkit pointers disagree: {listing}. "
            f"FlashInfer and torch take {pointers[0][0]} first, so they build with CUDA "
            f"{used.version}, whatever `nvcc --version` in a shell says."
        )
        if severity == "info":
            explanation += (
                " Nothing resolves to an older toolkit than the shell suggests, so this is "
                "only a tidiness issue."
            )
        yield Finding(
            id=ID,
            severity=severity,
            title=f"Several CUDA toolkits, and the {ctx.label} points at different ones",
            explanation=explanation,
            evidence=tuple(
                [f"{name} → {tk.home} (CUDA {tk.version})" for name, tk in pointers]
                + [f"installed: {t.home} (CUDA {t.version})" for t in distinct.values()]
            ),
            python=s.python.path if s.python else None,
        )


FINDING = FindingRecord(
    id=ID,
    title="Several CUDA toolkits, and the pointers to them disagree",
    severities=("warning", "info"),
    reads=(
        "toolkits.home",
        "toolkits.version",
        "contexts.vars",
        "contexts.which_nvcc",
        "usr_local_cuda",
    ),
    rules=(rule_toolkit_shadowed,),
    late_rules=(rule_current_vs_login,),
    fixes=("use-installed-toolkit",),
    cause="several toolkits",
    consequence="CUDA_HOME, PATH and /usr/local/cuda disagree",
    implicates=("path", "jit"),
    fires_when="several toolkits and `CUDA_HOME`, `which nvcc`, `/usr/local/cuda` disagree",
    example="`CUDA_HOME` → 12.8 while `which nvcc` → 13.0",
    doc=__doc__ or "",
)
