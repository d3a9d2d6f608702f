"""The validation script's output → a ``ValidationResult``: its ``@@validate`` records (one
JSON object a line), the progress text of each, and the verdict when the script died or the
deadline hit."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from tui.core.run.validate_result import (
    VERDICTS,
    JitResult,
    KernelResult,
    SpeedResult,
    ValidationResult,
)

SENTINEL = "@@validate"
OUTPUT_TAIL = 30


def parse_record(line: str) -> tuple[str, dict[str, Any]] | None:
    """``(kind, data)`` of one ``@@validate`` line; None for any other line."""
    parts = line.rstrip("\r\n").split("\t", 2)
    if len(parts) != 3 or parts[0] != SENTINEL:
        return None
    try:
        data = json.loads(parts[2])
    except ValueError:
        return None
    return (parts[1], data) if isinstance(data, dict) else None


def describe_record(kind: str, data: Mapping[str, Any]) -> str | None:
    """A one-line progress text for a record (what ``on_line`` receives)."""
    if kind == "step":
        return str(data.get("step"))
    if kind == "jit":
        if data.get("ok"):
            return f"sampling module ready in {data.get('seconds', 0):.1f} s"
        return f"sampling module failed ({data.get('stage')})"
    if kind == "kernel":
        return f"{data.get('name')}: {data.get('verdict')}"
    if kind == "speed" and data.get("ratio") is not None:
        return f"{data.get('kernel')}: {data['ratio']:.2f}x {data.get('baseline')}"
    if kind == "end":
        return f"verdict: {data.get('verdict')} ({data.get('reason')})"
    return None


def result_from_output(
    host: str,
    python: str | None,
    lines: Iterable[str],
    *,
    exit_status: int | None = 0,
    timed_out: bool = False,
    error: str | None = None,
    duration_s: float = 0.0,
    env_applied: Mapping[str, str] | None = None,
) -> ValidationResult:
    """Build the result from the script's output and how the command ended."""
    environment: dict[str, Any] = {}
    toolkit: dict[str, Any] = {}
    jit: JitResult | None = None
    kernels: list[KernelResult] = []
    speed: list[SpeedResult] = []
    log_tail: list[str] = []
    other: list[str] = []
    end: dict[str, Any] | None = None
    last_step: str | None = None
    for line in lines:
        rec = parse_record(line)
        if rec is None:
            if line.strip():
                other.append(line.rstrip())
            continue
        kind, data = rec
        if kind in ("start", "env"):
            environment.update(data)
        elif kind == "step":
            last_step = str(data.get("step"))
        elif kind == "toolkit":
            toolkit.update(data)
        elif kind == "jit":
            jit = JitResult(
                ok=bool(data.get("ok")),
                stage=str(data.get("stage") or "build"),
                seconds=data.get("seconds"),
                error=data.get("error"),
            )
            log_tail = list(data.get("log_tail") or log_tail)
        elif kind == "kernel":
            kernels.append(KernelResult.from_record(data))
        elif kind == "speed":
            speed.append(SpeedResult(**{k: data.get(k) for k in SpeedResult.__dataclass_fields__}))
        elif kind == "end":
            end = data
            log_tail = list(data.get("log_tail") or log_tail)
    if end is not None and end.get("verdict") in VERDICTS:
        verdict, reason = str(end["verdict"]), str(end.get("reason") or "")
        if end.get("error"):
            other.extend(str(end["error"]).splitlines())
    else:
        verdict = "error"
        where = f" (last step: {last_step})" if last_step else ""
        if timed_out:
            reason = f"the validation hit its deadline after {duration_s:.0f} s{where}"
        elif error:
            reason = f"{error}{where}"
        elif exit_status not in (0, None) and not environment:
            shown = " | ".join(other[-3:]) or "no output"
            reason = f"{python} did not run (exit status {exit_status}): {shown}"
        else:
            reason = (
                f"the validation script ended without a verdict (exit status {exit_status}){where}"
            )
    return ValidationResult(
        host=host,
        verdict=verdict,
        reason=reason,
        python=python,
        environment=environment,
        toolkit=toolkit,
        jit=jit,
        kernels=tuple(kernels),
        speed=tuple(speed),
        log_tail=tuple(log_tail),
        output_tail=tuple(other[-OUTPUT_TAIL:]),
        env_applied=dict(env_applied or {}),
        duration_s=duration_s,
    )
