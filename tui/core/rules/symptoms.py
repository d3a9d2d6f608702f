"""Error signatures (``symptom_signatures.yaml``, data) and matching them against a log.

``match_text`` finds every line a signature names, one match per signature (its first line),
and marks the primary error: the first line of a signature that is not a cascade (CUDA reports
errors asynchronously, so what follows the first CUDA error is often its consequence; an NCCL
timeout usually follows another rank's failure). The catalogue is checked on load: unique ids,
compilable patterns, causes only for version conflicts and advice only for the others.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import yaml

CATALOGUE = "symptom_signatures.yaml"
Kind = Literal["version-conflict", "not-a-version-conflict"]
MAX_LINE = 400  # a matched line is cut to this many characters
MAX_LINES = 20000  # lines of text read; the rest is ignored (a log tail is 300)
# a traceback's echo of the source line that raised (``raise RuntimeError("…")``): the error's
# own line follows it, so it never names the match
_SOURCE_RAISE = re.compile(r"\braise\s+[\w.]+\(")


@dataclass(frozen=True)
class Cause:
    finding: str
    needs: tuple[str, ...]  # facts that must have been seen to rule it out (tui.core.judge.explain)
    ruled_out: str  # why it is ruled out when they were seen and the finding did not fire


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    kind: Kind
    patterns: tuple[re.Pattern[str], ...]
    causes: tuple[Cause, ...] = ()
    advice: str | None = None
    cascade: bool = False
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class Match:
    signature: Signature
    line: str  # the matched line, stripped and cut (not yet redacted)
    index: int  # its line number in the text, from 0
    primary: bool = False


class CatalogueError(ValueError):
    """The shipped catalogue is malformed (a defect, caught by the tests)."""


def _signature(raw: Mapping[str, Any], where: str) -> Signature:
    try:
        kind = raw["kind"]
        if kind not in ("version-conflict", "not-a-version-conflict"):
            raise CatalogueError(f"{where}: kind {kind!r}")
        causes = tuple(
            Cause(c["finding"], tuple(c.get("needs") or ()), c["ruled_out"])
            for c in raw.get("causes") or ()
        )
        patterns = tuple(re.compile(p, re.IGNORECASE) for p in raw["patterns"])
        sig = Signature(
            id=raw["id"],
            title=raw["title"],
            kind=kind,
            patterns=patterns,
            causes=causes,
            advice=raw.get("advice"),
            cascade=bool(raw.get("cascade", False)),
            examples=tuple(raw.get("examples") or ()),
        )
    except (KeyError, TypeError, re.error) as exc:
        raise CatalogueError(f"{where}: {exc!r}") from exc
    if not patterns:
        raise CatalogueError(f"{where}: no patterns")
    if (kind == "version-conflict") != bool(causes):
        raise CatalogueError(f"{where}: version conflicts and only they name causes")
    if (kind == "not-a-version-conflict") != bool(sig.advice):
        raise CatalogueError(f"{where}: errors that are not version conflicts need advice")
    return sig


@functools.cache
def catalogue() -> tuple[Signature, ...]:
    """Every signature, in the catalogue's order."""
    text = resources.files(__package__).joinpath(CATALOGUE).read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    sigs = tuple(_signature(r, f"{CATALOGUE} entry {i + 1}") for i, r in enumerate(raw))
    ids = [s.id for s in sigs]
    if len(set(ids)) != len(ids):
        raise CatalogueError(f"{CATALOGUE}: duplicate ids")
    return sigs


def signature(signature_id: str) -> Signature | None:
    return next((s for s in catalogue() if s.id == signature_id), None)


def _line_match(line: str, sigs: Sequence[Signature]) -> Signature | None:
    for sig in sigs:
        if any(p.search(line) for p in sig.patterns):
            return sig
    return None


def match_text(text: str) -> tuple[Match, ...]:
    """One match per signature found in ``text`` (its first line), in text order, the
    primary error marked."""
    sigs = catalogue()
    found: dict[str, Match] = {}
    for index, raw in enumerate(text.splitlines()[:MAX_LINES]):
        line = raw.strip()
        if not line or _SOURCE_RAISE.search(line):
            continue
        sig = _line_match(line[: MAX_LINE * 4], sigs)
        if sig is not None and sig.id not in found:
            found[sig.id] = Match(sig, line[:MAX_LINE], index)
    matches = sorted(found.values(), key=lambda m: m.index)
    first = next((m for m in matches if not m.signature.cascade), None)
    if first is None and matches:
        first = matches[0]
    return tuple(Match(m.signature, m.line, m.index, primary=m is first) for m in matches)
