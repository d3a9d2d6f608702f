"""What a sampling validation found (``ValidationResult``): its verdict, the kernels, the
speed, the JIT build; ``tui.core.run.validate`` runs it, ``validate_records`` reads the script's
output into it, ``validate_markdown`` writes it up.

Verdicts and exit codes (``ValidationResult.exit_code``):

- ``pass``: every kernel drew from its exact reference distribution (exit 0);
- ``partial``: the kernels that were checked passed, but some could not be checked — not in
  this FlashInfer, or a signature no known API era matches (exit 1: not a pass);
- ``skipped``: cannot validate here — no GPU visible to torch, torch or FlashInfer not
  installed, or the host is a filesystem tree inspected under a root prefix (exit 0: nothing
  is known to be wrong, and the reason says what was missing);
- ``fail``: a kernel failed its statistical or support check, raised, or the sampling module
  did not build or load (JIT), or ``import flashinfer`` failed on a GPU host (exit 1);
- ``error``: no verdict — unreachable, the interpreter did not run, the deadline hit, the
  script died (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tui.core import exitcodes

VERDICTS = ("pass", "partial", "fail", "skipped", "error")
EXIT_CODES = {
    "pass": exitcodes.OK,
    "partial": exitcodes.CRITICAL,
    "skipped": exitcodes.OK,
    "fail": exitcodes.CRITICAL,
    "error": exitcodes.UNREACHABLE,
}


@dataclass(frozen=True)
class KernelResult:
    """One validated call, e.g. ``top_k_top_p_sampling_from_probs[joint]``."""

    name: str
    kernel: str
    verdict: str  # pass | fail | skipped | error
    message: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    samples_per_row: int | None = None
    invalid: int = 0  # samples the kernel itself flagged invalid (return_valid)
    rows: tuple[Mapping[str, Any], ...] = ()  # sampling_stats.FitResult.to_dict() + row name
    signature: str | None = None
    api_era: str | None = None  # how it was called (probes/sampling_eras.py)
    error: str | None = None  # traceback tail when the call raised

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> KernelResult:
        return cls(
            name=str(rec.get("name") or rec.get("kernel") or "?"),
            kernel=str(rec.get("kernel") or "?"),
            verdict=str(rec.get("verdict") or "error"),
            message=rec.get("message"),
            params=dict(rec.get("params") or {}),
            samples_per_row=rec.get("samples_per_row"),
            invalid=int(rec.get("invalid") or 0),
            rows=tuple(dict(r) for r in rec.get("rows") or ()),
            signature=rec.get("signature"),
            api_era=rec.get("api_era"),
            error=rec.get("error"),
        )


@dataclass(frozen=True)
class SpeedResult:
    kernel: str
    baseline: str
    flashinfer_ms: float | None = None
    torch_ms: float | None = None
    ratio: float | None = None  # torch_ms / flashinfer_ms: > 1 means FlashInfer is faster
    batch: int | None = None
    vocab: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class JitResult:
    ok: bool
    stage: str  # "import" or "build"
    seconds: float | None = None
    error: str | None = None  # the exception, with the compiler's output when nvcc failed


@dataclass(frozen=True)
class ValidationResult:
    host: str
    verdict: str
    reason: str
    python: str | None = None
    reachable: bool = True
    environment: Mapping[str, Any] = field(default_factory=dict)  # torch, GPU, versions
    toolkit: Mapping[str, Any] = field(default_factory=dict)  # what FlashInfer resolved
    jit: JitResult | None = None
    kernels: tuple[KernelResult, ...] = ()
    speed: tuple[SpeedResult, ...] = ()
    log_tail: tuple[str, ...] = ()  # FlashInfer's log records and Python warnings
    output_tail: tuple[str, ...] = ()  # what else the script printed (stderr, compiler)
    env_applied: Mapping[str, str] = field(default_factory=dict)
    duration_s: float = 0.0

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    @property
    def compile_s(self) -> float | None:
        return self.jit.seconds if self.jit is not None else None

    @property
    def speed_ratio(self) -> float | None:
        """torch.multinomial time / FlashInfer ``sampling_from_probs`` time at 128k vocab."""
        for s in self.speed:
            if s.kernel == "sampling_from_probs":
                return s.ratio
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "verdict": self.verdict,
            "reason": self.reason,
            "python": self.python,
            "reachable": self.reachable,
            "exit_code": self.exit_code,
            "environment": dict(self.environment),
            "toolkit": dict(self.toolkit),
            "jit": _plain(self.jit),
            "compile_s": self.compile_s,
            "speed_ratio": self.speed_ratio,
            "kernels": [_plain(k) for k in self.kernels],
            "speed": [_plain(s) for s in self.speed],
            "log_tail": list(self.log_tail),
            "output_tail": list(self.output_tail),
            "env_applied": dict(self.env_applied),
            "duration_s": round(self.duration_s, 3),
        }


def _plain(obj: Any) -> Any:
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return [_plain(v) for v in obj]
    return {name: _plain(getattr(obj, name)) for name in obj.__dataclass_fields__}
