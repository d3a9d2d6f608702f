"""One host's verdict as fleet plumbing reads it: up or not, whether the probe saw everything,
its findings (id and severity), its stack, and when it was probed.

``export prometheus`` (``tui.core.prometheus``) and ``check`` (``tui.core.checks``) both
render these. Every string in a ``HostVerdict`` has been through ``tui.core.redact`` already;
a host whose probe could not see everything is never "healthy": ``complete`` is False and the
reasons are in ``unseen``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tui.core.completeness import unseen
from tui.core.cuda_versions import driver_max_cuda, path_nvcc, primary_python, primary_replay
from tui.core.diagnosis import Diagnosis
from tui.core.facts import Facts
from tui.core.findings import SEVERITY_ORDER
from tui.core.judged import Judged
from tui.core.redact import redact, redact_text

# the stack labels (CONTRACT.md), in the order the info series carries them
STACK_KEYS = ("driver", "driver_cuda", "torch", "torch_cuda", "nvcc", "jit_cuda", "flashinfer")


@dataclass(frozen=True)
class FindingBrief:
    id: str
    severity: str
    title: str


@dataclass(frozen=True)
class HostVerdict:
    host: str
    up: bool  # reached and read (False: unreachable, a refused host key, no facts at all)
    unseen: tuple[str, ...]  # why the probe may have missed something (empty: it saw it all)
    findings: tuple[FindingBrief, ...]  # most severe first, one per (id, severity)
    stack: Mapping[str, str] | None  # STACK_KEYS → version ("" unknown); None without facts
    probed_at: float  # Unix time the probe ended

    @property
    def complete(self) -> bool:
        return self.up and not self.unseen

    def worst(self) -> FindingBrief | None:
        return self.findings[0] if self.findings else None


def host_stack(facts: Facts, diagnosis: Diagnosis | None) -> dict[str, str]:
    """The seven versions of the stack ("" when unknown): the driver and its highest CUDA,
    torch and its CUDA for the interpreter the story is about, the toolkit of the first
    ``nvcc`` on PATH, the CUDA FlashInfer's JIT resolves, and FlashInfer's version."""
    py = primary_python(facts, diagnosis)
    replay = primary_replay(diagnosis)
    nvcc, toolkit = path_nvcc(facts)
    torch_cuda = ""
    if py is not None and py.torch_version:
        torch_cuda = py.torch_cuda or "cpu"
    flashinfer = replay.version if replay else ((py.flashinfer_version or "") if py else "")
    return {
        "driver": facts.driver.driver_version or facts.driver.proc_version or "",
        "driver_cuda": driver_max_cuda(facts) or "",
        "torch": (py.torch_version or "") if py else "",
        "torch_cuda": torch_cuda,
        "nvcc": ((toolkit.version or "") if toolkit else "") if nvcc else "",
        "jit_cuda": (replay.jit_cuda or "") if replay else "",
        "flashinfer": flashinfer,
    }


def host_verdict(judged: Judged, probed_at: float) -> HostVerdict:
    """The verdict of one judged probe, redacted."""
    result = judged.result
    facts = result.facts
    up = result.reachable and facts is not None
    briefs: dict[tuple[str, str], FindingBrief] = {}
    for f in judged.diagnosis.findings if judged.diagnosis else ():
        briefs.setdefault((f.id, f.severity), FindingBrief(f.id, f.severity, f.title))
    ordered = sorted(briefs.values(), key=lambda b: SEVERITY_ORDER[b.severity])  # stable
    stack = None
    if facts is not None:
        stack = MappingProxyType(redact(host_stack(facts, judged.diagnosis)))
    return HostVerdict(
        host=redact_text(result.host.name),
        up=up,
        unseen=tuple(redact_text(r) for r in unseen(result)),
        findings=tuple(FindingBrief(b.id, b.severity, redact_text(b.title)) for b in ordered),
        stack=stack,
        probed_at=probed_at,
    )
