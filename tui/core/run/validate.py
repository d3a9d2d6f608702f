"""Validate FlashInfer's sampling kernels on a host: run ``probes/validate_sampling.py`` with the
host's own Python, and turn its records into a ``ValidationResult``.
The records become a ``ValidationResult`` in ``validate_records``; the verdicts and exit codes
are documented in ``validate_result``.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from tui.core.facts import Facts, PythonEnv
from tui.core.hosts import Host
from tui.core.redact import MASK
from tui.core.run.runner import NOT_REACHED, Session
from tui.core.run.validate_records import describe_record, parse_record, result_from_output
from tui.core.run.validate_result import ValidationResult

PROBES_DIR = Path(__file__).resolve().parents[3] / "probes"
HELPER_MODULES = ("sampling_stats", "sampling_eras")  # sent before validate_sampling.py
DEFAULT_DEADLINE_S = 900.0  # a cold JIT build of the sampling module takes minutes
# variables of a serving process's environment that decide what FlashInfer does
CONTEXT_VARS = ("CUDA_HOME", "CUDA_PATH", "PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")
CONTEXT_PREFIXES = ("FLASHINFER_",)

LineCallback = Callable[[str], None]


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
        what = f"a filesystem tree inspected under {host.root}"
        return ValidationResult(
            host=host.name,
            verdict="skipped",
            reason=(
                f"cannot validate here: {host.name} is {what}, not a running machine; "
                "sampling kernels can only be validated on the GPU host itself"
            ),
            python=python,
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
