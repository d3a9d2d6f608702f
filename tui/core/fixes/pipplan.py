"""A pip install as a fix step whose undo puts the venv back as it was.

Before the first change the step records, under the venv (``<prefix>/.detective-tui/``),
``pip freeze --all`` (``pip-freeze-<stamp>.txt``) and every path in the venv
(``….paths``), each written whole through a temp file — the paths first, so the freeze record
proves both are there. A re-run keeps the first record, so undo always returns to the state
before the fix; without the record pip never ran, and undo has nothing to do. The step holds
a lock (``….lock``, ``flock`` on a descriptor the shell and pip share) until both end: a pip
that outlives its connection (a client killed, a dropped link) keeps it, and the undo waits
for it to end before it looks.

Undo uninstalls what the fix added and reinstalls, without dependencies, every recorded
package whose version changed (pip skips those still at that version), from the same extra
indexes: ``name===version`` — the build with exactly that version string, never the
``+cu128`` build that ``==`` also matches — and a package installed from a file or URL
(``name @ file:///…``) from there again. Then it moves aside
(``pip-leftovers-<stamp>/``, nothing is deleted) every path that was not in the venv before
and that no installed package owns, and removes directories it left empty: what pip leaves
when it is killed mid-install (its ``~orch`` stashes of the old files, the new package half
written) or when it uninstalls (empty parent directories).
"""

from __future__ import annotations

from collections.abc import Sequence

from tui.core.facts import PythonEnv
from tui.core.fixes.env_targets import SYSTEM_PREFIXES
from tui.core.fixes.plan import FixError, Step
from tui.core.fixes.shell import host_path, q, say_changed, say_unchanged, write_path
from tui.core.hosts import Host
from tui.core.tables.torch_index import IndexSettingError, index_url

STATE_DIR = ".detective-tui"
_NAME = "[A-Za-z0-9._-][A-Za-z0-9._-]*"
# the project names in ``pip freeze`` output, and its pins as exact requirements
FREEZE_NAMES = f"sed -n -e 's/^\\({_NAME}\\)==.*/\\1/p' -e 's/^\\({_NAME}\\) @ .*/\\1/p'"
FREEZE_PINS = f"sed -n -e 's/^\\({_NAME}\\)==/\\1===/p' -e '/^{_NAME} @ /p'"


LOCK_FD = 9
# python -I -c WAIT: lock the file open on LOCK_FD; say so first when that has to wait
WAIT = f"""import fcntl, sys
try:
    fcntl.flock({LOCK_FD}, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    print("waiting: a pip of this fix run (or its undo) still runs here", flush=True)
    fcntl.flock({LOCK_FD}, fcntl.LOCK_EX)
"""
# python -I -c SNAPSHOT PREFIX OUT: every path under the venv (its state dir aside), as JSON
SNAPSHOT = f"""import json, os, sys
prefix, out = os.path.realpath(sys.argv[1]), sys.argv[2]
paths = []
for top, dirs, files in os.walk(prefix):
    if top == prefix and "{STATE_DIR}" in dirs:
        dirs.remove("{STATE_DIR}")
    rel = os.path.relpath(top, prefix)
    paths += [os.path.normpath(os.path.join(rel, n)) for n in dirs + files]
with open(out + ".tmp", "w") as fh:
    json.dump(sorted(paths), fh)
os.replace(out + ".tmp", out)
"""
# python -I -c LEFTOVERS PREFIX PATHS ASIDE: move aside what is new and owned by no package
# (and the REQUESTED marker the reinstall put on a package a dependency had brought)
LEFTOVERS = f"""import json, os, sys
from importlib import metadata
prefix, aside = os.path.realpath(sys.argv[1]), sys.argv[3]
with open(sys.argv[2]) as fh:
    before = set(json.load(fh))
moved = []
def move(r):
    os.makedirs(os.path.dirname(os.path.join(aside, r)), exist_ok=True)
    os.rename(os.path.join(prefix, r), os.path.join(aside, r))
    moved.append(r)
owned = set()
for dist in metadata.distributions():
    base = os.path.realpath(str(dist.locate_file("")))
    for f in dist.files or ():
        r = os.path.relpath(os.path.normpath(os.path.join(base, str(f))), prefix)
        info, name = os.path.split(r)
        if name == "REQUESTED" and info in before and r not in before:
            move(r)
            record = os.path.join(prefix, info, "RECORD")
            with open(record, "rb") as fh:
                lines = [x for x in fh if not x.startswith(os.fsencode(str(f) + ","))]
            with open(record + ".tmp", "wb") as fh:
                fh.writelines(lines)
            os.replace(record + ".tmp", record)
        owned.add(r)
for top, dirs, files in os.walk(prefix, topdown=False):
    rel = os.path.relpath(top, prefix)
    if rel.split(os.sep)[0] == "{STATE_DIR}":
        continue
    for n in files + dirs:
        r, p = os.path.normpath(os.path.join(rel, n)), os.path.join(top, n)
        if r in before or r == "{STATE_DIR}":
            continue
        if os.path.isdir(p) and not os.path.islink(p):
            if not os.listdir(p):
                os.rmdir(p)
        elif r not in owned:
            move(r)
if moved:
    print("moved aside to %s what pip left behind: %s" % (aside, " ".join(moved[:20])))
"""


def state_dir(py: PythonEnv) -> str:
    prefix = (py.prefix or "").rstrip("/")
    if prefix in (*SYSTEM_PREFIXES, ""):
        raise FixError(
            f"{py.path} is the system's Python, not a venv: pip would change the OS's packages "
            "(and refuses to on PEP 668 distributions); fix the venv the server runs from"
        )
    return f"{prefix}/{STATE_DIR}"


def freeze_file(py: PythonEnv, stamp: str) -> str:
    return f"{state_dir(py)}/pip-freeze-{stamp}.txt"


def torch_indexes(*variants: str) -> list[str]:
    """PyTorch's index of each variant, ``$DETECTIVE_TUI_TORCH_INDEX`` applied."""
    try:
        return [index_url(v) for v in variants]
    except IndexSettingError as exc:
        raise FixError(str(exc)) from None


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
    unless: tuple[str, str] | None = None,
    check: str | None = None,
) -> Step:
    """``python -m pip install ARGS`` with the records and the undo described above.

    ``unless`` is (an sh condition, why): when it holds, nothing is run and the step says
    why it is unchanged; ``check`` runs after pip and fails the step when it fails."""
    state = state_dir(py)
    record = freeze_file(py, stamp)
    f = write_path(host, record)
    prefix = host_path(host, state.removesuffix("/" + STATE_DIR))
    aside = write_path(host, f"{state}/pip-leftovers-{stamp}")
    python = host_path(host, py.path)
    pip = f"{python} -m pip"
    index = "".join(f" --extra-index-url {q(u)}" for u in indexes)
    snapshot = f'{python} -I -c {q(SNAPSHOT)} {prefix} "$f".paths'
    lock = [f'exec {LOCK_FD}>>"$f".lock', f"{python} -I -c {q(WAIT)}"]
    leftovers = f'{python} -I -c {q(LEFTOVERS)} {prefix} "$f".paths {aside}'
    body = [
        f"f={f}",
        'mkdir -p "$(dirname "$f")"',
        *lock,
        f'[ -s "$f" ] || {{ {snapshot}; {pip} freeze --all > "$f".tmp; mv -f "$f".tmp "$f"; }}',
        f"{pip} install --disable-pip-version-check{index} {' '.join(q(a) for a in args)}",
        *([check] if check else []),
        say_changed(f"pip installed {' '.join(args)} (the packages before: {record})"),
    ]
    if unless:
        condition, why = unless
        body = [
            f"if {condition}; then",
            f"  {say_unchanged(why)}",
            "else",
            *(f"  {line}" for line in body),
            "fi",
        ]
    undo = "\n".join(
        [
            f"f={f}",
            'mkdir -p "$(dirname "$f")"',
            *lock,
            'rm -f "$f".tmp "$f".paths.tmp',
            'if [ ! -s "$f" ]; then',  # written before pip ran: without it, pip never ran
            f"  {say_unchanged(f'nothing of this fix run: no record {record}, pip never ran')}",
            "  exit 0",
            "fi",
            f'{pip} freeze --all | {FREEZE_NAMES} | sort > "$f".after',
            f'{FREEZE_NAMES} "$f" | sort > "$f".before',
            'added=$(comm -13 "$f".before "$f".after)',
            f'if [ -n "$added" ]; then {pip} uninstall -y $added; fi',
            f'{FREEZE_PINS} "$f" > "$f".pins',
            f'{pip} install --disable-pip-version-check --no-deps{index} -r "$f".pins',
            f'if [ -s "$f".paths ]; then {leftovers}; fi',
            'rm -f "$f".after "$f".before "$f".pins',
            say_changed(f"restored the packages recorded in {record}"),
        ]
    )
    return Step(
        title=title,
        command="\n".join(body),
        undo=undo,
        changes=changes,
        needs_root=False,
        deadline_s=deadline_s,
    )
