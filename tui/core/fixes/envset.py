"""Steps that set environment variables where a program will read them.

For each systemd unit that runs the interpreter: a drop-in with ``Environment=`` lines and a
``daemon-reload`` (the service picks it up at its next restart, which is a separate,
explicit step). Variables from a unit's ``EnvironmentFile=`` files override ``Environment=``
ones, so for a unit that reads such files the drop-in also names an environment file of its
own with the same assignments (``/etc/detective-tui/<unit>.<name>.env``): systemd reads it
after the unit's files, so its values win. For interactive use: a marker-delimited block in
the venv's ``activate``, or in the login profile when the interpreter is not in a venv. Every
write keeps a backup and has an undo.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tui.core.facts import EnvContext, Facts, PythonEnv
from tui.core.fixes.env_targets import EnvTargets, unit_path_value
from tui.core.fixes.plan import FixError, FixPlan, Step
from tui.core.fixes.shell import (
    daemon_reload,
    ensure_block,
    ensure_file,
    home_path,
    not_a_running_system,
    q,
    say_unchanged,
    systemd_quote,
    undo_block,
    undo_file,
    write_path,
)
from tui.core.hosts import Host
from tui.core.systemd_syntax import unit_name_problem

PROFILE_FILES = (".bash_profile", ".profile")  # bash reads the first that exists


def dropin_name(name: str) -> str:
    return f"50-detective-tui-{name}.conf"


def dropin_dir(unit: str) -> str:
    """The drop-in directory of ``unit``, a name found on the host: refused (``FixError``)
    unless systemd would accept it as a unit name (no ``/``, ``..``, newline reaches a path)."""
    problem = unit_name_problem(unit)
    if problem:
        raise FixError(f"{problem}; not writing a drop-in for it")
    return f"/etc/systemd/system/{unit}.d"


ENV_FILE_DIR = "/etc/detective-tui"


def env_file_name(unit: str, name: str) -> str:
    return f"{unit}.{name}.env"


def env_file_text(fix_id: str, unit: str, assignments: Sequence[str]) -> str:
    """An ``EnvironmentFile=`` file: each value quoted so that systemd and a POSIX shell both
    read it back unchanged."""
    return "\n".join(
        [
            f"# Written by detective-tui (fix {fix_id}) for {unit}; its drop-in names this file.",
            *(f"{k}={q(v)}" for k, v in (a.split("=", 1) for a in assignments)),
        ]
    )


def _unit_step(
    host: Host,
    unit: str,
    ctx: EnvContext,
    *,
    name: str,
    fix_id: str,
    env: Mapping[str, str],
    path_prepend: str | None,
    stamp: str,
    env_files: tuple[str, ...],
) -> Step:
    assignments = [f"{k}={v}" for k, v in env.items()]
    if path_prepend is not None:
        assignments.append(f"PATH={unit_path_value(ctx, path_prepend)}")
    suffix = f".detective-tui-{stamp}.bak"
    keys = [a.split("=", 1)[0] for a in assignments]
    title = f"Set {', '.join(keys)} for {unit}"
    if env_files:
        return _unit_env_file_step(
            host,
            unit,
            title=title,
            name=name,
            fix_id=fix_id,
            assignments=assignments,
            env_files=env_files,
            suffix=suffix,
        )
    directory = write_path(host, dropin_dir(unit))
    file_name = dropin_name(name)
    content = "\n".join(
        [
            f"# Written by detective-tui (fix {fix_id}). Delete this file to undo.",
            "[Service]",
            *(f"Environment={systemd_quote(a)}" for a in assignments),
        ]
    )
    return Step(
        title=title,
        command=ensure_file(directory, file_name, content, suffix) + "\n" + daemon_reload(host),
        undo=undo_file(directory, file_name, suffix) + "\n" + daemon_reload(host),
        changes=(
            f"adds the drop-in {dropin_dir(unit)}/{file_name} ({'; '.join(assignments)}) and "
            f"reloads systemd; {unit} uses it from its next restart"
        ),
        needs_root=True,
    )


def _unit_env_file_step(
    host: Host,
    unit: str,
    *,
    title: str,
    name: str,
    fix_id: str,
    assignments: list[str],
    env_files: tuple[str, ...],
    suffix: str,
) -> Step:
    """The drop-in for a unit with ``EnvironmentFile=``: its ``Environment=`` lines (for the
    reader) and an ``EnvironmentFile=`` of its own, read after the unit's, so its values win.

    The environment file is written before the drop-in names it and removed after the drop-in
    is gone; the ``-`` prefix keeps the unit startable should it ever be missing.
    """
    file_name = dropin_name(name)
    env_name = env_file_name(unit, name)
    env_path = f"{ENV_FILE_DIR}/{env_name}"
    theirs = ", ".join(env_files)
    content = "\n".join(
        [
            f"# Written by detective-tui (fix {fix_id}). Delete this file and {env_path} to undo.",
            f"# {unit} reads {theirs}, which would override Environment=; the EnvironmentFile= "
            "below is read after it, so the values here win.",
            "[Service]",
            *(f"Environment={systemd_quote(a)}" for a in assignments),
            f"EnvironmentFile=-{env_path.replace('%', '%%')}",
        ]
    )
    env_dir = write_path(host, ENV_FILE_DIR)
    directory = write_path(host, dropin_dir(unit))
    return Step(
        title=title,
        command="\n".join(
            [
                ensure_file(env_dir, env_name, env_file_text(fix_id, unit, assignments), suffix),
                ensure_file(directory, file_name, content, suffix),
                daemon_reload(host),
            ]
        ),
        undo="\n".join(
            [
                undo_file(directory, file_name, suffix),
                undo_file(env_dir, env_name, suffix),
                daemon_reload(host),
            ]
        ),
        changes=(
            f"adds the drop-in {dropin_dir(unit)}/{file_name} ({'; '.join(assignments)}) and "
            f"the environment file {env_path} it names, with the same values: the unit reads "
            f"{theirs}, which would override Environment=, and {env_path} is read after it; "
            f"reloads systemd; {unit} uses them from its next restart"
        ),
        needs_root=True,
    )


def _shell_lines(env: Mapping[str, str], path_prepend: str | None) -> list[str]:
    lines = [f"export {k}={q(v)}" for k, v in env.items()]
    if path_prepend is not None:
        lines.append(f'export PATH={q(path_prepend)}:"$PATH"')
    return lines


def _activate_step(
    host: Host,
    activate: str,
    *,
    name: str,
    env: Mapping[str, str],
    path_prepend: str | None,
    stamp: str,
) -> Step:
    suffix = f".detective-tui-{stamp}.bak"
    file_expr = write_path(host, activate)
    keys = [*env, *(["PATH"] if path_prepend is not None else [])]
    body = ensure_block(file_expr, name, _shell_lines(env, path_prepend), suffix)
    return Step(
        title=f"Set {', '.join(keys)} in the venv's activate script",
        command="\n".join(
            [
                f"if [ -f {file_expr} ]; then",
                body,
                "else",
                "  " + say_unchanged(f"no activate script at {activate}"),
                "fi",
            ]
        ),
        undo=undo_block(file_expr, name, suffix),
        changes=f"appends a marked block to {activate} (backup: {activate}{suffix})",
        needs_root=False,
    )


def _profile_step(
    host: Host, *, name: str, env: Mapping[str, str], path_prepend: str | None, stamp: str
) -> Step:
    suffix = f".detective-tui-{stamp}.bak"
    keys = [*env, *(["PATH"] if path_prepend is not None else [])]
    if host.root:  # $HOME here is the inspecting login's home, not a home of the image
        settings = "; ".join(_shell_lines(env, path_prepend))
        why = (
            f"no login profile edited: {not_a_running_system(host)}, and $HOME here is not a "
            f"home of it; put `{settings}` in the login profile inside the image"
        )
        return Step(
            title=f"Set {', '.join(keys)} for login shells",
            command=say_unchanged(why),
            undo=None,
            changes="nothing: " + why,
            needs_root=False,
        )
    first, second = (home_path(host, f) for f in PROFILE_FILES)
    pick = f'p={first}; [ -f "$p" ] || p={second}'
    return Step(
        title=f"Set {', '.join(keys)} for login shells",
        command=pick + "\n" + ensure_block('"$p"', name, _shell_lines(env, path_prepend), suffix),
        # either file: the one the fix edited has its backup or created-marker, the other not
        undo="\n".join(undo_block(f, name, suffix) for f in (first, second)),
        changes=(
            f"appends a marked block to ~/{PROFILE_FILES[0]} if it exists, else "
            f"~/{PROFILE_FILES[1]} (backup: <file>{suffix})"
        ),
        needs_root=False,
    )


def env_steps(
    host: Host,
    targets: EnvTargets,
    *,
    name: str,
    fix_id: str,
    env: Mapping[str, str],
    path_prepend: str | None = None,
    stamp: str,
) -> list[Step]:
    steps = [
        _unit_step(
            host,
            unit,
            ctx,
            name=name,
            fix_id=fix_id,
            env=env,
            path_prepend=path_prepend,
            stamp=stamp,
            env_files=targets.env_files.get(unit, ()),
        )
        for unit, ctx in targets.units
    ]
    if targets.activate is not None:
        steps.append(
            _activate_step(
                host, targets.activate, name=name, env=env, path_prepend=path_prepend, stamp=stamp
            )
        )
    else:
        steps.append(
            _profile_step(host, name=name, env=env, path_prepend=path_prepend, stamp=stamp)
        )
    return steps


def unmanaged_notes(
    targets: EnvTargets, env: Mapping[str, str], path_prepend: str | None
) -> list[str]:
    settings = " ".join(f"{k}={q(v)}" for k, v in env.items())
    if path_prepend is not None:
        settings += f" PATH={q(path_prepend)}:$PATH"
    return [
        f"{ctx.label} is not managed by systemd, so nothing here can change its environment: "
        f"restart it with {settings.strip()} in its environment."
        for ctx in targets.unmanaged
    ]


def restart_notes(targets: EnvTargets) -> list[str]:
    return [
        f"{unit} keeps its old environment until it restarts (systemctl restart {unit}); "
        "the restart is offered separately."
        for unit, _ctx in targets.units
    ]


@dataclass(frozen=True)
class EnvChange:
    """The environment part of a plan: its steps and what they reach."""

    steps: tuple[Step, ...] = ()
    notes: tuple[str, ...] = ()
    units: tuple[str, ...] = ()
    contexts: tuple[str, ...] = ()
    activate: str | None = None
    profile: bool = False
    env_keys: tuple[str, ...] = ()
    exec_units: tuple[str, ...] = ()


def env_change(
    host: Host,
    targets: EnvTargets,
    *,
    name: str,
    fix_id: str,
    env: Mapping[str, str],
    path_prepend: str | None = None,
    stamp: str,
) -> EnvChange:
    steps = env_steps(
        host, targets, name=name, fix_id=fix_id, env=env, path_prepend=path_prepend, stamp=stamp
    )
    return EnvChange(
        steps=tuple(steps),
        notes=(*restart_notes(targets), *unmanaged_notes(targets, env, path_prepend)),
        units=tuple(u for u, _c in targets.units),
        contexts=tuple(c.label for _u, c in targets.units),
        activate=targets.activate,
        profile=targets.profile,
        env_keys=(*env, *(["PATH"] if path_prepend is not None else [])),
    )


def make_plan(
    facts: Facts,
    host: Host,
    fix_id: str,
    params: Mapping[str, str],
    py: PythonEnv | None,
    *,
    steps: tuple[Step, ...],
    verify: tuple[str, ...],
    notes: tuple[str, ...],
    change: EnvChange,
    stamp: str,
) -> FixPlan:
    return FixPlan(
        fix_id=fix_id,
        host=host,
        params=params,
        steps=steps,
        verify_gone=verify,
        notes=notes,
        python=py.path if py else None,
        sudo=not facts.host.is_root,
        contexts=change.contexts,
        units=change.units,
        activate=change.activate,
        profile=change.profile,
        env_keys=change.env_keys,
        exec_units=change.exec_units,
        stamp=stamp,
    )
