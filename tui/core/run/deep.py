"""``--deep``: run each replayed interpreter's own FlashInfer on its host, in the judged
environment (``probes/deep_flashinfer.py``), and ``cuInit`` through each judged interpreter
and ``ctypes`` (``probes/deep_cuinit.py``); read back what they printed."""

from __future__ import annotations

import json
import shlex
from importlib import resources
from typing import TYPE_CHECKING, Any

from tui.core.facts import Facts
from tui.core.hosts import Host
from tui.core.judge.diagnosis import Diagnosis, deep_invocation

if TYPE_CHECKING:
    from tui.core.run.runner import Session

DEEP_SENTINEL = "@@deep\t"
DEEP_DEADLINE_S = 180.0
CUINIT_SENTINEL = "@@cuinit\t"
CUINIT_DEADLINE_S = 30.0
CUINIT_MAX_RUNS = 8  # judged environments per host
# the variables of the judged environment cuInit depends on (masked values are not re-sent)
CUINIT_VARS = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH")

DeepResults = dict[str, dict[str, Any]]  # python path → what deep_flashinfer.py printed


def deep_script(name: str = "deep_flashinfer.py") -> str:
    return resources.files("probes").joinpath(name).read_text(encoding="utf-8")


def parse_deep(output: str, sentinel: str = DEEP_SENTINEL) -> dict[str, Any] | None:
    for line in output.splitlines():
        if line.startswith(sentinel):
            return json.loads(line[len(sentinel) :])
    return None


def cuinit_runs(facts: Facts) -> list[tuple[str, str, dict[str, str]]]:
    """(environment label, interpreter path, variables) for each judged interpreter, once per
    distinct interpreter and variables, at most ``CUINIT_MAX_RUNS``."""
    runs: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
    for py in facts.pythons:
        if not py.exists:
            continue
        ctx = facts.python_context(py)
        found = ctx.vars if ctx is not None else {}
        env = {k: found[k] for k in CUINIT_VARS if k in found and "***" not in found[k]}
        label = ctx.label if ctx is not None else "SSH session"
        runs.setdefault((py.path, tuple(sorted(env.items()))), label)
    return [(label, path, dict(env)) for (path, env), label in runs.items()][:CUINIT_MAX_RUNS]


async def run_cuinit(session: Session, host: Host, facts: Facts) -> list[tuple[str, dict]]:
    """``deep_cuinit.py`` with each judged interpreter, in its environment: (label, result)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for label, path, env in cuinit_runs(facts):
        if host.root and not host.fake_tree:
            out.append((label, {"error": f"not run: {path} is a program of the inspected tree"}))
            continue
        if host.root and "LD_LIBRARY_PATH" not in env:  # the loader would be this machine's
            out.append((label, {"error": "not run: a simulated tree has no libcuda of its own"}))
            continue
        python = (host.root or "").rstrip("/") + path
        done = await session.run_script(
            host,
            deep_script("deep_cuinit.py"),
            env=env,
            deadline_s=CUINIT_DEADLINE_S,
            interpreter=f"{shlex.quote(python)} -",
        )
        parsed = parse_deep(done.output, CUINIT_SENTINEL)
        if parsed is None:
            tail = " | ".join(done.output.strip().splitlines()[-3:])
            parsed = {"error": done.error or f"exit status {done.exit_status}: {tail}"}
        out.append((label, parsed))
    return out


async def run_deep(session: Session, host: Host, facts: Facts, diagnosis: Diagnosis) -> DeepResults:
    """Run ``deep_flashinfer.py`` with each replayed interpreter, in its judged environment."""
    results: DeepResults = {}
    for replayed in diagnosis.flashinfer:
        if host.root and not host.fake_tree:
            results[replayed.python] = {
                "error": f"not run: {replayed.python} is a program of the inspected tree "
                f"{host.root}, and nothing from an inspected tree runs here"
            }
            continue
        env, unset = deep_invocation(facts, replayed)
        python = (host.root or "").rstrip("/") + replayed.python
        interpreter = f"{shlex.quote(python)} -" + (
            f" --unset {shlex.quote(unset)}" if unset else ""
        )
        done = await session.run_script(
            host, deep_script(), env=env, deadline_s=DEEP_DEADLINE_S, interpreter=interpreter
        )
        parsed = parse_deep(done.output)
        if parsed is None:
            tail = " | ".join(done.output.strip().splitlines()[-3:])
            reason = done.error or f"exit status {done.exit_status}: {tail or 'no output'}"
            parsed = {"error": f"the deep check printed no result ({reason})"}
        results[replayed.python] = parsed
    return results
