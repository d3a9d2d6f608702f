"""A host's stack in one line of values: what history lists, drift groups by and a diff
starts from.

``stack(facts, diagnosis)`` gives the keys of ``history --json``'s ``stack`` (CONTRACT.md):
the driver and its highest CUDA, the torch and FlashInfer of the interpreter the story is about
(``primary_python``) and torch's CUDA, the toolkit of the first ``nvcc`` on the
SSH session's PATH, and the CUDA FlashInfer's JIT resolves (the replay; None when not judged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.core.facts import Facts, PythonEnv, Toolkit
from tui.core.findings import FlashInferReplay

if TYPE_CHECKING:
    from tui.core.judge.diagnosis import Diagnosis

STACK_KEYS = ("driver", "driver_cuda", "torch", "torch_cuda", "nvcc", "jit_cuda", "flashinfer")
Stack = dict[str, "str | None"]


def stack(facts: Facts | None, diagnosis: Diagnosis | None) -> Stack:
    """The stack values (None where a part is absent or unknown)."""
    out: Stack = dict.fromkeys(STACK_KEYS)
    if facts is None:
        return out
    d = facts.driver
    out["driver"] = d.driver_version or d.proc_version
    out["driver_cuda"] = d.max_cuda
    py = primary_python(facts, diagnosis)
    if py is not None:
        out["torch"] = py.torch_version
        out["torch_cuda"] = py.torch_cuda
        out["flashinfer"] = py.flashinfer_version
    _, toolkit = path_nvcc(facts)
    out["nvcc"] = toolkit.version if toolkit is not None else None
    replay = primary_replay(diagnosis)
    out["jit_cuda"] = replay.jit_cuda if replay is not None else None
    return out


def primary_python(facts: Facts, diagnosis: Diagnosis | None) -> PythonEnv | None:
    """The interpreter the story is about: FlashInfer's first, else torch's, else the first."""
    by_path = {p.path: p for p in facts.pythons}
    if diagnosis is not None:
        for fi in diagnosis.flashinfer:
            if fi.python in by_path:
                return by_path[fi.python]
    for p in facts.pythons:
        if p.torch_version:
            return p
    return facts.pythons[0] if facts.pythons else None


def primary_replay(diagnosis: Diagnosis | None) -> FlashInferReplay | None:
    if diagnosis is None or not diagnosis.flashinfer:
        return None
    return diagnosis.flashinfer[0]


def path_nvcc(facts: Facts) -> tuple[str | None, Toolkit | None]:
    """The first ``nvcc`` on the SSH session's PATH and the toolkit it belongs to."""
    ctx = facts.context(None)
    if ctx is None or not ctx.which_nvcc:
        return None, None
    first = ctx.which_nvcc[0]
    for tk in facts.toolkits:
        if first in (tk.nvcc, tk.wrapper_of):
            return first, tk
    for tk in facts.toolkits:
        if tk.realpath and first.startswith(tk.realpath.rstrip("/") + "/"):
            return first, tk
    return first, None
