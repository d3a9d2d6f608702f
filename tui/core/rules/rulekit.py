"""Text helpers every rule module shares: GPU names and indices, toolkit evidence, and the
``Finding`` constructor that names the environment a finding was judged in.

They live below the finding records (``tui.core.findings.<id>``) so that every rule can use
them without importing the registry that imports the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core.facts import Facts, Toolkit
from tui.core.findings import Finding, Severity

if TYPE_CHECKING:
    from tui.core.rules.subject import Subject


def cc_text(cc: tuple[int, int]) -> str:
    return f"{cc[0]}.{cc[1]}"


def gpu_names(facts: Facts, ccs: Iterable[tuple[int, int]]) -> str:
    wanted = {cc_text(c) for c in ccs}
    names = sorted(
        {f"{g.name} (SM {g.compute_cap})" for g in facts.gpus if g.compute_cap in wanted}
    )
    return ", ".join(names) or ", ".join(f"SM {c}" for c in sorted(wanted))


def gpu_evidence(facts: Facts, ccs: Iterable[tuple[int, int]]) -> list[str]:
    """``GPU0-7 NVIDIA … SM 12.0``: one line per kind of GPU, with its indices."""
    wanted = {cc_text(c) for c in ccs}
    groups: dict[tuple[str, str | None], list[int]] = {}
    for g in facts.gpus:
        if g.compute_cap in wanted:
            groups.setdefault((g.name, g.compute_cap), []).append(g.index)
    return [f"GPU{indices(ix)} {name} SM {cc}" for (name, cc), ix in groups.items()]


def indices(ix: Sequence[int]) -> str:
    if len(ix) > 2 and list(ix) == list(range(ix[0], ix[-1] + 1)):
        return f"{ix[0]}-{ix[-1]}"
    return ",".join(map(str, ix))


def toolkit_evidence(tk: Toolkit | None, nvcc: str | None) -> str:
    if tk is None:
        return f"no nvcc found at {nvcc}" if nvcc else "no CUDA toolkit found"
    if not tk.exists:
        return f"{tk.nvcc} does not exist"
    if not tk.executable:
        return f"{tk.nvcc} is not executable"
    version = tk.full_version or tk.version or "unknown version"
    return f"nvcc {version} at {tk.nvcc}"


def finding(
    id: str,
    severity: Severity,
    title: str,
    explanation: str,
    evidence: Sequence[str],
    subject: Subject | None = None,
) -> Finding:
    judged = ""
    if subject is not None and subject.python is not None and subject.context is not None:
        judged = f" (Judged in the {subject.context.label} environment.)"
    return Finding(
        id=id,
        severity=severity,
        title=title,
        explanation=explanation + judged,
        evidence=tuple(dict.fromkeys(evidence)),
        python=subject.python.path if subject and subject.python else None,
    )
