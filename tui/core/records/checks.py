"""``check --format npd|nagios``: host verdicts as one status line and an exit code, by the
convention of the system that runs the check (CONTRACT.md).

- ``npd``: node-problem-detector's custom-plugin protocol: 0 OK, 1 NonOK (a critical
  finding), 2 Unknown (a host not reached, or a probe that did not see everything); stdout
  one line of at most 80 bytes (NPD's ``max_output_length``) naming the worst finding.
- ``nagios``: the Nagios plugin convention: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN; one line
  ``STATUS: text | perfdata``.
A critical finding wins over an unknown host (it is known to be broken); an unknown host wins
over warnings (what it hides may be worse), so a partial or unreachable host is never OK.
The line names the finding id first (``flashinfer-arch-rejected: …``), and the host before it
when several hosts are checked (``ct200: flashinfer-arch-rejected: …``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui.core.records.verdicts import FindingBrief, HostVerdict

NPD_MAX_BYTES = 80
NPD_CODES = {"ok": 0, "critical": 1, "unknown": 2}
NAGIOS_CODES = {"ok": 0, "warning": 1, "critical": 2, "unknown": 3}
FORMATS = ("npd", "nagios")


@dataclass(frozen=True)
class CheckResult:
    code: int
    line: str


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _fit(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes (on a character boundary), marked with "...";
    NPD cuts by bytes, so the cut is ours and readable."""
    if len(text.encode()) <= limit:
        return text
    cut = text.encode()[: limit - 3].decode(errors="ignore")
    return cut.rstrip() + "..."


def _worst(verdicts: Sequence[HostVerdict], severity: str) -> tuple[HostVerdict, FindingBrief]:
    for v in verdicts:
        for f in v.findings:
            if f.severity == severity:
                return v, f
    raise ValueError(severity)


def _count(verdicts: Sequence[HostVerdict], severity: str) -> int:
    return sum(1 for v in verdicts for f in v.findings if f.severity == severity)


def _state(verdicts: Sequence[HostVerdict]) -> str:
    if _count(verdicts, "critical"):
        return "critical"
    if any(not v.complete for v in verdicts):
        return "unknown"
    return "warning" if _count(verdicts, "warning") else "ok"


def _finding_text(verdicts: Sequence[HostVerdict], severity: str) -> str:
    host, finding = _worst(verdicts, severity)
    more = _count(verdicts, severity) - 1
    where = f"{host.host}: " if len(verdicts) > 1 else ""
    extra = f" (+{more} more {severity})" if more else ""
    return f"{where}{finding.id}{extra}: {finding.title}"


def _unknown_text(verdicts: Sequence[HostVerdict]) -> str:
    bad = [v for v in verdicts if not v.complete]
    first = bad[0]
    what = "probe incomplete"
    if not first.up:
        what = "inventory error" if first.error_kind == "bad-inventory" else "not reached"
    reason = first.unseen[0] if first.unseen else "no facts"
    more = f" (+{len(bad) - 1} more hosts)" if len(bad) > 1 else ""
    return f"{first.host} {what}{more}: {reason}"


def _text(verdicts: Sequence[HostVerdict], state: str) -> str:
    if not verdicts:
        return "no hosts to check"
    if state in ("critical", "warning"):
        return _finding_text(verdicts, state)
    if state == "unknown":
        return _unknown_text(verdicts)
    hosts = f"{len(verdicts)} hosts" if len(verdicts) > 1 else verdicts[0].host
    return f"{hosts}: driver, torch, nvcc and FlashInfer agree"


def npd(verdicts: Sequence[HostVerdict]) -> CheckResult:
    """node-problem-detector's custom-plugin result. A warning is OK for NPD (the node can
    take pods) and is named in the line."""
    state = _state(verdicts)
    if not verdicts:
        return CheckResult(NPD_CODES["unknown"], "unknown: no hosts to check")
    if state == "warning":
        line = "OK, warning " + _finding_text(verdicts, "warning")
        return CheckResult(NPD_CODES["ok"], _fit(_one_line(line), NPD_MAX_BYTES))
    prefix = {"critical": "", "unknown": "unknown: ", "ok": "OK: "}[state]
    line = _fit(_one_line(prefix + _text(verdicts, state)), NPD_MAX_BYTES)
    return CheckResult(NPD_CODES[state], line)


def _perfdata(verdicts: Sequence[HostVerdict]) -> str:
    counts = {s: _count(verdicts, s) for s in ("critical", "warning", "info")}
    counts["unknown_hosts"] = sum(1 for v in verdicts if not v.complete)
    counts["hosts"] = len(verdicts)
    return " ".join(f"{k}={n};;;0" for k, n in counts.items())


def nagios(verdicts: Sequence[HostVerdict]) -> CheckResult:
    """The Nagios plugin result: ``STATUS: text | perfdata`` (a ``|`` in the text would start
    the perfdata, so it is written ``/``)."""
    state = _state(verdicts) if verdicts else "unknown"
    text = _one_line(_text(verdicts, state)).replace("|", "/")
    line = f"{state.upper()}: {text} | {_perfdata(verdicts)}"
    return CheckResult(NAGIOS_CODES[state], line)


def check(verdicts: Sequence[HostVerdict], fmt: str) -> CheckResult:
    """The result in convention ``fmt`` (one of ``FORMATS``)."""
    return {"npd": npd, "nagios": nagios}[fmt](verdicts)
