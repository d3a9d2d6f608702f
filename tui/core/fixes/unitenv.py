"""The environment a systemd unit will start with, read from its unit file and drop-ins.

A running server keeps the environment it started with; a drop-in changes what it gets at
the next start. To judge a fix honestly the verdict is computed for that next start, and the
live process is reported as "restart pending" while it differs. The files are read (under
the host's root prefix) rather than asked of ``systemctl``, so fake hosts and hosts without
a running systemd are judged the same way. ``EnvironmentFile=`` is not followed.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tui.core.facts import EnvContext, Facts
from tui.core.hosts import Host

UNIT_DIRS = (  # lowest precedence first
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
    "/run/systemd/system",
    "/etc/systemd/system",
)
FILE_MARK = "@@unitfile "


def unit_files_script(host: Host, unit: str) -> str:
    """sh that prints every unit file and drop-in of ``unit``, each after a ``@@unitfile`` line."""
    root = (host.root or "").rstrip("/")
    parts = []
    for d in UNIT_DIRS:
        unit_file = shlex.quote(f"{root}{d}/{unit}")
        dropins = shlex.quote(f"{root}{d}/{unit}.d")
        parts.append(
            f'f={unit_file}; [ -f "$f" ] && {{ echo {shlex.quote(FILE_MARK + d + "/" + unit)};'
            ' cat "$f"; echo; }'
        )
        parts.append(
            f'for f in {dropins}/*.conf; do [ -f "$f" ] || continue;'
            f' echo {shlex.quote(FILE_MARK + d + "/" + unit + ".d/")}"${{f##*/}}"; cat "$f"; echo;'
            " done"
        )
    return "\n".join([*parts, "true"])


def _split_files(output: str) -> list[tuple[str, str]]:
    files: list[tuple[str, list[str]]] = []
    for line in output.splitlines():
        if line.startswith(FILE_MARK):
            files.append((line[len(FILE_MARK) :], []))
        elif files:
            files[-1][1].append(line)
    return [(path, "\n".join(lines)) for path, lines in files]


def _ordered(files: list[tuple[str, str]], unit: str) -> list[str]:
    """The unit file (highest-precedence dir wins), then drop-ins sorted by file name."""
    unit_text: str | None = None
    dropins: dict[str, str] = {}
    for path, text in files:  # already lowest precedence first
        if path.endswith("/" + unit):
            unit_text = text
        else:
            dropins[path.rsplit("/", 1)[1]] = text
    return ([unit_text] if unit_text is not None else []) + [dropins[k] for k in sorted(dropins)]


def _words(value: str) -> list[str]:
    """systemd's word splitting for ``Environment=``: quotes, backslashes, ``%%`` → ``%``."""
    lexer = shlex.shlex(value.replace("%%", "%"), posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def parse_environment(texts: Sequence[str]) -> dict[str, str]:
    """The ``[Service]`` ``Environment=`` assignments of unit texts applied in order."""
    env: dict[str, str] = {}
    for text in texts:
        section = ""
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                continue
            if section != "Service" or not line.startswith("Environment="):
                continue
            value = line[len("Environment=") :]
            if not value.strip():
                env.clear()
                continue
            for word in _words(value):
                if "=" in word:
                    k, v = word.split("=", 1)
                    env[k] = v
    return env


def parse_exec_start(texts: Sequence[str]) -> str | None:
    """The command line of the last ``[Service]`` ``ExecStart=`` (an empty one resets),
    without systemd's quoting and ``-@+!:`` prefixes; None when the files set none."""
    command: str | None = None
    for text in texts:
        section = ""
        for raw in text.splitlines():
            line = raw.strip()
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
            elif section == "Service" and line.startswith("ExecStart="):
                value = line[len("ExecStart=") :].strip().lstrip("-@+!:")
                command = " ".join(_words(value)) if value else None
    return command


@dataclass(frozen=True)
class UnitStart:
    """What a unit's files say its next start gets."""

    env: Mapping[str, str]
    exec_start: str | None


def unit_start(output: str, unit: str) -> UnitStart:
    texts = _ordered(_split_files(output), unit)
    return UnitStart(env=parse_environment(texts), exec_start=parse_exec_start(texts))


def which_nvcc_script(host: Host, path_value: str) -> str:
    """sh that prints each ``<dir>/nvcc`` on ``path_value`` that is executable, in order."""
    root = (host.root or "").rstrip("/")
    dirs = [d for d in path_value.split(":") if d]
    return "\n".join(
        [
            *(
                f"[ -x {shlex.quote(root + d + '/nvcc')} ] && echo {shlex.quote(d + '/nvcc')}"
                for d in dirs
            ),
            "true",
        ]
    )


def next_start_context(
    ctx: EnvContext, start: UnitStart, which: Sequence[str], *, command: bool
) -> EnvContext:
    """``ctx`` as it will be after its unit restarts: the unit's assignments override, and with
    ``command`` (a plan that rewrites ``ExecStart``) the unit's command line replaces the
    running one."""
    cmdline = start.exec_start if command and start.exec_start else ctx.cmdline
    return dataclasses.replace(
        ctx,
        vars={**ctx.vars, **start.env},
        which_nvcc=tuple(which) if "PATH" in start.env else ctx.which_nvcc,
        cmdline=cmdline,
    )


def with_contexts(facts: Facts, replaced: Mapping[str, EnvContext]) -> Facts:
    """``facts`` with the contexts named in ``replaced`` swapped for the given ones."""
    return dataclasses.replace(
        facts, contexts=tuple(replaced.get(c.label, c) for c in facts.contexts)
    )
