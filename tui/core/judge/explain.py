"""From a symptom to its cause: the signatures a text matches, each candidate cause judged on
a host's diagnosis (the ``explain --json`` object of CONTRACT.md).

A cause is ``confirmed`` when its finding fired on the host, ``ruled-out`` when the facts the
finding judges were seen (``NEEDS``) and it did not fire, and ``possible`` otherwise: no host,
a partial probe, facts the probe did not see, or a check this version does not make. An error
that is not a version conflict has no causes and its advice; a text that matches no signature
is ``"recognised": false`` — never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from tui.core.facts import Facts
from tui.core.findings import Finding
from tui.core.findings.registry import FINDING_IDS
from tui.core.judge.judged import Judged
from tui.core.rules.completeness import unseen
from tui.core.rules.symptoms import Cause, Match, match_text

Status = Literal["confirmed", "possible", "ruled-out"]
MARK: Mapping[str, str] = MappingProxyType(
    {"confirmed": "✔ confirmed", "possible": "? possible ", "ruled-out": "✘ ruled out"}
)


def _torch(f: Facts) -> bool:
    return any(p.torch_version for p in f.pythons)


# fact group → (seen in these facts?, what to say when it was not). "deep" is the --deep run.
NEEDS: Mapping[str, tuple[Callable[[Facts], bool], str]] = MappingProxyType(
    {
        "gpus": (lambda f: bool(f.gpus), "the probe saw no GPU"),
        "driver": (
            lambda f: f.driver.state == "ok" and f.driver.driver_cuda is not None,
            "the driver's CUDA is not known (nvidia-smi did not answer)",
        ),
        "torch": (_torch, "no inspected interpreter has torch (add the server's as python:)"),
        "torch_arch": (
            lambda f: any(p.torch_arch_list is not None for p in f.pythons),
            "torch's arch list was not read",
        ),
        "flashinfer": (
            lambda f: any(p.flashinfer_version for p in f.pythons),
            "no inspected interpreter has FlashInfer (add the server's as python:)",
        ),
        "fabric": (
            lambda f: f.driver.state == "ok" and (len(f.gpus) == 1 or f.fabric.query_rc == 0),
            "the GPUs' fabric state was not read (nvidia-smi did not answer, or predates "
            "fabric.state)",
        ),
    }
)


@dataclass(frozen=True)
class CauseVerdict:
    finding: str
    status: Status
    why: str

    def to_json(self) -> dict[str, str]:
        return {"finding": self.finding, "status": self.status, "why": self.why}


@dataclass(frozen=True)
class ExplainedError:
    match: Match
    causes: tuple[CauseVerdict, ...]

    def to_json(self) -> dict[str, Any]:
        sig = self.match.signature
        return {
            "signature": sig.id,
            "line": self.match.line,
            "primary": self.match.primary,
            "causes": [c.to_json() for c in self.causes],
            "title": sig.title,
            "kind": sig.kind,
            "advice": sig.advice,
            "examples": list(sig.examples),
        }


@dataclass(frozen=True)
class Explanation:
    host: str | None
    errors: tuple[ExplainedError, ...]
    source: str  # where the text came from: "stdin", "unit sglang.service on ct200", …
    host_error: str | None = None  # the host could not be reached or probed

    @property
    def recognised(self) -> bool:
        return bool(self.errors)

    @property
    def explained_by(self) -> tuple[str, ...]:
        """Confirmed findings, the primary error's first."""
        ordered = sorted(self.errors, key=lambda e: not e.match.primary)
        ids = [c.finding for e in ordered for c in e.causes if c.status == "confirmed"]
        return tuple(dict.fromkeys(ids))

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "recognised": self.recognised,
            "explained_by": list(self.explained_by),
            "errors": [e.to_json() for e in self.errors],
            "source": self.source,
            "host_error": self.host_error,
        }


def _confirmed_why(found: Sequence[Finding]) -> str:
    first = found[0]
    evidence = "; ".join(first.evidence[:3])
    where = f" ({first.python})" if first.python else ""
    return f"{first.title}{where}" + (f": {evidence}" if evidence else "")


def judge_cause(cause: Cause, judged: Judged | None) -> CauseVerdict:
    """One candidate cause on one host (None: no host, so ``possible``)."""
    if judged is None:
        return CauseVerdict(cause.finding, "possible", "no host given: judged from the text alone")
    facts = judged.facts
    if facts is None or judged.diagnosis is None:
        why = judged.error or "the host was not probed"
        return CauseVerdict(cause.finding, "possible", f"no facts: {why}")
    found = [f for f in judged.diagnosis.findings if f.id == cause.finding]
    if found:
        return CauseVerdict(cause.finding, "confirmed", _confirmed_why(found))
    missing = unseen(judged.result)
    if missing:
        return CauseVerdict(cause.finding, "possible", f"the probe could not see: {missing[0]}")
    if cause.finding not in FINDING_IDS:
        return CauseVerdict(
            cause.finding, "possible", "this version of detective-tui does not check it yet"
        )
    for need in cause.needs:
        if need == "deep":
            if not judged.deep and not any("error" not in r for _, r in judged.cuinit):
                return CauseVerdict(cause.finding, "possible", "needs diagnose --deep")
            continue
        seen, message = NEEDS[need]
        if not seen(facts):
            return CauseVerdict(cause.finding, "possible", message)
    return CauseVerdict(cause.finding, "ruled-out", cause.ruled_out)


def explain(
    text: str, judged: Judged | None = None, *, source: str, host_error: str | None = None
) -> Explanation:
    """Match ``text`` and judge each error's causes on ``judged`` (a probed host, or None)."""
    errors = tuple(
        ExplainedError(m, tuple(judge_cause(c, judged) for c in m.signature.causes))
        for m in match_text(text)
    )
    host = judged.host.name if judged is not None else None
    return Explanation(host, errors, source, host_error)


def explanation_text(result: Explanation, flags: str = "") -> str:
    """The readable explanation (not redacted: every writer redacts); ``flags`` go into the
    command it suggests (`` --demo``)."""
    lines = [f"explain: {result.source}"]
    if result.host_error:
        lines.append(f"{result.host} could not be probed: {result.host_error}")
        lines.append("every cause stays possible: judged from the text alone")
    if not result.recognised:
        lines.append(
            "not recognised: no known error signature matches this text (nothing is guessed; "
            "`detective-tui diagnose` still checks the host's versions)"
        )
        return "\n".join(lines) + "\n"
    for err in sorted(result.errors, key=lambda e: not e.match.primary):
        sig = err.match.signature
        lead = "primary error" if err.match.primary else "also seen"
        lines += ["", f"{lead} [{sig.id}]: {err.match.line}", f"  {sig.title}"]
        if sig.advice:
            lines.append(f"  {sig.advice}")
        lines += [f"  {MARK[c.status]}  {c.finding} — {c.why}" for c in err.causes]
        if sig.examples:
            lines.append(f"  reported in: {', '.join(sig.examples)}")
    lines.append("")
    if result.explained_by:
        lines.append(f"explained by: {', '.join(result.explained_by)}")
        if result.host:
            lines.append(f"see the fixes: detective-tui diagnose {result.host}{flags}")
    elif all(not e.causes for e in result.errors):
        lines.append("not a version conflict: nothing in the CUDA stack to fix for it")
    elif result.host is None:
        lines.append("no host given: give TARGET to confirm or rule out each cause")
    else:
        lines.append("no cause confirmed on this host")
    return "\n".join(lines) + "\n"


# journalctl -o short-iso: "2026-12-01T14:01:52+0000 host proc[pid]: message"
_ISO_PREFIX = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)([+-]\d\d):?(\d\d)\s")
_JOURNAL_PREFIX = re.compile(r"^\S+ [^\s\[]+(\[\d+\])?: ")  # "ct200 python3[4242]: "


def symptoms(judged: Judged) -> list[dict[str, Any]]:
    """The ``symptoms`` of a host (CONTRACT.md): each error the signatures find in a serving
    unit's recent journal lines, the primary one first per source, with the findings confirmed
    on the host that explain it."""
    facts = judged.facts
    if facts is None:
        return []
    by_source: dict[str, list[str]] = {}
    for entry in facts.log_lines:
        by_source.setdefault(entry.source, []).append(entry.line)
    out = []
    for source, lines in by_source.items():
        result = explain("\n".join(lines), judged, source=source)
        for err in sorted(result.errors, key=lambda e: not e.match.primary):
            stamp = _ISO_PREFIX.match(err.match.line)
            out.append(
                {
                    "source": source,
                    "at": f"{stamp[1]}{stamp[2]}:{stamp[3]}" if stamp else None,
                    "line": err.match.line,
                    "signature": err.match.signature.id,
                    "explained_by": [c.finding for c in err.causes if c.status == "confirmed"],
                    "primary": err.match.primary,
                }
            )
    return out


def symptom_line(symptom: Mapping[str, Any]) -> str:
    """``sglang.service 2026-12-01 14:01: 'RuntimeError: …' ← finding``: the journal line
    without its timestamp, host and process prefix."""
    at = symptom.get("at")
    when = f" {at[:10]} {at[11:16]}" if at else ""
    line = _JOURNAL_PREFIX.sub("", _ISO_PREFIX.sub("", symptom["line"], count=1), count=1)
    causes = ", ".join(symptom["explained_by"]) or "no cause confirmed here"
    name = symptom["source"].removeprefix("unit ")
    return f"{name}{when}: '{line}' ← {causes}"
