"""``diagnose(facts)``: findings (most severe first, each with what-if-checked fixes) and the
FlashInfer replays, for one host."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tui.core.facts import Facts
from tui.core.findings import SEVERITY_ORDER, Finding, FlashInferReplay, Severity
from tui.core.findings.flashinfer_replay_disagrees import ID as DISAGREES
from tui.core.fixes import FixError, build_plan
from tui.core.hosts import Host
from tui.core.judge.whatif import plan_fixes
from tui.core.redact import MASK
from tui.core.rules.evaluate import evaluate

PLAN_STAMP = "diagnosis"  # plans built for preview only; `fix` builds its own with a real stamp


@dataclass(frozen=True)
class Diagnosis:
    findings: tuple[Finding, ...]
    flashinfer: tuple[FlashInferReplay, ...]

    def worst(self) -> Severity | None:
        if not self.findings:
            return None
        return min((f.severity for f in self.findings), key=lambda s: SEVERITY_ORDER[s])

    def finding(self, finding_id: str, python: str | None = None) -> Finding | None:
        for f in self.findings:
            if f.id == finding_id and (python is None or f.python == python):
                return f
        return None


def diagnose(facts: Facts, host: Host | None = None) -> Diagnosis:
    """Pure: the same facts give the same diagnosis. With ``host``, each fix carries the exact
    commands the fix engine would run there (and is dropped if the engine cannot plan it)."""
    findings, replays = evaluate(facts)
    commands = None
    if host is not None:

        def commands(
            f: Facts, fix_id: str, params: Mapping[str, str], python: str | None
        ) -> tuple[bool, tuple[str, ...]] | None:
            try:
                plan = build_plan(f, host, fix_id, params, python, stamp=PLAN_STAMP)
            except FixError:
                return None
            return plan.needs_root, plan.preview_commands()

    return Diagnosis(plan_fixes(facts, findings, commands), replays)


# -- --deep: the host's own FlashInfer as ground truth ---------------------------------------

# variables FlashInfer's decisions depend on: the deep run must see exactly the judged
# environment's values, so those the environment lacks are removed (``--unset``)
DEEP_VARS = (
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "FLASHINFER_CUDA_ARCH_LIST",
    "FLASHINFER_NVCC",
    "FLASHINFER_WORKSPACE_BASE",
    "TORCH_CUDA_ARCH_LIST",
)


def deep_invocation(facts: Facts, replayed: FlashInferReplay) -> tuple[dict[str, str], str]:
    """(variables to export, comma-separated names to unset) to reproduce the judged
    environment for ``probes/deep_flashinfer.py`` (masked secrets are not re-sent)."""
    ctx = facts.context(replayed.context)
    env = {k: v for k, v in (ctx.vars if ctx else {}).items() if v != MASK}
    return env, ",".join(v for v in DEEP_VARS if v not in env)


def deep_differences(replayed: FlashInferReplay, deep: Mapping[str, Any]) -> tuple[str, ...]:
    """Where the replay and the host's own FlashInfer disagree (empty: they agree)."""
    pairs: list[tuple[str, Any, Any]] = [
        ("import_error", replayed.import_error, deep.get("import_error"))
    ]
    if deep.get("import_error") is None and replayed.import_error is None:
        pairs += [
            ("cuda_home", replayed.cuda_home, deep.get("cuda_home")),
            ("cuda_version", replayed.jit_cuda, deep.get("cuda_version")),
            ("target_cuda_archs", list(replayed.target_cuda_archs), deep.get("target_cuda_archs")),
            ("check_cuda_arch", replayed.check_cuda_arch, deep.get("check_cuda_arch")),
        ]
    return tuple(
        f"{name}: replay {ours!r}, FlashInfer {theirs!r}"
        for name, ours, theirs in pairs
        if ours != theirs
    )


def with_findings(diagnosis: Diagnosis, extra: Sequence[Finding]) -> Diagnosis:
    """The diagnosis with ``extra`` findings (the deep runs'), sorted by severity."""
    if not extra:
        return diagnosis
    findings = sorted((*diagnosis.findings, *extra), key=lambda f: SEVERITY_ORDER[f.severity])
    return Diagnosis(tuple(findings), diagnosis.flashinfer)


def with_deep(diagnosis: Diagnosis, deeps: Mapping[str, Mapping[str, Any]]) -> Diagnosis:
    """Add an info finding for each interpreter whose real FlashInfer disagrees with the replay."""
    extra = []
    for replayed in diagnosis.flashinfer:
        deep = deeps.get(replayed.python)
        if deep is None or "error" in deep:  # the deep run itself failed: nothing to compare
            continue
        diffs = deep_differences(replayed, deep)
        if not diffs:
            continue
        extra.append(
            Finding(
                id=DISAGREES,
                severity="info",
                title=f"The replay of FlashInfer {replayed.version} disagrees with the real one",
                explanation=(
                    "detective-tui replays FlashInfer's own decisions from the probed facts; "
                    "running the installed FlashInfer in the same environment gave a different "
                    "answer, so trust the real one (under 'deep') and please report this "
                    "with the --markdown output attached, so the replay can be corrected."
                ),
                evidence=diffs,
                python=replayed.python,
            )
        )
    findings = tuple(
        sorted((*diagnosis.findings, *extra), key=lambda f: SEVERITY_ORDER[f.severity])
    )
    return Diagnosis(findings, diagnosis.flashinfer)
