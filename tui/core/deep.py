"""``--deep``: run each replayed interpreter's own FlashInfer on its host, in the judged
environment (``probes/deep_flashinfer.py``), and read back what it printed."""

from __future__ import annotations

import json
import shlex
from importlib import resources
from typing import TYPE_CHECKING, Any

from tui.core.diagnosis import Diagnosis, deep_invocation
from tui.core.facts import Facts
from tui.core.hosts import Host

if TYPE_CHECKING:
    from tui.core.runner import Session

DEEP_SENTINEL = "@@deep\t"
DEEP_DEADLINE_S = 180.0

DeepResults = dict[str, dict[str, Any]]  # python path → what deep_flashinfer.py printed


def deep_script() -> str:
    return resources.files("probes").joinpath("deep_flashinfer.py").read_text(encoding="utf-8")


def parse_deep(output: str) -> dict[str, Any] | None:
    for line in output.splitlines():
        if line.startswith(DEEP_SENTINEL):
            return json.loads(line[len(DEEP_SENTINEL) :])
    return None


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
