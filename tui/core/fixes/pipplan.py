"""A pip install as a fix step whose undo puts the venv's packages back as they were.

Before the first change the step records ``pip freeze --all`` under the venv
(``<prefix>/.detective-tui/pip-freeze-<stamp>.txt``, written whole through a temp file; a
re-run keeps the first record, so undo always returns to the state before the fix; without
the record pip never ran, and undo has nothing to do). Undo uninstalls what the fix added and
reinstalls, without dependencies, the recorded ``name==version`` of every package whose
version changed (pip skips those still at that version), from the same extra indexes.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui.core.facts import PythonEnv
from tui.core.fixes.plan import FixError, Step
from tui.core.fixes.shell import host_path, q, say_changed, say_unchanged
from tui.core.fixes.targets import SYSTEM_PREFIXES
from tui.core.hosts import Host

STATE_DIR = ".detective-tui"


def freeze_file(py: PythonEnv, stamp: str) -> str:
    prefix = (py.prefix or "").rstrip("/")
    if prefix in (*SYSTEM_PREFIXES, ""):
        raise FixError(
            f"{py.path} is the system's Python, not a venv: pip would change the OS's packages "
            "(and refuses to on PEP 668 distributions); fix the venv the server runs from"
        )
    return f"{prefix}/{STATE_DIR}/pip-freeze-{stamp}.txt"


def pip_step(
    host: Host,
    py: PythonEnv,
    stamp: str,
    *,
    title: str,
    args: Sequence[str],
    indexes: Sequence[str],
    changes: str,
    deadline_s: float = 1800.0,
) -> Step:
    """``python -m pip install ARGS`` with the freeze record and the undo described above."""
    state = freeze_file(py, stamp)
    f = host_path(host, state)
    pip = f"{host_path(host, py.path)} -m pip"
    index = "".join(f" --extra-index-url {q(u)}" for u in indexes)
    command = "\n".join(
        [
            f"f={f}",
            'mkdir -p "$(dirname "$f")"',
            f'[ -s "$f" ] || {{ {pip} freeze --all > "$f".tmp; mv -f "$f".tmp "$f"; }}',
            f"{pip} install --disable-pip-version-check{index} {' '.join(q(a) for a in args)}",
            say_changed(f"pip installed {' '.join(args)} (the packages before: {state})"),
        ]
    )
    undo = "\n".join(
        [
            f"f={f}",
            'rm -f "$f".tmp',
            'if [ ! -s "$f" ]; then',  # written before pip ran: without it, pip never ran
            f"  {say_unchanged(f'nothing of this fix run: no record {state}, pip never ran')}",
            "  exit 0",
            "fi",
            f"{pip} freeze --all | sed -n 's/==.*//p' | sort > \"$f\".after",
            'sed -n \'s/==.*//p\' "$f" | sort > "$f".before',
            'added=$(comm -13 "$f".before "$f".after)',
            f'if [ -n "$added" ]; then {pip} uninstall -y $added; fi',
            'grep -E \'^[A-Za-z0-9._-]+==\' "$f" > "$f".pins',
            f'{pip} install --disable-pip-version-check --no-deps{index} -r "$f".pins',
            'rm -f "$f".after "$f".before "$f".pins',
            say_changed(f"restored the packages recorded in {state}"),
        ]
    )
    return Step(
        title=title,
        command=command,
        undo=undo,
        changes=changes,
        needs_root=False,
        deadline_s=deadline_s,
    )
