"""Other tools' host lists → ``hosts.yaml`` entries (``detective-tui import``).

- **ansible**: the JSON of ``ansible-inventory --list`` (run here when Ansible is installed, or
  read from a file). Groups (and their parents) become tags; ``ansible_host``/``ansible_port``/
  ``ansible_user`` become ``ssh``; ``ansible_python_interpreter`` becomes ``python``;
  ``ansible_connection: local`` becomes ``local: true``. Settings ``hosts.yaml`` has no field for
  (a private key, ``ansible_ssh_common_args``/``extra_args`` options such as ProxyJump) become
  ``~/.ssh/config`` lines to add, under a ``Host`` alias that the entry's ``ssh`` then names;
  the rest (passwords, become, other connections) is listed as not imported.
- **slurm**: ``scontrol show hostnames`` or ``sinfo -N -h -o %N`` output, one node (or node
  set) per line; ``sinfo -N -h -o "%N %P"`` adds the partition as a tag.
- **hostfile**: an MPI hostfile (``host slots=N``, ``host:N``, comments).

Slurm and hostfile nodes are folded back into node sets (``gpu[001-128]``). Every problem names
``file:line``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tui.core.reach.hostlist import HostlistError, expand, fold, is_pattern
from tui.core.reach.inventory import _NAME, InventoryError, load_inventory, ssh_target_problem

ANSIBLE_INVENTORY_TIMEOUT_S = 120
SSH_FAMILY = {"ssh", "smart", "paramiko", "paramiko_ssh", "ansible.builtin.ssh"}
SSH_OPTION_VARS = ("ansible_ssh_common_args", "ansible_ssh_extra_args")
KEY_VARS = ("ansible_ssh_private_key_file", "ansible_private_key_file")
SECRET_VARS = ("ansible_password", "ansible_ssh_pass", "ansible_become_password")
HANDLED_VARS = {
    "ansible_host",
    "ansible_ssh_host",
    "ansible_port",
    "ansible_ssh_port",
    "ansible_user",
    "ansible_ssh_user",
    "ansible_python_interpreter",
    "ansible_connection",
    *SSH_OPTION_VARS,
    *KEY_VARS,
}


class ImportProblem(Exception):
    """An input that cannot be imported; ``str()`` names the file (and line)."""


@dataclass
class Entry:
    """One ``hosts.yaml`` entry (``name`` may be a node set)."""

    name: str
    ssh: str | None = None
    local: bool = False
    python: str | None = None
    tags: list[str] = field(default_factory=list)
    ssh_config: list[str] = field(default_factory=list)  # lines of a `Host <ssh>` block
    skipped: list[str] = field(default_factory=list)  # settings not imported, and why


@dataclass
class Imported:
    entries: list[Entry]
    notes: list[str] = field(default_factory=list)  # about the input as a whole

    def ssh_config_text(self) -> str:
        """The ``~/.ssh/config`` blocks the entries need ('' when none)."""
        blocks = []
        for e in self.entries:
            if e.ssh_config:
                blocks.append("\n".join([f"Host {e.ssh}", *(f"  {x}" for x in e.ssh_config)]))
        return "\n\n".join(blocks) + ("\n" if blocks else "")


# -- ansible ---------------------------------------------------------------------------------


def ansible_inventory_json(source: Path) -> tuple[dict[str, Any], str]:
    """The ``ansible-inventory --list`` JSON for ``source`` and how it was obtained: read when
    ``source`` already is that JSON, else by running ``ansible-inventory`` here."""
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ImportProblem(f"{source}: cannot read: {reason}") from exc
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ImportProblem(f"{source}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
        if isinstance(doc, dict) and "_meta" in doc:
            return doc, f"read {source} (ansible-inventory --list JSON)"
    tool = shutil.which("ansible-inventory")
    if tool is None:
        raise ImportProblem(
            f"{source}: Ansible is not installed here, so only the JSON of `ansible-inventory "
            f"-i {source} --list` can be read; run that where Ansible is and import its output"
        )
    try:
        done = subprocess.run(
            [tool, "-i", str(source), "--list"],
            capture_output=True,
            text=True,
            timeout=ANSIBLE_INVENTORY_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise ImportProblem(
            f"{source}: ansible-inventory gave no answer within {ANSIBLE_INVENTORY_TIMEOUT_S} s"
        ) from exc
    try:
        doc = json.loads(done.stdout) if done.returncode == 0 else None
    except json.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict):
        tail = " | ".join(done.stderr.strip().splitlines()[-4:]) or f"exit {done.returncode}"
        raise ImportProblem(f"{source}: ansible-inventory --list failed: {tail}")
    warnings = [ln for ln in done.stderr.splitlines() if "WARNING" in ln]
    if warnings and not doc.get("_meta", {}).get("hostvars"):
        raise ImportProblem(f"{source}: ansible-inventory found no hosts: {' | '.join(warnings)}")
    return doc, f"ran {tool} -i {source} --list"


def from_ansible(doc: Mapping[str, Any]) -> Imported:
    hostvars: Mapping[str, Mapping[str, Any]] = (doc.get("_meta") or {}).get("hostvars") or {}
    groups = {k: v for k, v in doc.items() if k != "_meta" and isinstance(v, dict)}
    tags: dict[str, list[str]] = {}

    def visit(group: str, trail: tuple[str, ...]) -> None:
        if group in trail:  # a cycle: Ansible refuses these, be safe anyway
            return
        body = groups.get(group) or {}
        here = (*trail, group)
        for host in body.get("hosts") or []:
            known = tags.setdefault(host, [])
            known += [g for g in here if g not in ("all", "ungrouped") and g not in known]
        for child in body.get("children") or []:
            visit(child, here)

    visit("all", ())
    names = list(dict.fromkeys([*tags, *hostvars]))  # the inventory's order
    imported = Imported(entries=[])
    for name in names:
        entry = _ansible_entry(name, hostvars.get(name) or {}, tags.get(name, []))
        if entry is None:
            imported.notes.append(
                f"{name}: not imported: a host name may only hold letters, digits, '.', '_' "
                "and '-'; add it by hand under another name with `ssh:`"
            )
            continue
        imported.entries.append(entry)
    return imported


def _ansible_entry(name: str, hv: Mapping[str, Any], tags: list[str]) -> Entry | None:
    if not _NAME.match(name):
        return None
    entry = Entry(name=name, tags=list(tags))

    def var(*keys: str) -> Any:
        return next((hv[k] for k in keys if hv.get(k) not in (None, "")), None)

    connection = str(var("ansible_connection") or "ssh")
    python = var("ansible_python_interpreter")
    if python is not None:
        if str(python).startswith("/") and "{{" not in str(python):
            entry.python = str(python)
        else:
            entry.skipped.append(
                f"ansible_python_interpreter={python} (not a path; give `python:` by hand)"
            )
    if connection == "local":
        entry.local = True
    elif connection not in SSH_FAMILY:
        entry.skipped.append(
            f"ansible_connection={connection} (no equivalent; an `exec:` command such as "
            "`docker exec -i NAME sh -c {script}` can reach it)"
        )
    else:
        _ssh_settings(entry, var)
    for key in SECRET_VARS:
        if key in hv:
            entry.skipped.append(f"{key} (passwords are never imported: use keys or an agent)")
    for key, value in hv.items():
        if key in HANDLED_VARS or key in SECRET_VARS or not key.startswith("ansible_"):
            continue
        why = (
            "fixes that need root run `sudo -n` themselves"
            if key.startswith("ansible_become")
            else "no equivalent"
        )
        entry.skipped.append(f"{key}={value} ({why})")
    return entry


def _ssh_settings(entry: Entry, var: Any) -> None:
    host = var("ansible_host", "ansible_ssh_host")
    port = var("ansible_port", "ansible_ssh_port")
    user = var("ansible_user", "ansible_ssh_user")
    config: list[str] = []
    key = var(*KEY_VARS)
    if key is not None:
        config.append(f"IdentityFile {key}")
    for opt_var in SSH_OPTION_VARS:
        args = var(opt_var)
        if args is not None:
            lines, leftover = ssh_args_to_config(str(args))
            config += lines
            if leftover:
                entry.skipped.append(
                    f"{opt_var}: {shlex.join(leftover)} (no ~/.ssh/config equivalent; add by hand)"
                )
    hostname = str(host) if host is not None else entry.name
    if config:  # an alias carries everything: hosts.yaml names it, ~/.ssh/config defines it
        entry.ssh = entry.name
        entry.ssh_config = [
            *([f"HostName {hostname}"] if hostname != entry.name else []),
            *([f"User {user}"] if user is not None else []),
            *([f"Port {port}"] if port is not None else []),
            *config,
        ]
        return
    if host is None and user is None and port is None:
        return  # the name is the ssh target
    address = f"[{hostname}]" if ":" in hostname and port is not None else hostname
    target = (f"{user}@" if user is not None else "") + address
    target += f":{port}" if port is not None else ""
    problem = ssh_target_problem(target)
    if problem:
        entry.ssh = entry.name
        entry.ssh_config = [f"HostName {hostname}"]
        entry.ssh_config += [f"User {user}"] if user is not None else []
        entry.ssh_config += [f"Port {port}"] if port is not None else []
        return
    entry.ssh = target


_OPTION = re.compile(r"^([A-Za-z]+)[= ](.*)$")
_SHORT = {"-J": "ProxyJump", "-p": "Port", "-l": "User", "-i": "IdentityFile"}


def ssh_args_to_config(args: str) -> tuple[list[str], list[str]]:
    """``-o ProxyJump=x -J y -o "ProxyCommand=ssh -W %h:%p z"`` → ssh_config lines, and the
    words that have no equivalent."""
    try:
        words = shlex.split(args)
    except ValueError:
        return [], [args]
    lines: list[str] = []
    leftover: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        value = words[i + 1] if i + 1 < len(words) else None
        if word == "-o" and value is not None:
            m = _OPTION.match(value)
            (lines if m else leftover).append(f"{m.group(1)} {m.group(2)}" if m else value)
            i += 2
        elif word.startswith("-o") and len(word) > 2:
            m = _OPTION.match(word[2:])
            (lines if m else leftover).append(f"{m.group(1)} {m.group(2)}" if m else word)
            i += 1
        elif word in _SHORT and value is not None:
            lines.append(f"{_SHORT[word]} {value}")
            i += 2
        else:
            leftover.append(word)
            i += 1
    return lines, leftover


# -- slurm and MPI hostfiles ----------------------------------------------------------------


def from_slurm(path: Path) -> Imported:
    """``scontrol show hostnames`` / ``sinfo -N -h -o %N`` (node sets are expanded, repeated
    nodes — one line per partition — merged); a second column is the partition (a tag)."""
    nodes: dict[str, list[str]] = {}
    for lineno, line in _lines(path):
        words = line.split()
        if len(words) > 2:
            raise ImportProblem(
                f"{path}:{lineno}: expected a node name (and a partition), got {line.strip()!r}"
            )
        partition = words[1].rstrip("*") if len(words) == 2 else None
        for name in _names(path, lineno, words[0]):
            tags = nodes.setdefault(name, [])
            if partition and partition not in tags:
                tags.append(partition)
    return _folded(path, nodes)


def from_hostfile(path: Path) -> Imported:
    """``host [slots=N] [max_slots=M]`` (Open MPI) or ``host:N`` (MPICH, Intel MPI)."""
    nodes: dict[str, list[str]] = {}
    for lineno, line in _lines(path):
        words = line.split()
        name = words[0].split(":")[0] if ":" in words[0] and "[" not in words[0] else words[0]
        for word in words[1:]:
            if not re.fullmatch(r"(slots|max_slots|max-slots)=\d+", word):
                raise ImportProblem(
                    f"{path}:{lineno}: {word!r} is not slots=N or max_slots=N "
                    "(a hostfile line is `host slots=N`)"
                )
        for node in _names(path, lineno, name):
            nodes.setdefault(node, [])
    return _folded(path, nodes)


def _lines(path: Path) -> list[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ImportProblem(f"{path}: cannot read: {reason}") from exc
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            out.append((lineno, line))
    if not out:
        raise ImportProblem(f"{path}: no host names in it")
    return out


def _names(path: Path, lineno: int, word: str) -> list[str]:
    try:
        names = expand(word) if is_pattern(word) else [word]
    except HostlistError as exc:
        raise ImportProblem(f"{path}:{lineno}: {exc}") from exc
    for name in names:
        if not _NAME.match(name):
            raise ImportProblem(
                f"{path}:{lineno}: {name!r} is not a host name (letters, digits, '.', '_', '-')"
            )
    return names


def _folded(path: Path, nodes: Mapping[str, Sequence[str]]) -> Imported:
    by_tags: dict[tuple[str, ...], list[str]] = {}
    for name, tags in nodes.items():
        by_tags.setdefault(tuple(tags), []).append(name)
    entries = [
        Entry(name=pattern, tags=list(tags))
        for tags, names in by_tags.items()
        for pattern in fold(names)
    ]
    return Imported(entries=entries, notes=[f"{path}: {len(nodes)} hosts"])


# -- writing -----------------------------------------------------------------------------------


def render_entries(imported: Imported, source: str, indent: str = "  ") -> str:
    """The entries as YAML list items (for under ``hosts:``), then the ssh config lines and
    what was not imported as comments."""
    out: list[str] = []
    for e in imported.entries:
        out.append(f"{indent}- name: {_scalar(e.name)}")
        pad = indent + "  "
        if e.local:
            out.append(f"{pad}local: true")
        if e.ssh is not None:
            out.append(f"{pad}ssh: {_scalar(e.ssh)}")
        if e.python is not None:
            out.append(f"{pad}python: {_scalar(e.python)}")
        if e.tags:
            out.append(f"{pad}tags: [{', '.join(_scalar(t) for t in e.tags)}]")
        for skipped in e.skipped:
            out.append(f"{pad}# not imported: {skipped}")
    config = imported.ssh_config_text()
    if config:
        out.append(f"{indent}# add to ~/.ssh/config (these hosts' `ssh:` names these aliases):")
        out += [f"{indent}#   {line}" if line else f"{indent}#" for line in config.splitlines()]
    return f"{indent}# imported from {source}\n" + "\n".join(out) + "\n"


def _scalar(text: str) -> str:
    """A YAML scalar: plain when YAML reads it back as the same string, else JSON-quoted."""
    if re.fullmatch(r"[A-Za-z0-9_./~@-][A-Za-z0-9_./~@:\[\],{}+-]*", text):
        try:
            if yaml.safe_load(text) == text:
                return text
        except yaml.YAMLError:
            pass
    return json.dumps(text)


def write_inventory(
    path: Path | None, imported: Imported, source: str, *, mode: str = "new"
) -> str:
    """Write the entries to ``path`` (``None``: only return the text); ``mode`` ``new`` (refuse
    an existing file), ``append`` (add to an existing inventory, checking names) or ``replace``
    (keep a timestamped copy first). The result is loaded back before it replaces anything, and
    replaces it atomically (a kill leaves the old file or the new one). Returns the text."""
    if not imported.entries:
        raise ImportProblem(f"{source}: nothing to import")
    existing = path is not None and path.exists()
    if existing and mode == "new":
        raise ImportProblem(
            f"{path} exists; not overwritten: use --append to add these hosts to it, --force to "
            "replace it (a copy is kept), or --output to write elsewhere"
        )
    if existing and mode == "append":
        assert path is not None
        text = _appended(path, imported, source)
    else:
        text = "# detective-tui inventory (see README: Inventory)\nhosts:\n"
        text += render_entries(imported, source)
    target_dir = path.parent if path is not None else Path(tempfile.gettempdir())
    fd, tmp_name = tempfile.mkstemp(prefix=".hosts-", suffix=".yaml", dir=target_dir)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            load_inventory(tmp)
        except InventoryError as exc:
            where = f"line {exc.line}: " if exc.line else ""
            raise ImportProblem(
                f"the written inventory would not load ({where}{exc.message})"
            ) from exc
        if path is not None:
            if existing and mode == "replace":
                stamp = time.strftime("%Y%m%d-%H%M%S")
                shutil.copy2(path, path.with_name(f"{path.name}.bak-{stamp}"))
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return text


def _expanded(name: str) -> list[str]:
    return expand(name) if is_pattern(name) else [name]


def _appended(path: Path, imported: Imported, source: str) -> str:
    try:
        inventory = load_inventory(path)
        text = path.read_text(encoding="utf-8")
    except InventoryError as exc:
        raise ImportProblem(f"cannot append to an inventory that does not load: {exc}") from exc
    seq = yaml.compose(text, Loader=yaml.SafeLoader).value[0][1]
    if seq.flow_style:
        raise ImportProblem(
            f"{path}:{seq.start_mark.line + 1}: `hosts:` is a [flow] list; --append needs one "
            "`- name:` item per line (or use --output and merge by hand)"
        )
    new = {
        n for e in imported.entries for n in (expand(e.name) if is_pattern(e.name) else [e.name])
    }
    clashes = [h for h in inventory.hosts if h.name in new]
    if clashes:
        listed = ", ".join(f"{h.name} ({h.source})" for h in clashes[:10])
        raise ImportProblem(f"already in the inventory: {listed}; nothing was written")
    indent = " " * seq.start_mark.column
    return text.rstrip("\n") + "\n" + render_entries(imported, source, indent)
