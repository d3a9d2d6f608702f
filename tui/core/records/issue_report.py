"""The Markdown report that pastes into a vLLM / SGLang / FlashInfer GitHub issue.

Top to bottom: when and with which version it was made; one summary table (a row per host,
the worst first); the fixes, undos and restarts run in the session; then per host its
findings (evidence, fixes) with the FlashInfer replay and the facts folded into
``<details>``, the facts one line per thing (a toolkit, an environment, an interpreter), so
the reference host fits in well under 150 lines.

Everything comes from the redacted JSON (``tui.core.records.report.host_json``) and from transcript
events, which were redacted when written; the finished text goes through ``redact_text``
once more.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from importlib import metadata
from typing import Any

from tui.core.facts.gpu_scope import scope_note
from tui.core.md_safe import md_code, md_fence, md_text
from tui.core.records.finding_model import SEVERITY_MARK, FindingModel
from tui.core.redact import redact_text
from tui.core.rules.completeness import partial_verdict

WORST_ORDER = {
    "unreachable": 0,
    "critical": 1,
    "warning": 2,
    "incomplete": 3,  # no critical/warning finding, but the probe could not see everything
    "info": 4,
    "none": 5,
}
ACTION_EVENTS = ("fix-outcome",)  # transcript events that are actions taken on a host


def tool_version() -> str:
    try:
        return metadata.version("detective-tui")
    except metadata.PackageNotFoundError:
        return "unknown"


def _worst(data: Mapping[str, Any]) -> str:
    if not data["reachable"]:
        return "unreachable"
    severities = [f["severity"] for f in data["findings"]]
    for s in ("critical", "warning"):
        if s in severities:
            return s
    if data["unseen"]:
        return "incomplete"
    return "info" if "info" in severities else "none"


def ordered(hosts: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Unreachable first, then critical, warning, info, healthy; by name within each."""
    return sorted(hosts, key=lambda d: (WORST_ORDER[_worst(d)], d["host"]))


def _cell(text: object) -> str:
    if text in (None, ""):
        return "—"
    return md_text(text).replace("|", "\\|").replace("\n", " ")


def _primary(data: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, Mapping[str, Any]]:
    """(the first FlashInfer replay, the interpreter it is about — or torch's)."""
    facts = data["facts"] or {}
    pythons = facts.get("pythons") or []
    replay = data["flashinfer"][0] if data["flashinfer"] else None
    if replay is not None:
        for py in pythons:
            if py.get("path") == replay["python"]:
                return replay, py
    return replay, next((p for p in pythons if p.get("torch_version")), {})


def _gpus(facts: Mapping[str, Any]) -> str:
    counts: dict[str, int] = {}
    caps: dict[str, str] = {}
    for g in facts.get("gpus") or []:
        name = g["name"].removeprefix("NVIDIA ")
        counts[name] = counts.get(name, 0) + 1
        caps[name] = g.get("compute_cap") or "?"
    return ", ".join(f"{n}× {name} (SM {caps[name]})" for name, n in counts.items())


def summary_table(hosts: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| Host | Worst | Top finding | GPU | Driver (CUDA) | torch | JIT nvcc | FlashInfer |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for data in hosts:
        worst = _worst(data)
        if not data["reachable"]:
            lines.append(f"| {_cell(data['host'])} | unreachable | {_cell(data['error'])} |||||")
            continue
        facts = data["facts"] or {}
        findings = data["findings"]
        top = f"`{findings[0]['id']}`" if findings else "—"
        if len(findings) > 1:
            top += f" (+{len(findings) - 1})"
        driver = facts.get("driver") or {}
        drv = driver.get("driver_version") or driver.get("smi_version") or driver.get("state")
        cuda = driver.get("driver_cuda") or driver.get("cuda_version")
        if cuda:
            drv = f"{drv} ({cuda})"
        replay, py = _primary(data)
        jit = replay.get("cuda_version") if replay else None
        fi = f"{replay['version']} ({replay['check_cuda_arch']})" if replay else None
        mark = SEVERITY_MARK.get(worst, "probe incomplete" if worst == "incomplete" else worst)
        cells = (data["host"], mark, top, _gpus(facts), drv)
        cells += (py.get("torch_version"), jit, fi)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


# -- actions ---------------------------------------------------------------------------------


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ids) or "none"


def action_line(event: Mapping[str, Any]) -> str:
    """One fix, undo or restart from its ``fix-outcome`` transcript event."""
    when = str(event.get("ts", ""))[11:19]
    host, fix = event.get("host", "?"), str(event.get("fix", "?"))
    params = md_text(
        " ".join(f"{k}={v}" for k, v in (event.get("params") or {}).items() if k != "record")
    )
    if fix == "restart":
        what = f"restart {params.removeprefix('units=')}".strip()
    elif fix.startswith("undo:"):
        what = f"undo {md_text(fix.removeprefix('undo:'))}"
    else:
        what = f"fix {md_code(fix)}" + (f" ({params})" if params else "")
    if not event.get("applied"):
        result = f"FAILED: {md_text(event.get('error') or 'see the transcript')}"
    elif fix == "restart":
        result = (
            f"running service now: {_ids(event.get('findings_after') or [])} "
            f"(before: {_ids(event.get('findings_before') or [])})"
        )
    elif fix.startswith("undo:"):
        result = f"undone; findings now: {_ids(event.get('findings_after') or [])}"
    else:
        parts = []
        if event.get("resolved"):
            parts.append("fixed " + _ids(event["resolved"]))
        if event.get("unresolved"):
            parts.append("NOT fixed " + _ids(event["unresolved"]))
        if event.get("introduced"):
            parts.append("new " + _ids(event["introduced"]))
        result = "; ".join(parts) or "applied"
    if event.get("applied") and event.get("pending_restart"):
        result += f"; restart pending: {_ids(event['pending_restart'])}"
    return f"- {md_text(when)} **{md_text(host)}**: {what} — {result}"


def actions_section(events: Iterable[Mapping[str, Any]]) -> list[str]:
    lines = [action_line(e) for e in events if e.get("kind") in ACTION_EVENTS]
    return ["## Actions taken", "", *(lines or ["None: nothing was changed on any host."]), ""]


# -- one host ----------------------------------------------------------------------------------


def finding_markdown(f: Mapping[str, Any]) -> list[str]:
    m = FindingModel.of(f)
    lines = [f"### {m.mark}: {md_code(m.id)} — {md_text(m.title)}", ""]
    if m.python:
        lines += [f"Interpreter: {md_code(m.python)}", ""]
    evidence = "; ".join(md_code(e) for e in m.evidence)
    lines += [md_text(m.explanation), "", "Evidence: " + evidence]
    if m.fixes:
        lines += ["", "Fixes (least invasive first):"]
        for fix in m.fixes:
            params = md_text(" ".join(f"{k}={v}" for k, v in fix.params))
            root = " (needs root)" if fix.needs_root else ""
            lines.append(
                f"{fix.number}. `{fix.id}`{' ' + params if params else ''}{root} — resolves "
                f"{fix.resolves_text}"
            )
    return [*lines, ""]


def _details(summary: str, lines: Sequence[str]) -> list[str]:
    """A collapsed block: ``summary`` (running text, escaped) and ``lines`` in a fence none of
    them can close (inside it ``</details>`` or ``<img …>`` is just text)."""
    fence = md_fence(lines)
    return [
        "<details>",
        f"<summary>{md_text(summary)}</summary>",
        "",
        fence,
        *lines,
        fence,
        "</details>",
        "",
    ]


def replay_lines(r: Mapping[str, Any]) -> list[str]:
    source = f" (from {r['cuda_version_source']})" if r.get("cuda_version_source") else ""
    lines = [
        f"python: {r['python']}" + (f"  ({r['context']})" if r.get("context") else ""),
        f"toolkit: {r.get('cuda_home') or 'none'} → CUDA {r.get('cuda_version') or '?'}{source}",
        f"TARGET_CUDA_ARCHS: {' '.join(r.get('target_cuda_archs') or []) or '(empty)'}",
        f"check_cuda_arch: {r['check_cuda_arch']}"
        + (f" — {r['check_message']}" if r.get("check_message") else ""),
    ]
    if r.get("nvcc_invoked"):
        lines.append(f"nvcc invoked: {r['nvcc_invoked']}")
    if r.get("import_error"):
        lines.append(f"import error: {r['import_error']}")
    lines += [f"warning: {w}" for w in r.get("warnings") or []]
    if "agrees" in r:
        lines.append(f"real FlashInfer agrees: {r['agrees']}")
    return lines


def fact_lines(facts: Mapping[str, Any]) -> list[str]:
    """The facts one line per thing: host, driver, GPUs, each toolkit, each environment,
    each interpreter, the probe."""
    h, d = facts.get("host") or {}, facts.get("driver") or {}
    user = h.get("user") or "?"
    version = d.get("driver_version") or d.get("smi_version") or d.get("proc_version") or "?"
    lines = [
        f"host: {h.get('os_pretty') or h.get('os_id') or '?'} · kernel {h.get('kernel') or '?'}"
        f" · {h.get('arch') or '?'} · user {user}{' (root)' if h.get('is_root') else ''}",
        f"driver: {d.get('state')} · {version}"
        f" · CUDA {d.get('driver_cuda') or d.get('cuda_version') or '?'}"
        + (f" · {d['kernel_module']} module" if d.get("kernel_module") else "")
        + (f" · {d['message'].splitlines()[0]}" if d.get("message") else ""),
        f"GPUs: {_gpus(facts) or 'none'}",
    ]
    for tk in facts.get("toolkits") or []:
        version = tk.get("full_version") or tk.get("version") or "?"
        sources = ", ".join(tk.get("sources") or [])
        state = "" if tk.get("exists", True) else " (missing)"
        lines.append(f"toolkit {tk['home']}{state}: nvcc {version}  [{sources}]")
    lines.append(f"/usr/local/cuda → {facts.get('usr_local_cuda') or 'absent'}")
    for ctx in facts.get("contexts") or []:
        env = " ".join(
            f"{k}={v}" for k, v in sorted((ctx.get("vars") or {}).items()) if k != "PATH"
        )
        nvcc = (ctx.get("which_nvcc") or ["none"])[0]
        unit = f" (unit {ctx['unit']})" if ctx.get("unit") else ""
        lines.append(f"env {ctx['label']}{unit}: {env or '-'} · nvcc on PATH: {nvcc}")
    for py in facts.get("pythons") or []:
        pkgs = py.get("packages") or {}
        keep = [k for k in ("sglang", "vllm", "triton") if k in pkgs]
        where = f" [{py['context']}]" if py.get("context") else ""
        parts = [f"python {py['path']} {py.get('version') or '?'}{where}"]
        if py.get("torch_version"):
            parts.append(f"torch {py['torch_version']} (CUDA {py.get('torch_cuda') or 'none'})")
        if py.get("flashinfer_version"):
            parts.append(f"flashinfer {py['flashinfer_version']}")
        parts += [f"{k} {pkgs[k]}" for k in keep]
        if py.get("error"):
            parts.append(f"error: {py['error']}")
        lines.append(" · ".join(parts))
    lines = list(dict.fromkeys(lines))  # an interpreter found twice in one environment
    p = facts.get("probe") or {}
    lines.append(
        f"probe: v{p.get('probe_version') or '?'} · {p.get('duration_s') or '?'} s · "
        + ("complete" if p.get("complete", True) else "INCOMPLETE")
        + (f" · timed out: {', '.join(p['timed_out'])}" if p.get("timed_out") else "")
    )
    return lines


def host_section(data: Mapping[str, Any]) -> list[str]:
    name = data["host"]
    if not data["reachable"]:
        return [f"## {md_text(name)} — unreachable", "", md_code(data["error"]), ""]
    findings = data["findings"]
    counts = [
        f"{sum(f['severity'] == s for f in findings)} {s}"
        for s in SEVERITY_MARK
        if any(f["severity"] == s for f in findings)
    ]
    if data["unseen"]:
        counts.append("probe incomplete")
    lines = [f"## {md_text(name)} — {', '.join(counts) or 'no findings'}", ""]
    note = scope_note(data["facts"]["container"]) if data["facts"] is not None else None
    if note:
        lines += [f"> {md_text(note)}", ""]
    if data["unseen"]:
        if not findings:
            lines += [f"**{partial_verdict(tuple(data['unseen']))}**", ""]
        lines += ["The probe could not see:", ""]
        lines += [f"- {md_code(reason)}" for reason in data["unseen"]]
        lines.append("")
    for f in findings:
        lines += finding_markdown(f)
    for r in data["flashinfer"]:
        note = {True: ", real FlashInfer agrees", False: ", real FlashInfer DISAGREES"}
        lines += _details(
            f"FlashInfer {r['version']} replay{note.get(r.get('agrees'), '')}", replay_lines(r)
        )
    if data["facts"] is not None:
        lines += _details(f"Facts: {name}", fact_lines(data["facts"]))
    return lines


def issue_report(
    hosts: Sequence[Mapping[str, Any]],
    actions: Iterable[Mapping[str, Any]] = (),
    *,
    now: datetime | None = None,
) -> str:
    """The whole report from the hosts' redacted JSON objects and the session's events."""
    made = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M:%S %Z").strip()
    hosts = ordered(hosts)
    lines = [
        "# detective-tui report",
        "",
        f"detective-tui {tool_version()} · {made} · {len(hosts)} host(s), worst first",
        "",
        *summary_table(hosts),
        "",
        *actions_section(actions),
    ]
    for data in hosts:
        lines += host_section(data)
    return redact_text("\n".join(lines).rstrip() + "\n")
