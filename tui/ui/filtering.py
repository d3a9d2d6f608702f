"""The hosts table's `/` filter: words that must all match, optionally scoped as ``key:value``.

``blackwell``           any field contains it (name, tags, GPU, versions, finding ids and titles)
``tag:sglang``          a tag contains it
``finding:arch``        a finding id or title contains it
``gpu:5090`` ``sm:12``  GPU name / compute capability
``torch:13`` ``torch:cu130`` ``torch:2.9.1`` (its CUDA or its version)
``nvcc:12.8`` ``driver:580`` ``flashinfer:0.6`` ``status:unreach`` ``severity:crit``
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from tui.ui.fleet_state import HostState, status_text


def _findings(state: HostState) -> list[str]:
    if state.diagnosis is None:
        return []
    out = []
    for f in state.diagnosis.findings:
        out += [f.id, f.title]
    return out


def _torch(state: HostState) -> list[str]:
    """torch's CUDA as the table shows it (13.0), and every probed torch version
    (2.9.1+cu130), so both ``torch:13.0`` and ``torch:cu130`` / ``torch:2.9.1`` match."""
    versions = [p.torch_version for p in state.facts.pythons] if state.facts else []
    return [state.row.torch_cuda, *(v for v in versions if v)]


FIELDS: Mapping[str, Callable[[HostState], list[str]]] = MappingProxyType(
    {
        "name": lambda s: [s.name, s.host.target],
        "tag": lambda s: list(s.host.tags),
        "finding": _findings,
        "gpu": lambda s: [s.row.gpu],
        "sm": lambda s: [s.row.sm],
        "driver": lambda s: [s.row.driver, s.row.driver_cuda],
        "torch": _torch,
        "nvcc": lambda s: [s.row.jit],
        "flashinfer": lambda s: [s.row.flashinfer, s.row.verdict],
        "status": lambda s: [s.status, s.row.status, status_text(s)],
        "reason": lambda s: [s.row.reason],
        "severity": lambda s: [s.row.worst],
    }
)


class FilterError(ValueError):
    pass


def parse_filter(text: str) -> list[tuple[str | None, str]]:
    """``"tag:sglang 12.8"`` → ``[("tag", "sglang"), (None, "12.8")]``; unknown keys raise."""
    terms: list[tuple[str | None, str]] = []
    for word in text.split():
        key, sep, value = word.partition(":")
        if sep and key.lower() in FIELDS:
            terms.append((key.lower(), value.lower()))
        elif sep and key and value:
            known = ", ".join(FIELDS)
            raise FilterError(f"unknown filter key {key!r}; use one of {known}")
        else:
            terms.append((None, word.lower()))
    return terms


def matches(state: HostState, terms: list[tuple[str | None, str]]) -> bool:
    for key, value in terms:
        fields = [key] if key else list(FIELDS)
        haystack = [v.lower() for name in fields for v in FIELDS[name](state)]
        if not any(value in h for h in haystack):
            return False
    return True
