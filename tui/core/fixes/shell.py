"""Shell text builders shared by the fixes: quoting, root-prefixed paths, idempotent edits.

Every string that reaches the shell goes through ``shlex.quote``. Host paths are rendered
with the host's root prefix (``Host.root``; fake hosts and mounted images) at plan time, so a
preview shows exactly what runs and nothing depends on variables surviving ``sudo``.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from tui.core.fixes.confine import inside_root
from tui.core.fixes.plan import CHANGED, UNCHANGED, FixError
from tui.core.hosts import Host
from tui.core.systemd_syntax import quote_environment_word

q = shlex.quote


def host_path(host: Host, path: str) -> str:
    """A quoted absolute host path, under the host's root prefix when it has one."""
    if not path.startswith("/"):
        raise ValueError(f"not an absolute path: {path!r}")
    root = (host.root or "").rstrip("/")
    return q(root + path)


def write_path(host: Host, path: str) -> str:
    """The shell word of an absolute host path a step writes (or moves, or removes): under a
    root prefix resolved inside the root when the step runs (``tui.core.fixes.confine``: no
    symlink of the tree leads the write out of it), else the path quoted."""
    root = (host.root or "").rstrip("/")
    return inside_root(root, path) if root else host_path(host, path)


def home_path(host: Host, relative: str) -> str:
    """``$HOME/relative`` of the login running the fix. Only for a host without a root prefix:
    on a ``root:`` host ``$HOME`` is the inspecting login's home, not the image's."""
    if host.root:
        raise ValueError(f"{host.name}: no $HOME path under a root prefix ({host.root})")
    return f'"$HOME"/{q(relative)}'


def say_changed(what: str) -> str:
    return f"echo {q(f'{CHANGED} {what}')}"


def say_unchanged(why: str) -> str:
    return f"echo {q(f'{UNCHANGED} {why}')}"


def begin_marker(name: str) -> str:
    return f"# >>> detective-tui {name} >>>"


def end_marker(name: str) -> str:
    return f"# <<< detective-tui {name} <<<"


def _sed_range(name: str) -> str:
    return f"/^{begin_marker(name)}$/,/^{end_marker(name)}$/"


def block_text(name: str, lines: Sequence[str]) -> str:
    return "\n".join([begin_marker(name), *lines, end_marker(name)])


def created_marker(backup_suffix: str) -> str:
    """Beside a file a step creates: ``<file>.detective-tui-<stamp>.absent`` says "this file did
    not exist before this fix run", so its undo removes the file and nothing else."""
    return backup_suffix.removesuffix(".bak") + ".absent"


def created_dir_marker(backup_suffix: str) -> str:
    """Inside a directory a step creates: ``.detective-tui-<stamp>.dir`` says "this fix run
    made the directory", so its undo removes it once empty (systemd reads only ``*.conf`` from
    a drop-in directory)."""
    return backup_suffix.removesuffix(".bak") + ".dir"


def temp_suffix(backup_suffix: str) -> str:
    return backup_suffix.removesuffix(".bak") + ".tmp"


def _replace_file(backup_suffix: str, fill: Sequence[str]) -> list[str]:
    """Shell lines that replace ``$f`` atomically, leaving the old file or the new, never a
    torn one: the old file is copied to its backup (itself through a temp file and ``mv``), or,
    when there was none, a created-marker is left; ``fill`` writes the new content into
    ``"$t"`` (a temp file beside it carrying the old file's mode and owner); ``mv`` puts it in
    place. Cut anywhere, ``undo_replaced`` restores exactly what was there."""
    t, b, a = q(temp_suffix(backup_suffix)), q(backup_suffix), q(created_marker(backup_suffix))
    return [
        f't="$f"{t}',
        'if [ -f "$f" ]; then',
        '  cp -p "$f" "$t"',
        f'  mv -f "$t" "$f"{b}',
        '  cp -p "$f" "$t"',
        "else",
        f'  : > "$f"{a}',
        '  : > "$t"',
        "fi",
        *fill,
        'mv -f "$t" "$f"',
    ]


def undo_replaced(backup_suffix: str, restored: str, removed: str, untouched: str) -> list[str]:
    """Undo ``_replace_file`` from the state it left, however far it got: the backup goes
    back (byte for byte, mode and times), else a file the run created is removed, else
    nothing of this run is there and nothing is touched. Safe to run twice."""
    t, b, a = q(temp_suffix(backup_suffix)), q(backup_suffix), q(created_marker(backup_suffix))
    return [
        f'rm -f "$f"{t}',
        f'if [ -f "$f"{b} ]; then',
        f'  mv -f "$f"{b} "$f"',
        f'  rm -f "$f"{a}',
        f"  {say_changed(restored)}",
        f'elif [ -e "$f"{a} ]; then',
        f'  rm -f "$f" "$f"{a}',
        f"  {say_changed(removed)}",
        "else",
        f"  {say_unchanged(untouched)}",
        "fi",
    ]


def ensure_block(file_expr: str, name: str, lines: Sequence[str], backup_suffix: str) -> str:
    """Put a marker-delimited block at the end of a file; a no-op when it is already there.

    The file is backed up to ``<file><backup_suffix>`` (or marked as created) and replaced
    atomically (``_replace_file``).
    """
    block = block_text(name, lines)
    rng = _sed_range(name)
    fill = [
        f'if [ -f "$f" ]; then sed {q(rng + "d")} "$f" > "$t"; fi',
        'if [ -s "$t" ] && [ -n "$(tail -c 1 "$t")" ]; then echo >> "$t"; fi',
        'printf \'%s\\n\' "$b" >> "$t"',
    ]
    return "\n".join(
        [
            f"f={file_expr}",
            f"b={q(block)}",
            _require_whole_block(name),
            f'if [ -f "$f" ] && [ "$(sed -n {q(rng + "p")} "$f")" = "$b" ]; then',
            f"  {say_unchanged('block ' + name + ' already in place')}",
            "else",
            *(f"  {line}" for line in _replace_file(backup_suffix, fill)),
            f"  {say_changed('block ' + name + ' written')}",
            "fi",
        ]
    )


def _require_whole_block(name: str) -> str:
    """Refuse to edit a file whose block lost its end marker (sed would delete to the end)."""
    begin, end = q(begin_marker(name)), q(end_marker(name))
    message = q(f"has a detective-tui {name} block without its end marker; fix it by hand")
    return (
        f'if [ -f "$f" ] && grep -qxF {begin} "$f" && ! grep -qxF {end} "$f"; then '
        f"printf '%s %s\\n' \"$f\" {message} >&2; exit 1; fi"
    )


def undo_block(file_expr: str, name: str, backup_suffix: str) -> str:
    """Restore the file as it was before this run's block was written, from whatever state
    the run left (``undo_replaced``)."""
    return "\n".join(
        [
            f"f={file_expr}",
            *undo_replaced(
                backup_suffix,
                f"restored the backup of the file with block {name}",
                f"removed the file this fix created for block {name}",
                f"block {name}: nothing of this fix run in the file",
            ),
        ]
    )


def ensure_file(dir_expr: str, name: str, content: str, backup_suffix: str) -> str:
    """Write a whole file that detective-tui owns (a systemd drop-in); a no-op when identical.
    Replaced atomically, with a backup or a created-marker (``_replace_file``); a directory it
    creates gets ``created_dir_marker`` inside."""
    made = q(created_dir_marker(backup_suffix))
    return "\n".join(
        [
            f"d={dir_expr}",
            f'f="$d"/{q(name)}',
            f"c={q(content)}",
            'if [ -f "$f" ] && [ "$(cat "$f")" = "$c" ]; then',
            f"  {say_unchanged(name + ' already in place')}",
            "else",
            f'  if [ ! -d "$d" ]; then mkdir -p "$d"; : > "$d"/{made}; fi',
            *(
                f"  {line}"
                for line in _replace_file(backup_suffix, ['printf \'%s\\n\' "$c" > "$t"'])
            ),
            f"  {say_changed(name + ' written')}",
            "fi",
        ]
    )


def undo_file(dir_expr: str, name: str, backup_suffix: str) -> str:
    """Undo ``ensure_file``: the file as it was, and the directory gone again when this run
    created it and nothing else is in it now."""
    made = q(created_dir_marker(backup_suffix))
    return "\n".join(
        [
            f"d={dir_expr}",
            f'f="$d"/{q(name)}',
            *undo_replaced(
                backup_suffix,
                f"restored the backup of {name}",
                f"{name} removed",
                f"{name}: nothing of this fix run to undo",
            ),
            f'if [ -e "$d"/{made} ]; then',
            f'  rm -f "$d"/{made}',
            '  if rmdir "$d" 2>/dev/null; then',
            f"    {say_changed('removed the directory this fix run created')}",
            "  fi",
            "fi",
        ]
    )


def only_if_marked(marker: str, command: str, done: str, untouched: str) -> str:
    """An undo that acts only where its step left ``marker`` before acting (an install that
    never started, or a package that was there before, is left alone)."""
    return "\n".join(
        [
            f"if [ -e {marker} ]; then",
            f"  {command}",
            f"  rm -f {marker}",
            f"  {say_changed(done)}",
            "else",
            f"  {say_unchanged(untouched)}",
            "fi",
        ]
    )


def require_file(path_expr: str, test: str, message: str) -> str:
    """Fail the step with ``message`` unless ``[ test path ]`` holds (``-f``, ``-x`` …)."""
    return f"[ {test} {path_expr} ] || {{ echo {q(message)} >&2; exit 1; }}"


def systemd_quote(assignment: str) -> str:
    """One ``Environment=`` word: double-quoted, with systemd's escapes (control characters
    too: a newline must never end the line early) and ``%`` specifiers."""
    return quote_environment_word(assignment)


def not_a_running_system(host: Host) -> str:
    """Why a root-prefixed host's machine-level steps cannot run where the fix runs."""
    if host.demo:
        return f"{host.name} is a simulated host (a tree under {host.root}), not a machine"
    return f"{host.name} is a filesystem under {host.root}, not a running system"


# what a tree detective-tui built carries in usr/bin (tui.demo.fakehost)
TREE_STANDINS = ("systemctl", "journalctl")


def standin(host: Host, tool: str) -> str | None:
    """The program that stands in for ``tool`` on a root-prefixed host: one the host object
    names (``Host.standins``), or — for a tree the inventory or the demo fleet says detective-tui
    built (``Host.fake_tree``) — its ``usr/bin`` fake of systemd's tools. Never chosen by a file
    found in the tree."""
    if tool in host.standins:
        return host.standins[tool]
    if host.fake_tree and tool in TREE_STANDINS:
        return (host.root or "").rstrip("/") + "/usr/bin/" + tool
    return None


def machine_tool(host: Host, tool: str, fix_id: str, inside: str) -> str:
    """The command word for one of the machine's own tools (``dpkg``, ``apt-get``, ``curl``).

    Without a root prefix: the tool itself, on the host. A root prefix is an inspected tree
    whose tools would run on the inspecting machine and change it: only a stand-in the host
    object names (``Host.standins``, set by the code that built the tree) runs; otherwise the
    fix is refused with ``inside``, the commands to run inside the image instead.
    """
    if not host.root:
        return tool
    found = standin(host, tool)
    if found is None:
        raise FixError(
            f"{fix_id} runs {tool}, which acts on the machine it runs on, and "
            f"{not_a_running_system(host)}: here it would change the machine running "
            f"detective-tui. Inside the image run: {inside}"
        )
    return q(found)


def systemctl(host: Host, args: Sequence[str], done: str, skipped: str, elsewhere: str) -> str:
    """``systemctl ARGS`` on the system the host runs, and never on another one.

    Without a root prefix: this machine's ``systemctl`` where systemd runs (``/run/systemd/system``
    exists), else the step is reported as skipped. A root prefix is an inspected filesystem, not
    a running system, so this machine's ``systemctl`` is never run for it: the step is reported
    as skipped with ``elsewhere`` — unless the host object names a ``systemctl`` stand-in
    (``Host.standins``: the demo's fake systemd), which then runs. No file found in the tree
    decides it. ``done`` is echoed after a successful run (empty: nothing), ``skipped`` names
    the skipped action.
    """
    words = " ".join(q(a) for a in args)
    root = (host.root or "").rstrip("/")
    running = f"[ -d {host_path(host, '/run/systemd/system')} ]"
    program = standin(host, "systemctl") if root else None
    if root and program is None:
        why = f"{skipped}: {not_a_running_system(host)}: {elsewhere} on the machine that runs it"
        return say_unchanged(why)
    lines = [f"if {running}; then", f"  {q(program) if program else 'systemctl'} {words}"]
    if done:
        lines.append(f"  {say_changed(done)}")
    return "\n".join(
        [
            *lines,
            "else",
            f"  {say_unchanged(f'{skipped}: systemd is not running here')}",
            "fi",
        ]
    )


def daemon_reload(host: Host) -> str:
    """``systemctl daemon-reload`` where systemd runs; reported as skipped elsewhere."""
    return systemctl(
        host,
        ("daemon-reload",),
        "",
        "skipped systemctl daemon-reload",
        "run systemctl daemon-reload",
    )
