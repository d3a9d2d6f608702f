"""FlashInfer's own decisions replayed for each interpreter: toolkit, version, targets, verdict."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from tui.core.facts import Facts
from tui.core.findings import FlashInferReplay
from tui.core.redact import redact_text
from tui.core.tables.flashinfer_prebuilt import replay_coverage


def _row(label: str, value: str, style: str = "") -> list[str | tuple[str, str]]:
    value = redact_text(value)
    return [(f"{label:<22}", "bold"), (value, style) if style else value, "\n"]


def replay_content(r: FlashInferReplay, prebuilt: str | None = None) -> Content:
    """``prebuilt``: why the JIT cache makes compiling unnecessary, when it does."""
    verdict_style = "bold $success" if r.check_cuda_arch == "pass" else "bold $error"
    source = f" (from {r.jit_cuda_source})" if r.jit_cuda_source else ""
    parts: list[str | Content | tuple[str, str]] = [
        (f"FlashInfer {r.version}", "bold underline"),
        ("  " + r.python, "dim"),
        "\n",
    ]
    if r.context:
        parts += _row("environment", r.context)
    parts += _row("toolkit (CUDA_HOME)", r.cuda_home or "none — get_cuda_path() raises")
    parts += _row("CUDA version", (r.jit_cuda or "none") + source)
    if r.nvcc_invoked:
        parts += _row("nvcc invoked", r.nvcc_invoked)
    targets = " ".join(r.target_cuda_archs) or "(empty)"
    parts += _row("TARGET_CUDA_ARCHS", targets, "" if r.target_cuda_archs else "bold $error")
    if r.gencodes:
        parts += _row("gencodes", " ".join(r.gencodes))
    parts += _row("check_cuda_arch()", r.check_cuda_arch, verdict_style)
    if r.check_message:
        parts += _row("  raises", r.check_message, "$error")
    compiles = {True: "yes", False: "no", None: "unknown"}[r.compiles]
    if r.compiles is False and prebuilt:
        parts += _row("nvcc can compile", f"no — not needed: {prebuilt}", "$success")
    else:
        parts += _row("nvcc can compile", compiles, "$error" if r.compiles is False else "")
    if r.workspace:
        parts += _row("JIT workspace", r.workspace)
    if r.import_error:
        parts += _row("import flashinfer", r.import_error, "$error")
    if r.warnings:
        parts += [("Warnings FlashInfer will print", "bold"), "\n"]
        for w in r.warnings:
            parts += [("  " + w, "$warning"), "\n"]
    return Content.assemble(*parts)


class ReplayView(Static):
    replays: reactive[tuple[FlashInferReplay, ...]] = reactive(())
    facts: Facts | None = None  # the probe the replays came from (set before ``replays``)

    def _prebuilt(self, r: FlashInferReplay) -> str | None:
        covered = replay_coverage(self.facts, r) if self.facts is not None else None
        return covered.reason if covered is not None and covered.covered else None

    def watch_replays(self, replays: tuple[FlashInferReplay, ...]) -> None:
        if not replays:
            self.update("No interpreter on this host has FlashInfer installed.")
            return
        self.update(Content("\n").join(replay_content(r, self._prebuilt(r)) for r in replays))
