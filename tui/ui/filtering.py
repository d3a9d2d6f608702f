"""The hosts table's `/` filter: terms that must all match, optionally scoped as ``key:value``.

``blackwell``           any field contains it (name, tags, GPU, versions, finding ids and titles)
``tag:sglang``          a tag contains it
``finding:arch``        a finding id or title contains it (a value no finding id holds and no
                        host matches is an error: "unknown finding id")
``gpu:5090`` ``sm:12``  GPU name / compute capability
``torch:13`` ``torch:cu130`` ``torch:2.9.1`` (its CUDA or its version)
``nvcc:12.8`` ``driver:580`` ``flashinfer:0.6`` ``status:unreach`` ``severity:crit``
``-tag:demo`` ``!ct2``  negation: hosts that do NOT match
``gpu:5090|b200``       OR: any of the values (also for plain words: ``ct200|h100``)
``driver:<580`` ``sm:>=10`` ``torch:<2.9`` ``nvcc:>=12.8`` ``cuda:>=13``  comparisons,
                        numerically, with ``<`` ``<=`` ``>`` ``>=`` ``=`` on the versions the
                        column shows (``cuda``: the driver's CUDA; as text, any of the CUDAs)
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
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
        "cuda": lambda s: [s.row.driver_cuda, s.row.torch_cuda, s.row.jit],
    }
)

# what a comparison compares, per key: the versions the column shows, not every string the
# key matches as text (driver:<580 is the driver's version, not the driver's CUDA 12.9)
VERSIONS: Mapping[str, Callable[[HostState], list[str]]] = MappingProxyType(
    {
        "driver": lambda s: [s.row.driver],
        "torch": lambda s: (
            [p.torch_version for p in s.facts.pythons if p.torch_version] if s.facts else []
        ),
        "cuda": lambda s: [s.row.driver_cuda],
        "nvcc": lambda s: [s.row.jit],
        "sm": lambda s: [s.row.sm],
        "flashinfer": lambda s: [s.row.flashinfer],
    }
)

COMPARE: Mapping[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = MappingProxyType(
    {
        "<=": operator.le,
        ">=": operator.ge,
        "<": operator.lt,
        ">": operator.gt,
        "=": operator.eq,
    }
)
_COMPARISON = re.compile(r"^(<=|>=|<|>|=)(\d+(?:\.\d+)*)$")
_VERSION = re.compile(r"\d+(?:\.\d+)*")


class FilterError(ValueError):
    pass


@dataclass(frozen=True)
class Term:
    key: str | None  # a FIELDS key, or None: any field
    values: tuple[str, ...]  # lower case; any of them matches (``a|b``)
    negated: bool = False
    op: str | None = None  # a COMPARE key: ``values`` holds one version

    @property
    def value(self) -> str:
        return "|".join(self.values)


def parse_filter(text: str) -> list[Term]:
    """``"tag:sglang -ct201 driver:<580"`` → its terms; unknown keys and bad comparisons raise
    ``FilterError`` (its message quotes what was typed as typed)."""
    terms: list[Term] = []
    for word in text.split():
        negated = word[0] in "-!" and len(word) > 1
        body = word[1:] if negated else word
        key, sep, value = body.partition(":")
        if sep and key.lower() in FIELDS:  # "finding:" alone: hosts with any finding
            terms.append(_scoped(key.lower(), value.lower(), negated, word))
        elif sep and key and value:
            known = ", ".join(FIELDS)
            raise FilterError(f"unknown filter key '{key}' in '{word}'; use one of {known}")
        else:
            values = tuple(v for v in body.lower().split("|") if v)
            terms.append(Term(None, values or (body.lower(),), negated))
    return terms


def _scoped(key: str, value: str, negated: bool, word: str) -> Term:
    if value[:1] in ("<", ">", "="):
        if key not in VERSIONS:
            raise FilterError(f"'{word}': only {', '.join(VERSIONS)} have versions to compare")
        found = _COMPARISON.match(value)
        if found is None:
            raise FilterError(
                f"'{word}': a comparison is <, <=, >, >= or = and a version (driver:<580)"
            )
        return Term(key, (found.group(2),), negated, found.group(1))
    return Term(key, tuple(v for v in value.split("|") if v) or ("",), negated)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def _compares(term: Term, state: HostState) -> bool:
    """Any version the column shows ("570.86.15", "8.0, 9.0", "2.9.1+cu130" → 2.9.1),
    compared on as many parts as were typed (driver:<580 compares 570)."""
    assert term.key is not None and term.op is not None
    wanted, compare = _version(term.values[0]), COMPARE[term.op]
    found = [_version(m) for text in VERSIONS[term.key](state) for m in _VERSION.findall(text)]
    return any(compare(v[: len(wanted)], wanted) for v in found)


def matches(state: HostState, terms: list[Term]) -> bool:
    for term in terms:
        if term.op is not None:
            hit = _compares(term, state)
        else:
            fields = [term.key] if term.key else list(FIELDS)
            haystack = [v.lower() for name in fields for v in FIELDS[name](state) if v]
            hit = any(v in h for h in haystack for v in term.values)
        if hit == term.negated:
            return False
    return True


def unknown_finding(terms: list[Term], states: Iterable[HostState]) -> str | None:
    """The error for a ``finding:`` value no finding id holds and no host matches (a typo
    would otherwise read as "no host matches"); None when every one is known."""
    from tui.core.findings.registry import FINDING_IDS  # the rules: only when asked

    states = list(states)
    for term in terms:
        if term.key != "finding" or term.op is not None:
            continue
        for value in term.values:
            if any(value in i for i in FINDING_IDS):
                continue
            if any(value in v.lower() for s in states for v in _findings(s)):
                continue
            close = [i for i in FINDING_IDS if value[:4] in i][:3]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            return f"unknown finding id '{value}'{hint}; see docs/findings.md for every id"
    return None
