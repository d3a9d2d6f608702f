"""A host's stack in one line of values: what history lists, drift groups by and a diff
starts from.

``stack(facts, diagnosis)`` gives the keys of ``history --json``'s ``stack`` (CONTRACT.md):
the driver and its highest CUDA, the torch and FlashInfer of the interpreter the story is about
(``cuda_versions.primary_python``) and torch's CUDA, the toolkit of the first ``nvcc`` on the
SSH session's PATH, and the CUDA FlashInfer's JIT resolves (the replay; None when not judged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.core.cuda_versions import driver_max_cuda, path_nvcc, primary_python, primary_replay
from tui.core.facts import Facts

if TYPE_CHECKING:
    from tui.core.diagnosis import Diagnosis

STACK_KEYS = ("driver", "driver_cuda", "torch", "torch_cuda", "nvcc", "jit_cuda", "flashinfer")
Stack = dict[str, "str | None"]


def stack(facts: Facts | None, diagnosis: Diagnosis | None) -> Stack:
    """The stack values (None where a part is absent or unknown)."""
    out: Stack = dict.fromkeys(STACK_KEYS)
    if facts is None:
        return out
    d = facts.driver
    out["driver"] = d.driver_version or d.proc_version
    out["driver_cuda"] = driver_max_cuda(facts)
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
