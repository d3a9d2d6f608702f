"""The remote side of detective-tui: scripts sent to hosts, and how to call them.

``probe_script()`` is the complete POSIX sh probe (``probe.sh`` with ``pyfacts_program()``
embedded as a heredoc fed to each interpreter). Run it as ``sh -s`` with ``probe_env(...)``
exported first; it prints the sentinel records described in ``probes/README.md``, which
``tui.core.facts.build.FactBuilder`` turns into ``Facts``. Nothing here imports ``tui``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from functools import cache
from importlib import resources

PROBE_VERSION = "2"
SH_COMMENT = re.compile(r"\s*#(?! ----)")  # a comment line of probe.sh, not a section head
SENTINEL = "@@DT1"


# modules hosthelper.py imports, sent inside the one program (helper_program)
HELPER_MODULES = ("hostread",)

# modules pyfacts.py imports, sent inside the one program (the host has no copy of them)
PYFACTS_MODULES = ("pyrecord", "pybinaries")


def one_program(main: str, modules: Sequence[str]) -> str:
    """``main`` (a file name of this package) as one program: each ``from M import …`` of one
    of ``modules`` replaced by M's body (inlined the same way, once), without docstrings and
    comments (``ast.unparse``, still Python 3.8). One compile on the host, no module objects,
    and the whole script stays under the 128 KiB one argument may hold (``exec:``)."""
    here = resources.files(__name__)
    done: set[str] = set()

    def body(name: str) -> list[ast.stmt]:
        tree = ast.parse(here.joinpath(name).read_text("utf-8"))
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

    return ast.unparse(ast.Module(body=body(main), type_ignores=[]))


@cache
def pyfacts_program() -> str:
    """``pyfacts.py`` as one stdin program, ``PYFACTS_MODULES`` inlined (one_program)."""
    return one_program("pyfacts.py", PYFACTS_MODULES)


@cache
def helper_program() -> str:
    """``hosthelper.py`` as the probe carries it, ``hostread.py`` inlined (one_program)."""
    return one_program("hosthelper.py", HELPER_MODULES)


@cache
def probe_script() -> str:
    """The whole probe: POSIX sh with the stdlib Python snippet embedded. The script's comment
    lines stay home (probe.sh has them; the first line and the ``# ----`` section heads travel),
    so the whole fits the 128 KiB one ``exec:`` argument holds."""
    lines = resources.files(__name__).joinpath("probe.sh").read_text(encoding="utf-8").split("\n")
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
    lines = resources.files(__name__).joinpath("probe.sh").read_text(encoding="utf-8").split("\n")
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
