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

import dataclasses
import posixpath
from collections.abc import Iterable, Sequence

from packaging.version import Version

from tui.core.facts import EnvContext, Facts, Toolkit
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding
from tui.core.rules.subject import Subject, subject_in, toolkit_by_nvcc, toolkit_identity

# The rule, in short:
# The `local` target's own environment against a login shell's.
#
# For ``local`` the probe runs in detective-tui's own environment — an activated conda env,
# ``module load cuda``, an exported ``CUDA_HOME``/``PATH`` — which is where the user's next
# command runs, so interpreters are judged in it (serving processes and units still first).
# Where a login shell (a new terminal, cron, a service started from it) would resolve the JIT
# toolkit differently, this says so: an ``info`` ``toolkit-shadowed`` finding, and a line of
# evidence on every finding judged in the current environment.

ID = "toolkit-shadowed"


def _contexts(facts: Facts) -> tuple[EnvContext | None, EnvContext | None]:
    current = next((c for c in facts.contexts if c.kind == "current"), None)
    login = next((c for c in facts.contexts if c.kind == "login"), None)
    return current, login


def _describe(s: Subject) -> str:
    tk = s.jit_toolkit
    version = f"CUDA {tk.version}" if tk is not None and tk.version else "no usable toolkit"
    return f"{s.jit_origin} → {version}"


def login_difference(facts: Facts, s: Subject) -> tuple[Subject, str] | None:
    """(the login shell's view, in words) when it resolves the JIT toolkit otherwise."""
    current, login = _contexts(facts)
    if current is None or login is None or s.context is not current:
        return None
    other = subject_in(facts, s.python, login)
    mine, theirs = s.jit_toolkit, other.jit_toolkit
    same = (mine is None and theirs is None) or (
        mine is not None
        and theirs is not None
        and toolkit_identity(mine) == toolkit_identity(theirs)
    )
    if same:
        return None
    return other, f"a login shell resolves {_describe(other)} instead of {_describe(s)}"


def rule_current_vs_login(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    seen: set[str | None] = set()
    for s in subs:
        found = login_difference(facts, s)
        key = s.python.path if s.python else None
        if found is None or key in seen:
            continue
        seen.add(key)
        other, words = found
        yield finding(
            ID,
            "info",
            "Your current environment and a login shell use different CUDA toolkits",
            f"In this environment (where your next command runs) the JIT toolkit comes from "
            f"{_describe(s)}; {words.split(' instead of ')[0]}. What you run from this shell "
            "is judged above; a new terminal, cron, or a service started from a login shell "
            "gets the other one — make the setting permanent (profile, module file, the "
            "service's unit) if that is the one you want.",
            [f"current environment: {_describe(s)}", f"login shell: {_describe(other)}"],
            s,
        )


def annotate(facts: Facts, subs: Sequence[Subject], findings: Sequence[Finding]) -> list[Finding]:
    """Findings judged in the current environment get a line saying what a login shell does."""
    notes: dict[str | None, str] = {}
    for s in subs:
        found = login_difference(facts, s)
        if found is not None:
            notes[s.python.path if s.python else None] = found[1]
    return [
        dataclasses.replace(f, evidence=(*f.evidence, notes[f.python]))
        if f.python in notes and f.id != ID and f.severity != "info"
        else f
        for f in findings
    ]


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
