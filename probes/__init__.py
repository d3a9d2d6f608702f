"""The remote side of detective-tui: scripts sent to hosts, and how to call them.

``probe_script()`` is the complete POSIX sh probe (``probe.sh`` with ``pyfacts_program()``
embedded as a heredoc fed to each interpreter). Run it as ``sh -s`` with ``probe_env(...)``
exported first; it prints the sentinel records described in ``probes/README.md``, which
``tui.core.facts.build.FactBuilder`` turns into ``Facts``. Nothing here imports ``tui``.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # ast loads only where no kept script serves (probe_script's cache_dir)
    import ast

PROBE_VERSION = "2"
SH_COMMENT = re.compile(r"\s*#(?! ----)")  # a comment line of probe.sh, not a section head
SENTINEL = "@@DT1"


# modules hosthelper.py imports, sent inside the one program (helper_program)
HELPER_MODULES = ("hostread",)

# modules pyfacts.py imports, sent inside the one program (the host has no copy of them)
PYFACTS_MODULES = ("pyrecord", "pybinaries")

HERE = Path(__file__).parent
# every file the probe script is built from, this one (the build) included: a kept script is
# the one these bytes, under this Python (``ast.unparse``), build
SCRIPT_SOURCES = ("__init__.py", "probe.sh", "pyfacts.py", "hosthelper.py",
                  *(m + ".py" for m in (*PYFACTS_MODULES, *HELPER_MODULES)))  # fmt: skip
KEPT_PREFIX = "probe-script-"


def _source(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def one_program(main: str, modules: Sequence[str]) -> str:
    """``main`` (a file name of this package) as one program: each ``from M import …`` of one
    of ``modules`` replaced by M's body (inlined the same way, once), without docstrings and
    comments (``ast.unparse``, still Python 3.8). One compile on the host, no module objects,
    and the whole script stays under the 128 KiB one argument may hold (``exec:``)."""
    import ast

    done: set[str] = set()

    def body(name: str) -> list[ast.stmt]:
        tree = ast.parse(_source(name))
        for node in ast.walk(tree):
            nodes = getattr(node, "body", None)
            first = nodes[0] if isinstance(nodes, list) and nodes else None
            text = getattr(first.value, "value", None) if isinstance(first, ast.Expr) else None
            if isinstance(text, str):  # a docstring
                node.body = nodes[1:] or [ast.Pass()]
        out: list[ast.stmt] = []
        for node in tree.body:
            if not (isinstance(node, ast.ImportFrom) and node.module in modules):
                out.append(node)
            elif node.module not in done:
                done.add(node.module)
                out += body(f"{node.module}.py")
        return out

    tree = ast.Module(body=body(main), type_ignores=[])
    return one_space(ast.unparse(tree), ast.dump(tree))


_LEVELS = re.compile(r"^(?:    )+", re.M)


def one_space(program: str, tree_dump: str) -> str:
    """``program`` (``ast.unparse``'s text) indented one space a level, not four: the same
    program in about 9 KB fewer bytes of the script, which must fit one argument (``exec:``).
    Safe because unparse puts each statement on its own line and every string on one line as
    an escaped literal, so a line's leading spaces are only ever indentation. Checked: where
    the result does not parse to ``tree_dump`` (an unparse that wrote otherwise), ``program``
    is kept as it is."""
    import ast

    short = _LEVELS.sub(lambda m: " " * (len(m.group(0)) // 4), program)
    return short if ast.dump(ast.parse(short)) == tree_dump else program


@cache
def pyfacts_program() -> str:
    """``pyfacts.py`` as one stdin program, ``PYFACTS_MODULES`` inlined (one_program)."""
    return one_program("pyfacts.py", PYFACTS_MODULES)


@cache
def helper_program() -> str:
    """``hosthelper.py`` as the probe carries it, ``hostread.py`` inlined (one_program)."""
    return one_program("hosthelper.py", HELPER_MODULES)


@cache
def probe_script(cache_dir: Path | None = None) -> str:
    """The whole probe: POSIX sh with the stdlib Python snippet embedded. The script's comment
    lines stay home (probe.sh has them; the first line and the ``# ----`` section heads travel),
    so the whole fits the 128 KiB one ``exec:`` argument holds.

    With ``cache_dir`` the built text is kept there, named by the digest of its sources
    (``SCRIPT_SOURCES`` and the Python version), and later processes read it back (~1 ms)
    instead of building it (``helper_program``'s ``ast``: ~0.06 s before a probe can be sent).
    A kept file is used only when it is ours, not writable by others, and its text matches the
    checksum it starts with; otherwise, or when it cannot be written (a full disk), the script
    is built as without ``cache_dir``, and the text is the same either way."""
    if cache_dir is None:
        return _build_script()
    digest = hashlib.sha256(sys.version.encode())
    for name in SCRIPT_SOURCES:
        digest.update(b"\0%s\0%s" % (name.encode(), (HERE / name).read_bytes()))
    path = cache_dir / f"{KEPT_PREFIX}{digest.hexdigest()}.sh"
    kept = _read_kept(path)
    if kept is None:
        kept = _build_script()
        _keep(path, kept)
    return kept


def _read_kept(path: Path) -> str | None:
    """The script kept in ``path`` (a checksum line, then the text), or None: missing, not
    ours, writable by others, torn or changed."""
    try:
        with path.open("rb") as f:
            st = os.fstat(f.fileno())
            if st.st_uid != os.geteuid() or st.st_mode & 0o022:
                return None
            head, _, body = f.read().partition(b"\n")
    except OSError:
        return None
    if hashlib.sha256(body).hexdigest().encode() != head:
        return None
    return body.decode("utf-8")


def _keep(path: Path, script: str) -> None:
    """Write ``path`` atomically (a temp file renamed over it: a reader sees all or nothing;
    a torn file after a crash fails the checksum) and remove the scripts other sources built,
    and the temp files of writers killed before their rename (a live writer whose file goes
    only keeps nothing). A cache that cannot be written is no error: the next process builds
    the script again."""
    import tempfile

    body = script.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=f".{KEPT_PREFIX}", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        for old in (*path.parent.glob(f"{KEPT_PREFIX}*.sh"), *path.parent.glob(f".{KEPT_PREFIX}*")):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        return


@cache  # per process: a test's own cache dir builds no second time
def _build_script() -> str:
    lines = _source("probe.sh").split("\n")
    script = "\n".join(lines[:1] + [ln for ln in lines[1:] if not SH_COMMENT.match(ln)])
    pyfacts = pyfacts_program()
    if "\nDT_PYFACTS_EOF\n" in f"\n{pyfacts}\n":
        raise ValueError("pyfacts.py must not contain the heredoc terminator line")
    helper = helper_program()
    return (
        script.replace("@DT_PROBE_VERSION@", PROBE_VERSION)
        .replace("@DT_HOSTHELPER@", helper.replace("'", "'\\''"))
        .replace("@DT_PYFACTS@", pyfacts)
    )


def trust_prelude(deadline_s: int) -> str:
    """POSIX sh that defines probe.sh's own ``deadline`` (``timeout -k 2 deadline_s``) and
    ``trust_check HOSTPATH`` (the trust rule: ``_tw`` empty when the program may run), for a
    script that runs a program the host chose outside the probe (``explain --container``). The
    functions are probe.sh's text, so the rule is written once; the helper is not started here
    (``hxon`` false: the check uses ``readlink`` and ``ls``)."""
    lines = _source("probe.sh").split("\n")
    parts = [
        "TAB='\t'\nNL='\n'",
        f"T={int(deadline_s)}",
        "TO=\ncommand -v timeout >/dev/null 2>&1 && TO=timeout",
        "MYUID=$(id -u 2>/dev/null)",
        "hxon() { return 1; }",
    ]
    for name in ("deadline", "trust_check", "trust_lines"):
        start = lines.index(f"{name}() {{")
        end = lines.index("}", start)
        parts.append("\n".join(ln for ln in lines[start : end + 1] if not SH_COMMENT.match(ln)))
    return "\n".join(parts) + "\n"


def probe_env(
    pythons: Sequence[str],
    *,
    root: str | None = None,
    step_timeout_s: int = 10,
    session: str | None = None,
    tree_exec: bool = False,
    only: str = "",
) -> dict[str, str]:
    """Variables to export before running ``probe_script()`` with ``sh -s``.

    ``pythons`` are host paths of interpreters to inspect (more are discovered from running
    serving processes); ``root`` is a root prefix (a mounted image or a fake host tree) under
    which every absolute path is examined; ``step_timeout_s`` bounds each external command.
    ``session="current"``: the probe runs in the caller's own environment (the ``local``
    target), which is then the "current environment" context rather than an SSH session.
    ``tree_exec``: the ``root`` tree is a fake host detective-tui built (the demo fleet, the
    test suite's hosts), whose stand-in programs may run; any other tree's programs never do.
    ``only="gpus"``: the nvidia-smi part alone (the live GPU state, under the same trust rule
    and step deadline), for a refresh of what the last probe saw.
    """
    if step_timeout_s < 1:
        raise ValueError("step_timeout_s must be at least 1 second")
    for p in pythons:
        if "\n" in p or "\t" in p:
            raise ValueError(f"interpreter path contains a newline or a tab: {p!r}")
    env = {
        "DT_ROOT": (root or "").rstrip("/"),
        "DT_PYTHONS": "\n".join(pythons),
        "DT_STEP_TIMEOUT": str(int(step_timeout_s)),
        "DT_ONLY": only,
    }
    if session:
        env["DT_SESSION"] = session
    if tree_exec and root:
        env["DT_TREE_EXEC"] = "1"
    return env
