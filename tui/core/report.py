"""Reports: the ``diagnose --json`` object of CONTRACT.md, and a Markdown report a user can
paste into a vLLM / SGLang / FlashInfer GitHub issue (findings first, facts in ``<details>``).

Everything that leaves here goes through ``tui.core.redact`` first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tui.core.completeness import partial_verdict, unseen
from tui.core.diagnosis import Diagnosis, deep_differences
from tui.core.gpu_scope import scope_note
from tui.core.redact import redact
from tui.core.runner import ProbeResult

SEVERITY_MARK = {"critical": "🔴 critical", "warning": "🟠 warning", "info": "🔵 info"}


def result_json(result: ProbeResult) -> dict[str, Any]:
    """One element of ``probe --json`` (and the first keys of ``diagnose --json``), redacted.
    ``unseen``: what the probe could not see (``tui.core.completeness``; empty: everything)."""
    return redact(
        {
            "host": result.host.name,
            "reachable": result.reachable,
            "error": result.error,
            "error_kind": result.error_kind,
            "unseen": list(unseen(result)),
            "facts": result.facts.to_json() if result.facts is not None else None,
        }
    )


def host_json(
    result: ProbeResult,
    diagnosis: Diagnosis | None,
    deep: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """One element of ``diagnose --json``. ``deep``: python path → what
    ``probes/deep_flashinfer.py`` printed there; adds ``deep`` and ``agrees`` to the replay."""
    flashinfer = []
    for replayed in diagnosis.flashinfer if diagnosis else ():
        entry = replayed.to_json()
        got = (deep or {}).get(replayed.python)
        if got is not None:
            entry["deep"] = dict(got)
            entry["agrees"] = None if "error" in got else not deep_differences(replayed, got)
        flashinfer.append(entry)
    return {
        **result_json(result),
        **redact(
            {
                "findings": [f.to_json() for f in diagnosis.findings] if diagnosis else [],
                "flashinfer": flashinfer,
            }
        ),
    }


# -- Markdown --------------------------------------------------------------------------------


def _summary(diagnosis: Diagnosis | None, partial: bool) -> str:
    if diagnosis is None:
        return "not diagnosed"
    counts = {s: sum(f.severity == s for f in diagnosis.findings) for s in SEVERITY_MARK}
    parts = [f"{n} {s}" for s, n in counts.items() if n]
    if partial:
        parts.append("probe incomplete")
    return ", ".join(parts) or "no findings"


def _finding_md(f: Mapping[str, Any]) -> list[str]:
    """One finding (its redacted JSON form) as Markdown."""
    lines = [f"### {SEVERITY_MARK[f['severity']]}: `{f['id']}` — {f['title']}", ""]
    if f["python"]:
        lines += [f"Interpreter: `{f['python']}`", ""]
    lines += [f["explanation"], "", "Evidence:"]
    lines += [f"- `{e}`" for e in f["evidence"]]
    if f["fixes"]:
        lines += ["", "Fixes (least invasive first):"]
        for i, fix in enumerate(f["fixes"], 1):
            params = " ".join(f"{k}={v}" for k, v in fix["params"].items())
            resolves = ", ".join(fix["resolves"]) or "nothing by itself"
            root = " (needs root)" if fix["needs_root"] else ""
            lines.append(
                f"{i}. `{fix['id']}`{' ' + params if params else ''} — {fix['title']}{root}; "
                f"resolves: {resolves}"
            )
    lines.append("")
    return lines


def _flatten(value: Any, prefix: str = "") -> list[str]:
    """JSON → ``key: value`` lines (``gpus.0.name: …``); empty values are left out."""
    if isinstance(value, Mapping):
        out: list[str] = []
        for k, v in value.items():
            out += _flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(value, (list, tuple)):
        if all(not isinstance(v, (Mapping, list, tuple)) for v in value):
            return [f"{prefix}: {', '.join(map(str, value))}"] if value else []
        out = []
        for i, v in enumerate(value):
            out += _flatten(v, f"{prefix}.{i}")
        return out
    if value is None or value == "":
        return []
    return [f"{prefix}: {value}"]


def _details(summary: str, lines: Sequence[str]) -> list[str]:
    return [
        "<details>",
        f"<summary>{summary}</summary>",
        "",
        "```",
        *lines,
        "```",
        "",
        "</details>",
        "",
    ]


def markdown_report(
    results: Sequence[tuple[ProbeResult, Diagnosis | None]],
    deep: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> str:
    """The report for ``diagnose --markdown``. ``deep``: host name → python → deep result."""
    lines = ["# detective-tui diagnosis", ""]
    for result, diagnosis in results:
        data = host_json(result, diagnosis, (deep or {}).get(result.host.name))
        head = f"## {result.host.name}"
        if not result.reachable:
            lines += [f"{head} — unreachable", "", f"`{data['error']}`", ""]
            continue
        lines += [f"{head} — {_summary(diagnosis, bool(data['unseen']))}", ""]
        note = scope_note(data["facts"]["container"]) if data["facts"] is not None else None
        if note:
            lines += [f"> {note}", ""]
        if data["unseen"]:
            if not data["findings"]:
                lines += [f"**{partial_verdict(tuple(data['unseen']))}**", ""]
            lines += ["The probe could not see:", ""]
            lines += [f"- `{reason}`" for reason in data["unseen"]]
            lines.append("")
        for finding in data["findings"]:
            lines += _finding_md(finding)
        for entry in data["flashinfer"]:
            agrees = {True: ", real FlashInfer agrees", False: ", real FlashInfer DISAGREES"}
            note = agrees.get(entry.get("agrees"), "")
            lines += _details(
                f"FlashInfer {entry['version']} replay for {entry['python']}{note}",
                _flatten(entry),
            )
        if data["facts"] is not None:
            lines += _details(f"Facts: {result.host.name}", _flatten(data["facts"]))
    return redact("\n".join(lines).rstrip() + "\n")
