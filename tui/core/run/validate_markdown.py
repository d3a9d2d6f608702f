"""A sampling validation as Markdown, for an issue or the transcript export."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tui.core.run.validate_result import JitResult, ValidationResult


def _fmt(value: Any, spec: str = ".3g") -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return format(value, spec)
    return str(value)


def _jit_text(jit: JitResult | None, toolkit: Mapping[str, Any]) -> str | None:
    if jit is None:
        return None
    if not jit.ok:
        return f"FAILED at {jit.stage}"
    text = f"ok in {jit.seconds:.1f} s" if jit.seconds is not None else "ok"
    if toolkit.get("sampling_so_cached"):
        text += " (an already built sampling.so was loaded)"
    return text


def _worst_tv(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return "—"
    row = max(rows, key=lambda x: x.get("tv", 0.0) / max(x.get("tv_bound", 1.0), 1e-12))
    return f"{row['tv']:.4f} / {row['tv_bound']:.4f}"


def markdown_lines(r: ValidationResult) -> list[str]:
    badge = r.verdict.upper()
    out = [f"### Sampling kernels on {r.host}: {badge}", "", r.reason, ""]
    env = r.environment
    archs = r.toolkit.get("target_cuda_archs")
    gpu = env.get("device_name")
    facts = [
        ("python", r.python),
        ("torch", env.get("torch") or env.get("torch_version")),
        ("torch CUDA", env.get("torch_cuda")),
        ("GPU", f"{gpu} (SM {env.get('capability')})" if gpu else None),
        ("FlashInfer", env.get("flashinfer_version")),
        ("toolkit FlashInfer resolved", r.toolkit.get("cuda_home")),
        ("its CUDA version", r.toolkit.get("cuda_version")),
        ("target archs", (", ".join(archs) or "none") if archs is not None else None),
        ("JIT", _jit_text(r.jit, r.toolkit)),
        ("sampling API era", next((k.api_era for k in r.kernels if k.api_era), None)),
    ]
    for label, value in facts:
        if value not in (None, ""):
            out.append(f"- {label}: `{value}`")
    if r.env_applied:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(r.env_applied.items()))
        out.append(f"- environment of the serving process applied: `{shown}`")
    out.append("")
    if r.jit is not None and r.jit.error:
        out += ["JIT error:", "", "```", r.jit.error, "```", ""]
    if r.kernels:
        out += [
            "| kernel | verdict | rows passed | worst p (fine / coarse) | TV / bound | outside |",
            "|---|---|---|---|---|---|",
        ]
        for k in r.kernels:
            passed = sum(1 for row in k.rows if row.get("passed"))
            fine = min((row.get("p_value", 1.0) for row in k.rows), default=None)
            coarse = min((row.get("coarse_p_value", 1.0) for row in k.rows), default=None)
            tv = max(
                k.rows,
                key=lambda row: row.get("tv", 0) / max(row.get("tv_bound", 1), 1e-12),
                default=None,
            )
            tv_text = f"{tv['tv']:.4f} / {tv['tv_bound']:.4f}" if tv else "—"
            outside = sum(int(row.get("outside", 0)) for row in k.rows)
            out.append(
                f"| `{k.name}` | {k.verdict} | {passed}/{len(k.rows)} | "
                f"{_fmt(fine, '.2e')} / {_fmt(coarse, '.2e')} | {tv_text} | {outside} |"
            )  # fmt: skip
        out.append("")
        for k in r.kernels:
            if k.verdict != "pass" and k.message:
                out.append(f"- `{k.name}`: {k.message}")
        out.append("")
    if r.speed:
        out += [
            "| FlashInfer | vs | FlashInfer ms | torch ms | speed-up |",
            "|---|---|---|---|---|",
        ]
        for s in r.speed:
            if s.error:
                out.append(f"| `{s.kernel}` | {s.baseline} | error: {s.error} | | |")
            else:
                out.append(
                    f"| `{s.kernel}` | {s.baseline} | {_fmt(s.flashinfer_ms)} | "
                    f"{_fmt(s.torch_ms)} | {_fmt(s.ratio, '.2f')}x |"
                )
        out.append("")
    if r.log_tail:
        out += ["FlashInfer log (tail):", "", "```", *r.log_tail, "```", ""]
    if r.verdict == "error" and r.output_tail:
        out += ["Output (tail):", "", "```", *r.output_tail, "```", ""]
    while out and out[-1] == "":
        out.pop()
    return out


def validation_markdown(result: ValidationResult) -> str:
    return "\n".join(markdown_lines(result)) + "\n"
