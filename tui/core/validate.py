"""Validate FlashInfer's sampling kernels on a host: run ``probes/validate_sampling.py`` with the
host's own Python, and turn its records into a ``ValidationResult``.

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

import json
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tui.core import exitcodes
from tui.core.facts import Facts, PythonEnv
from tui.core.hosts import Host
from tui.core.redact import MASK
from tui.core.runner import NOT_REACHED, SIMULATED_UNREACHABLE, Session

PROBES_DIR = Path(__file__).resolve().parents[2] / "probes"
SENTINEL = "@@validate"
HELPER_MODULES = ("sampling_stats", "sampling_eras")  # sent before validate_sampling.py
DEFAULT_DEADLINE_S = 900.0  # a cold JIT build of the sampling module takes minutes
VERDICTS = ("pass", "partial", "fail", "skipped", "error")
EXIT_CODES = {
    "pass": exitcodes.OK,
    "partial": exitcodes.CRITICAL,
    "skipped": exitcodes.OK,
    "fail": exitcodes.CRITICAL,
    "error": exitcodes.UNREACHABLE,
}
# variables of a serving process's environment that decide what FlashInfer does
CONTEXT_VARS = ("CUDA_HOME", "CUDA_PATH", "PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")
CONTEXT_PREFIXES = ("FLASHINFER_",)
OUTPUT_TAIL = 30

LineCallback = Callable[[str], None]


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

    def to_markdown(self) -> str:
        return "\n".join(_markdown_lines(self)) + "\n"


def _plain(obj: Any) -> Any:
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return [_plain(v) for v in obj]
    return {name: _plain(getattr(obj, name)) for name in obj.__dataclass_fields__}


# -- the script ------------------------------------------------------------------------------


def validation_script() -> str:
    """``validate_sampling.py`` with ``sampling_stats.py`` and ``sampling_eras.py`` registered
    before it, as one program for ``python -`` (each part compiled on its own, so each keeps
    its ``from __future__`` imports)."""
    modules = "".join(
        f"_dt_load({name!r}, {(PROBES_DIR / (name + '.py')).read_text(encoding='utf-8')!r})\n"
        for name in HELPER_MODULES
    )
    main_src = (PROBES_DIR / "validate_sampling.py").read_text(encoding="utf-8")
    return (
        "import sys, types\n"
        "def _dt_load(name, src):\n"
        "    mod = types.ModuleType(name)\n"
        "    mod.__file__ = name + '.py'\n"
        "    sys.modules[name] = mod\n"
        "    exec(compile(src, name + '.py', 'exec'), mod.__dict__)\n"
        "    return mod\n"
        f"{modules}"
        f"sys.exit(_dt_load('validate_sampling', {main_src!r}).main())\n"
    )


# -- choosing the interpreter -----------------------------------------------------------------


def _python_rank(py: PythonEnv, inventory: Sequence[str]) -> tuple[int, int, int]:
    has = 0 if py.flashinfer_version else 1 if py.torch_version else 2
    listed = inventory.index(py.path) if py.path in inventory else len(inventory)
    source = {"process": 0, "inventory": 1}.get(py.source, 2)  # a server's env wins
    return (has, listed, source)


def choose_python(host: Host, facts: Facts | None) -> tuple[str, PythonEnv | None]:
    """The interpreter to validate with: one that has FlashInfer (then torch), the
    inventory's order first, and for the same path the serving process's copy (so its
    environment is applied); without facts the inventory's first, else ``python3``."""
    candidates = [p for p in (facts.pythons if facts else ()) if p.exists]
    if candidates:
        best = min(candidates, key=lambda p: _python_rank(p, host.python))
        return best.path, best
    if host.python:
        return host.python[0], None
    if facts is not None and facts.host.python3:
        return facts.host.python3, None
    return "python3", None


def context_env(facts: Facts | None, py: PythonEnv | None) -> dict[str, str]:
    """The variables of the serving process the interpreter was found in, so FlashInfer
    resolves its toolkit as the server does; nothing for the SSH session's own context."""
    if facts is None or py is None:
        return {}
    ctx = facts.python_context(py)
    if ctx is None or ctx.kind not in ("process", "unit"):
        return {}
    return {
        name: value
        for name, value in ctx.vars.items()
        if (name in CONTEXT_VARS or name.startswith(CONTEXT_PREFIXES)) and value != MASK
    }


# -- records → result -------------------------------------------------------------------------


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


# -- running it -------------------------------------------------------------------------------


async def validate_host(
    session: Session,
    host: Host,
    facts: Facts | None = None,
    *,
    python: str | None = None,
    on_line: LineCallback | None = None,
    deadline_s: float = DEFAULT_DEADLINE_S,
    samples_per_row: int | None = None,
    timing: bool = True,
) -> ValidationResult:
    """Validate the sampling kernels of ``host`` through ``session`` (a ``runner.Session``).

    ``python`` overrides the interpreter; otherwise it is chosen from ``facts`` (the host is
    probed first when neither facts nor an inventory interpreter are known). ``on_line``
    receives one progress line per record. Never raises for host trouble; the result is
    recorded in the session's transcript as a ``validation`` event.
    """
    started = time.monotonic()
    result = await _validate(
        session, host, facts, python, on_line, deadline_s, samples_per_row, timing
    )
    if not result.duration_s:
        result = _with_duration(result, time.monotonic() - started)
    session.record("validation", host=host.name, result=result.to_json())
    return result


def _with_duration(result: ValidationResult, seconds: float) -> ValidationResult:
    return replace(result, duration_s=seconds)


async def _validate(
    session: Session,
    host: Host,
    facts: Facts | None,
    python: str | None,
    on_line: LineCallback | None,
    deadline_s: float,
    samples_per_row: int | None,
    timing: bool,
) -> ValidationResult:
    if host.root:
        what = (
            "a simulated demo host (a fake filesystem tree)"
            if host.source == "demo fleet"
            else f"a filesystem tree inspected under {host.root}"
        )
        return ValidationResult(
            host=host.name,
            verdict="skipped",
            reason=(
                f"cannot validate here: {host.name} is {what}, not a running machine; "
                "sampling kernels can only be validated on the GPU host itself"
            ),
            python=python,
        )
    if host.simulate == "unreachable":
        return ValidationResult(
            host=host.name, verdict="error", reason=SIMULATED_UNREACHABLE, reachable=False
        )
    py_env: PythonEnv | None = None
    if python is None:
        if facts is None and not host.python:
            probed = await session.probe(host)
            if probed.facts is None:
                return ValidationResult(
                    host=host.name,
                    verdict="error",
                    reason=f"could not probe the host: {probed.error}",
                    reachable=probed.reachable,
                )
            facts = probed.facts
        python, py_env = choose_python(host, facts)
    applied = context_env(facts, py_env)
    env = {**host.env, **applied, "PYTHONDONTWRITEBYTECODE": "1"}
    if samples_per_row is not None:
        env["DT_VALIDATE_SAMPLES"] = str(samples_per_row)
    if not timing:
        env["DT_VALIDATE_SPEED"] = "0"
    lines: list[str] = []

    def collect(line: str) -> None:
        lines.append(line)
        rec = parse_record(line)
        if on_line is not None and rec is not None:
            text = describe_record(*rec)
            if text:
                on_line(text)

    command = await session.run_script(
        host,
        validation_script(),
        env=env,
        deadline_s=deadline_s,
        on_line=collect,
        interpreter=f"{shlex.quote(python)} -",
    )
    if command.error_kind in NOT_REACHED:
        return ValidationResult(
            host=host.name, verdict="error", reason=str(command.error), python=python,
            reachable=False,
        )  # fmt: skip
    if not lines and command.output:
        lines = command.output.splitlines()
    return result_from_output(
        host.name,
        python,
        lines,
        exit_status=command.exit_status,
        timed_out=command.timed_out,
        error=command.error,
        duration_s=command.duration_s,
        env_applied=applied,
    )


# -- Markdown ---------------------------------------------------------------------------------


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


def _markdown_lines(r: ValidationResult) -> list[str]:
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
