"""The probe as one standalone ``#!/bin/sh`` file for other engines (Ansible, ClusterShell,
Slurm, kubectl): the settings ``probe`` would pass on the command line are assignments at the top,
then ``probes.probe_script()`` unchanged, so the records are the ones ``probe`` gets.

It runs as ``sh probe.sh`` (a file: it re-executes itself under ``timeout -k 5 DEADLINE`` when
the host has ``timeout``, the whole-run deadline ``probe`` sets) or ``sh -s < probe.sh`` (stdin:
no file to re-execute, so only the per-step deadlines hold — the engine's own timeout should
bound the run).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping, Sequence

from probes import PROBE_VERSION, probe_env, probe_script
from tui.core.reach.transport import KILL_AFTER_S

MARK = "# detective-tui standalone probe"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def standalone_probe(
    *,
    host: str | None,
    env: Mapping[str, str],
    pythons: Sequence[str],
    root: str | None,
    step_timeout_s: int,
    deadline_s: float,
    tree_exec: bool = False,
) -> str:
    """The script text. ``env`` is the host's inventory ``env`` (exported first, as ``probe``
    does); ``ValueError`` for a variable name that is not one, or bad ``pythons``.
    ``tree_exec``: ``root`` is a fake host tree whose stand-in programs may run."""
    settings = {
        **env,
        **probe_env(pythons, root=root, step_timeout_s=step_timeout_s, tree_exec=tree_exec),
    }
    bad = [name for name in settings if not _ENV_NAME.match(name)]
    if bad:
        raise ValueError(f"not variable names: {', '.join(map(repr, bad))}")
    deadline = max(1, math.ceil(deadline_s))
    about = f" for {host}" if host else ""
    lines = [
        "#!/bin/sh",
        f"{MARK} (probe version {PROBE_VERSION}){about}, written by `detective-tui probe-script`.",
        "# Run it as `sh probe.sh` or `sh -s < probe.sh` (any engine: ansible -m script, clush,",
        "# srun, kubectl exec); give its output to `detective-tui ingest`. POSIX sh + coreutils.",
        "# Run as a file, it re-executes itself under `timeout` (the whole-run deadline).",
        'if [ -z "${DT_STANDALONE_DEADLINE:-}" ] && [ -r "$0" ] \\',
        "  && command -v timeout >/dev/null 2>&1 \\",
        f'  && grep -q "^{MARK}" "$0" 2>/dev/null; then',
        "  DT_STANDALONE_DEADLINE=1",
        "  export DT_STANDALONE_DEADLINE",
        f'  exec timeout -k {KILL_AFTER_S} {deadline} sh "$0"',
        "fi",
    ]
    for name, value in settings.items():
        lines.append(f"{name}={shlex.quote(value)}")
        lines.append(f"export {name}")
    return "\n".join(lines) + "\n" + probe_script()
