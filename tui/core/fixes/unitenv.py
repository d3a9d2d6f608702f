"""The environment a systemd unit will start with, read from its unit file and drop-ins.

A running server keeps the environment it started with; a drop-in changes what it gets at
the next start. To judge a fix honestly the verdict is computed for that next start, and the
live process is reported as "restart pending" while it differs. The files are read (under
the host's root prefix) rather than asked of ``systemctl``, so fake hosts and hosts without
a running systemd are judged the same way.

``EnvironmentFile=`` is followed as systemd does: the files named by the unit file and its
drop-ins (in that order; an empty value resets the list) are read in the same round trip, and
their variables override ``Environment=`` ones, a later file winning. A file named without the
``-`` prefix that does not exist means systemd refuses to start the unit; the result says so.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from tui.core.facts import EnvContext, Facts, parsers
from tui.core.facts.contexts import SYSTEMD_DEFAULT_PATH
from tui.core.hosts import Host
from tui.core.systemd_syntax import split_environment, split_exec_start

UNIT_DIRS = (  # lowest precedence first
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
    "/run/systemd/system",
    "/etc/systemd/system",
)
FILE_MARK = "@@unitfile "
ENVFILE_MARK = "@@envfile "  # an EnvironmentFile= path (or glob) named by the file above
ENVPART_MARK = "@@envpart "  # one existing file it names, its contents follow
FILE_READ_DEADLINE_S = 10  # each file read on the host
# sh: rd FILE prints FILE under the deadline; ef UNITFILE prints the EnvironmentFile= files
# UNITFILE names (blanks around "=" and a "-" prefix as systemd allows; globs expanded).
SCRIPT_HEAD = f"""rd() {{
  if command -v timeout >/dev/null 2>&1; then timeout -k 2 {FILE_READ_DEADLINE_S} cat -- "$1"
  else cat -- "$1"; fi
}}
ef() {{
  while read -r l || [ -n "$l" ]; do
    case $l in
      EnvironmentFile=* | "EnvironmentFile "*=* | "EnvironmentFile\t"*=*) ;;
      *) continue ;;
    esac
    v=${{l#*=}}
    v=${{v#"${{v%%[! \t]*}}"}}
    p=${{v#-}}
    case $p in /*) ;; *) continue ;; esac
    printf '%s%s\\n' {shlex.quote(ENVFILE_MARK)} "$p"
    o=$IFS
    IFS=
    for m in "$R"$p; do
      [ -f "$m" ] || continue
      printf '%s%s\\n' {shlex.quote(ENVPART_MARK)} "${{m#"$R"}}"
      rd "$m"
      echo
    done
    IFS=$o
  done <"$1"
}}"""


def unit_files_script(host: Host, unit: str) -> str:
    """sh that prints every unit file and drop-in of ``unit``, each after a ``@@unitfile`` line
    and followed by the ``EnvironmentFile=`` files it names (``@@envfile``/``@@envpart``)."""
    root = (host.root or "").rstrip("/")
    parts = [f"R={shlex.quote(root)}", SCRIPT_HEAD]
    for d in UNIT_DIRS:
        unit_file = shlex.quote(f"{root}{d}/{unit}")
        dropins = shlex.quote(f"{root}{d}/{unit}.d")
        parts.append(
            f'f={unit_file}; [ -f "$f" ] && {{ echo {shlex.quote(FILE_MARK + d + "/" + unit)};'
            ' rd "$f"; echo; ef "$f"; }'
        )
        parts.append(
            f'for f in {dropins}/*.conf; do [ -f "$f" ] || continue;'
            f' echo {shlex.quote(FILE_MARK + d + "/" + unit + ".d/")}"${{f##*/}}"; rd "$f"; echo;'
            ' ef "$f"; done'
        )
    return "\n".join([*parts, "true"])


@dataclass(frozen=True)
class _Listing:
    units: list[tuple[str, str]]  # (host path, text), lowest precedence first
    env_files: dict[str, list[tuple[str, str]]]  # EnvironmentFile= path → [(file, text)]


def _split_files(output: str) -> _Listing:
    units: list[tuple[str, list[str]]] = []
    env_files: dict[str, list[tuple[str, list[str]]]] = {}
    current: list[str] | None = None
    parts: list[tuple[str, list[str]]] | None = None
    for line in output.splitlines():
        if line.startswith(FILE_MARK):
            units.append((line[len(FILE_MARK) :], []))
            current, parts = units[-1][1], None
        elif line.startswith(ENVFILE_MARK):
            parts = env_files.setdefault(line[len(ENVFILE_MARK) :], [])
            parts.clear()  # named again by a later file: the same files, read again
            current = None
        elif line.startswith(ENVPART_MARK) and parts is not None:
            parts.append((line[len(ENVPART_MARK) :], []))
            current = parts[-1][1]
        elif current is not None:
            current.append(line)
    return _Listing(
        units=[(path, "\n".join(lines)) for path, lines in units],
        env_files={
            k: [(path, "\n".join(lines)) for path, lines in v] for k, v in env_files.items()
        },
    )


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


def service_values(texts: Sequence[str], key: str) -> Iterator[str]:
    """The values of ``key=`` in the ``[Service]`` sections of unit texts, in order, stripped
    (systemd allows blanks around ``=``)."""
    for text in texts:
        section = ""
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                continue
            name, sep, value = line.partition("=")
            if section == "Service" and sep and name.strip() == key:
                yield value.strip()


def parse_environment(texts: Sequence[str]) -> dict[str, str]:
    """The ``[Service]`` ``Environment=`` assignments of unit texts applied in order."""
    env: dict[str, str] = {}
    for value in service_values(texts, "Environment"):
        if not value:
            env.clear()
            continue
        words, _error = split_environment(value)  # systemd keeps what came before an error
        for word in words:
            if "=" in word:
                k, v = word.split("=", 1)
                env[k] = v
    return env


def parse_environment_file(text: str) -> dict[str, str]:
    """The assignments of one ``EnvironmentFile=`` file (the probe's rules: ``KEY=VALUE``,
    optional quotes, ``#``/``;`` comments, an ``export`` prefix tolerated)."""
    return parsers.parse_systemd_environment((), text.splitlines())


def parse_exec_argv(texts: Sequence[str]) -> tuple[str, ...] | None:
    """The argv of the last ``[Service]`` ``ExecStart=`` (an empty one resets), split as
    systemd splits it (``tui.core.systemd_syntax.split_exec_start``); None when the files set
    none."""
    argv: tuple[str, ...] | None = None
    for text in texts:
        section = ""
        for raw in text.splitlines():
            line = raw.strip()
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
            elif section == "Service" and line.startswith("ExecStart="):
                argv = tuple(split_exec_start(line[len("ExecStart=") :])) or None
    return argv


def parse_exec_start(texts: Sequence[str]) -> str | None:
    """:func:`parse_exec_argv` joined by spaces, for display."""
    argv = parse_exec_argv(texts)
    return " ".join(argv) if argv else None


@dataclass(frozen=True)
class UnitStart:
    """What a unit's files say its next start gets."""

    env: Mapping[str, str]
    exec_start: str | None
    exec_argv: tuple[str, ...] | None = None  # exec_start's words exactly
    env_files: tuple[str, ...] = ()  # the EnvironmentFile= files read, in systemd's order
    missing_env_files: tuple[str, ...] = ()  # named without "-" and absent: the start fails

    @property
    def problems(self) -> tuple[str, ...]:
        """Why the unit would not start, in words (empty: nothing known against it)."""
        return tuple(
            f"EnvironmentFile={path} does not exist (or could not be read): systemd refuses "
            "to start the unit; create it, or write EnvironmentFile=-" + path + " to make it "
            "optional"
            for path in self.missing_env_files
        )


def unit_start(output: str, unit: str) -> UnitStart:
    """The next start of ``unit`` from :func:`unit_files_script`'s output: ``Environment=``
    assignments, then each ``EnvironmentFile=`` applied over them in order."""
    listing = _split_files(output)
    texts = _ordered(listing.units, unit)
    env = parse_environment(texts)
    read: list[str] = []
    missing: list[str] = []
    for path, optional in parsers.environment_files(service_values(texts, "EnvironmentFile")):
        found = listing.env_files.get(path, [])
        if not found and not optional:
            missing.append(path)
        for file_path, text in found:
            env.update(parse_environment_file(text))
            read.append(file_path)
    return UnitStart(
        env=env,
        exec_start=parse_exec_start(texts),
        exec_argv=parse_exec_argv(texts),
        env_files=tuple(read),
        missing_env_files=tuple(missing),
    )


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


def next_start_vars(
    live: Mapping[str, str], files_before: Mapping[str, str], start: UnitStart
) -> dict[str, str]:
    """The variables a unit's process starts with next time.

    A service gets systemd's default ``PATH`` and its unit files' assignments; what the process
    has beyond those (set by a wrapper script it runs, say) it sets itself and keeps. So the
    variables it has *as the unit files gave them* (``files_before``: the probe's reading of
    the unit, default ``PATH`` included) are taken away — a variable only the removed drop-in
    of an undone fix set is gone at the next start — and the files as they are now apply.
    """
    own = {k: v for k, v in live.items() if files_before.get(k) != v}
    return {**own, "PATH": own.get("PATH", SYSTEMD_DEFAULT_PATH), **start.env}


def next_start_context(
    ctx: EnvContext,
    start: UnitStart,
    which: Sequence[str],
    *,
    command: bool,
    files_before: Mapping[str, str] | None = None,
) -> EnvContext:
    """``ctx`` as it will be after its unit restarts: its variables as ``next_start_vars``
    gives them (with no reading of the unit from before, the unit's assignments just
    override), ``which`` (``which -a nvcc`` under the next-start ``PATH``) when that ``PATH``
    is the unit's, and with ``command`` (a plan that rewrites ``ExecStart``) the unit's
    command line in place of the running one. A process whose environment the restart
    changes has loaded nothing of it yet: its mapped libraries are forgotten (the rules then
    resolve them as the loader would)."""
    new_command = command and start.exec_start
    if files_before is None:
        env = {**ctx.vars, **start.env}
    else:
        env = next_start_vars(ctx.vars, files_before, start)
    unit_path = start.env.get("PATH", SYSTEMD_DEFAULT_PATH)
    return dataclasses.replace(
        ctx,
        vars=env,
        which_nvcc=tuple(which) if env.get("PATH") == unit_path else ctx.which_nvcc,
        cmdline=start.exec_start if new_command else ctx.cmdline,
        argv=start.exec_argv if new_command else ctx.argv,
        mapped_libs=ctx.mapped_libs if env == dict(ctx.vars) else (),
    )


def with_contexts(facts: Facts, replaced: Mapping[str, EnvContext]) -> Facts:
    """``facts`` with the contexts named in ``replaced`` swapped for the given ones."""
    return dataclasses.replace(
        facts, contexts=tuple(replaced.get(c.label, c) for c in facts.contexts)
    )
