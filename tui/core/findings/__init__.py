"""Findings: the diagnosis output types here, one module per finding id beside them.

``Finding``, ``FixSuggestion`` and ``FlashInferReplay`` are the ``findings`` and ``flashinfer``
objects of the contract, produced by ``tui.core.rules.evaluate`` / ``tui.core.rules.flashinfer_replay`` and
consumed by the CLI, the report, the fix engine and the UI. What each finding *is* — its rule,
fixes, reason line and documentation — is its record (``tui.core.findings.record``), one
module per id, collected by ``tui.core.findings.registry``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any, Literal

Severity = Literal["critical", "warning", "info"]
SEVERITY_ORDER: Mapping[str, int] = MappingProxyType({"critical": 0, "warning": 1, "info": 2})


@dataclass(frozen=True)
class FixSuggestion:
    id: str  # a fix id (tui.core.fixes.registry)
    title: str
    params: Mapping[str, str] = field(default_factory=dict)
    resolves: tuple[str, ...] = ()  # finding ids gone after replaying the rules on the fixed facts
    needs_root: bool = False
    commands: tuple[str, ...] = ()  # exact shell, for preview

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "params": dict(self.params),  # asdict() cannot deep-copy the mappingproxy
            "resolves": list(self.resolves),
            "needs_root": self.needs_root,
            "commands": list(self.commands),
        }


@dataclass(frozen=True)
class Finding:
    id: str
    severity: Severity
    title: str
    explanation: str
    evidence: tuple[str, ...] = ()
    python: str | None = None
    fixes: tuple[FixSuggestion, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "severity": self.severity,
            "title": self.title,
            "explanation": self.explanation,
            "evidence": list(self.evidence),
            "python": self.python,
            "fixes": [f.to_json() for f in self.fixes],
        }


# FlashInferReplay fields whose JSON key (CONTRACT.md) says less about which CUDA it is
REPLAY_JSON_KEYS = {"jit_cuda": "cuda_version", "jit_cuda_source": "cuda_version_source"}


@dataclass(frozen=True)
class FlashInferReplay:
    python: str
    version: str
    cuda_home: str | None
    jit_cuda: str | None  # JSON "cuda_version": what FlashInfer's get_cuda_version() returns
    jit_cuda_source: Literal["nvcc", "torch"] | None  # JSON "cuda_version_source"
    target_cuda_archs: tuple[str, ...]
    check_cuda_arch: Literal["pass", "fail"]
    import_error: str | None = None
    warnings: tuple[str, ...] = ()
    compiles: bool | None = None
    # extras beyond the contract (documented in the README)
    context: str | None = None  # the EnvContext label whose environment was replayed
    nvcc_invoked: str | None = None  # FLASHINFER_NVCC or <home>/bin/nvcc
    gencodes: tuple[str, ...] = ()
    check_message: str | None = None
    workspace: str | None = None

    def to_json(self) -> dict[str, Any]:
        d = {REPLAY_JSON_KEYS.get(k, k): v for k, v in asdict(self).items()}
        for k in ("target_cuda_archs", "warnings", "gencodes"):
            d[k] = list(d[k])
        return d
