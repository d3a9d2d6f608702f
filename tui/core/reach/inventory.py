"""The host inventory (``hosts.yaml``): finding it, loading it with line numbers, resolving targets.

Schema (CONTRACT.md, plus ``root``, ``env`` and ``simulate``)::

    hosts:
      - name: ct200                 # required, unique; letters, digits, '.', '_', '-'
        ssh: root@10.1.2.200        # ~/.ssh/config alias or [user@]host[:port]; default: the name
        python: /root/venv/bin/python3   # one path or a list
        tags: [blackwell, sglang]
        root: /mnt/image            # probe a mounted filesystem instead of /
        env: {CUDA_HOME: /usr/local/cuda-12.8}   # exported before remote scripts
      - name: this-box
        local: true

Every error names the file, the line and the key, and says what to do.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tui.core import locations
from tui.core.hosts import SCRIPT_WORD, Host
from tui.core.reach.hostlist import HostlistError, expand, is_pattern
from tui.core.ssh_argv import remote_command_start

LOCAL = "local"
ENV_VAR = "DETECTIVE_TUI_HOSTS"
# "tree": a fake host tree detective-tui built (its stand-ins may run); "shell": such a tree
# whose ``env`` is the caller's own shell, judged as ``local`` is (the probe's current session)
SIMULATIONS = ("tree", "shell")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STR = "tag:yaml.org,2002:str"
_BOOL = "tag:yaml.org,2002:bool"


class InventoryError(Exception):
    """Bad inventory or target. ``str()`` is ``file:line: message``."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        where = ":".join(str(p) for p in (file, line) if p is not None)
        super().__init__(f"{where}: {message}" if where else message)


class InventoryErrors(InventoryError):
    """Several errors at once (every bad entry of a file); ``str()`` is one line each."""

    def __init__(self, errors: Sequence[InventoryError]) -> None:
        self.errors = tuple(errors)
        first = self.errors[0]
        super().__init__(first.message, file=first.file, line=first.line, key=first.key)
        self.args = ("\n".join(str(e) for e in self.errors),)

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Inventory:
    hosts: tuple[Host, ...]  # a bad entry is a host with ``invalid`` set (never probed)
    path: Path | None
    errors: tuple[InventoryError, ...] = ()  # every bad entry's errors, in file order

    def get(self, name: str) -> Host | None:
        return next((h for h in self.hosts if h.name == name), None)


LOCAL_HOST = Host(name=LOCAL, local=True, source="built-in")


def find_inventory(explicit: str | None) -> Path | None:
    """``--hosts FILE``, else ``$DETECTIVE_TUI_HOSTS``, else ``./hosts.yaml``, else the XDG
    config dir; None when there is none. A file named explicitly must exist."""
    for given, how in ((explicit, "--hosts"), (os.environ.get(ENV_VAR), f"${ENV_VAR}")):
        if given:
            path = Path(given).expanduser()
            if not path.is_file():
                raise InventoryError(
                    f"inventory file not found (given by {how}); check the path, or omit it "
                    f"to use ./hosts.yaml or {locations.config_dir() / 'hosts.yaml'}",
                    file=str(path),
                )
            return path
    for candidate in (Path("hosts.yaml"), locations.default_inventory()):
        if candidate.is_file():
            return candidate
    return None


def load_inventory(path: Path | None, *, keep_bad: bool = False) -> Inventory:
    """Parse and validate an inventory file; ``None`` gives the inventory of just ``local``.

    A file that cannot be read or parsed raises ``InventoryError``. A bad host entry (a typo'd
    key, a wrong type, a name used twice) does not stop the others: with ``keep_bad`` it
    becomes a host with ``invalid`` set (its ``file:line`` error) and ``errors`` lists every
    error; without, ``InventoryErrors`` lists them all."""
    if path is None:
        return Inventory(hosts=(LOCAL_HOST,), path=None)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise InventoryError(f"cannot read inventory: {reason}", file=str(path)) from exc
    loader = _Loader(str(path))
    hosts = loader.load(text)
    if loader.errors and not keep_bad:
        raise InventoryErrors(loader.errors)
    return Inventory(hosts=hosts, path=Path(path), errors=tuple(loader.errors))


def resolve_targets(inv: Inventory, targets: Sequence[str], all_hosts: bool) -> list[Host]:
    """Hosts for the given targets, in order, without duplicates.

    No targets (or ``--all``) means every inventory host. A target is an inventory name,
    ``local``, or anything OpenSSH accepts (an ``~/.ssh/config`` alias or ``[user@]host[:port]``),
    which becomes an ad-hoc host.
    """
    chosen: list[Host] = list(inv.hosts) if all_hosts or not targets else []
    for target in expand_targets(targets):
        host = inv.get(target)
        if host is None:
            host = LOCAL_HOST if target == LOCAL else _adhoc(target)
        if host not in chosen:
            chosen.append(host)
    return chosen


def expand_targets(targets: Sequence[str]) -> list[str]:
    """Command-line TARGETs with node sets (``gpu[01-04]``, ``root@gpu[1-2]``, ``a,b``)
    expanded; ``InventoryError`` for a bad one."""
    out: list[str] = []
    for target in targets:
        if not is_pattern(target):
            out.append(target)
            continue
        try:
            out += expand(target)
        except HostlistError as exc:
            raise InventoryError(f"target {target!r} is not a valid node set: {exc}") from exc
    return out


def select_hosts(
    explicit: str | None, targets: Sequence[str], all_hosts: bool, *, keep_bad: bool = False
) -> tuple[list[Host], tuple[InventoryError, ...]]:
    """What a headless command does with ``--hosts FILE TARGET… [--all]``: the hosts, and
    every error of the inventory's bad entries. A bad entry among the chosen hosts raises
    ``InventoryErrors`` unless ``keep_bad`` (then it is a host with ``invalid`` set)."""
    inventory = load_inventory(find_inventory(explicit), keep_bad=True)
    hosts = resolve_targets(inventory, targets, all_hosts)
    bad = [h for h in hosts if h.invalid]
    if bad and not keep_bad:
        raise InventoryErrors(
            [e for e in inventory.errors if any(str(e) in (h.invalid or "") for h in bad)]
        )
    return hosts, inventory.errors


def _adhoc(target: str) -> Host:
    problem = ssh_target_problem(target)
    if problem:
        raise InventoryError(
            f"target {target!r}: {problem}; give an inventory host name, `local`, an "
            "~/.ssh/config alias or [user@]host[:port]"
        )
    return Host(name=target, ssh=target, source="command line")


def ssh_target_problem(target: str) -> str | None:
    """Why ``target`` is not a usable ``[user@]host[:port]``/alias, or None."""
    if not target:
        return "empty"
    if target.startswith("-"):
        return "must not start with '-'"
    if any(c.isspace() for c in target) or any(c in target for c in "\0'\"`$;&|<>\\"):
        return "contains spaces or shell characters"
    try:
        parse_ssh_target(target)
    except ValueError as exc:
        return str(exc)
    return None


def parse_ssh_target(target: str) -> tuple[str | None, str, int | None]:
    """``[user@]host[:port]`` (host may be ``[v6addr]``) → (user, host, port)."""
    user, _, hostport = target.rpartition("@")
    port: str | None = None
    if hostport.startswith("["):
        host, sep, rest = hostport[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError("bad [address]:port")
        port = rest[1:] or None
    elif hostport.count(":") == 1:
        host, port = hostport.split(":")
    else:
        host = hostport  # a name, or a bare IPv6 address
    if not host:
        raise ValueError("no host name")
    if port is not None and not (port.isdigit() and 0 < int(port) < 65536):
        raise ValueError(f"port {port!r} is not a number from 1 to 65535")
    return (user or None), host, (int(port) if port else None)


# -- the loader -------------------------------------------------------------------------------


HOST_KEYS = {"name", "ssh", "exec", "local", "python", "tags", "root", "env", "simulate"}


def exec_template(text: str, name: str) -> tuple[str, ...]:
    """The words of an ``exec`` command line with ``{name}`` filled in; ``{script}`` stays as
    one word of its own (the script replaces it). ``ValueError`` says what is wrong."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"cannot split {text!r} into words ({exc})") from exc
    if words.count(SCRIPT_WORD) != 1:
        raise ValueError(
            f"needs {SCRIPT_WORD} exactly once, as a word of its own, where the script goes "
            "(e.g. kubectl exec -i -n ml {name} -- sh -c {script})"
        )
    filled = tuple(w if w == SCRIPT_WORD else w.replace("{name}", name) for w in words)
    odd = [w for w in filled if w != SCRIPT_WORD and ("{" in w or "}" in w)]
    if odd:
        raise ValueError(f"unknown placeholder in {odd[0]!r}; only {{name}} and {SCRIPT_WORD}")
    if Path(filled[0]).name == "ssh":
        start = remote_command_start(filled)
        if start is None or filled.index(SCRIPT_WORD) < start:
            raise ValueError(
                f"with ssh, {SCRIPT_WORD} goes in the remote command, after the destination "
                "(ssh -T {name} sh -c {script})"
            )
    return filled


class _Loader:
    def __init__(self, file: str) -> None:
        self.file = file
        self.pattern = ""  # the `name:` of the entry being read
        self.errors: list[InventoryError] = []  # of the bad entries, in file order

    def error(self, node: yaml.Node | None, message: str, key: str | None = None) -> InventoryError:
        line = node.start_mark.line + 1 if node is not None else None
        return InventoryError(message, file=self.file, line=line, key=key)

    def load(self, text: str) -> tuple[Host, ...]:
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise InventoryError(
                f"not valid YAML: {exc.problem or exc.context}",
                file=self.file,
                line=mark.line + 1 if mark else None,
            ) from exc
        except yaml.YAMLError as exc:
            raise InventoryError(f"not valid YAML: {exc}", file=self.file) from exc
        if root is None:
            raise InventoryError(
                "the inventory is empty; add a `hosts:` list (see hosts.example.yaml)",
                file=self.file,
            )
        top = self.mapping(root, "the inventory", {"hosts"})
        if "hosts" not in top:
            raise self.error(root, "missing `hosts:` (a list of hosts)", key="hosts")
        seq = top["hosts"][1]
        if not isinstance(seq, yaml.SequenceNode) or not seq.value:
            raise self.error(seq, "`hosts` must be a non-empty list of hosts", key="hosts")
        hosts: list[Host] = []
        seen: dict[str, int] = {}
        for item in seq.value:
            try:
                expanded = self.hosts(item)
                for host in expanded:
                    if host.name in seen:
                        via = f" (from {self.pattern})" if len(expanded) > 1 else ""
                        raise self.error(
                            item,
                            f"host name {host.name!r}{via} is used twice (first on line "
                            f"{seen[host.name]}); names must be unique",
                            key="name",
                        )
            except InventoryError as exc:
                found = exc.errors if isinstance(exc, InventoryErrors) else (exc,)
                self.errors += found
                bad = self.bad_entry(item, found, seen)
                seen[bad.name] = item.start_mark.line + 1
                hosts.append(bad)
                continue
            for host in expanded:
                seen[host.name] = item.start_mark.line + 1
            hosts += expanded
        return tuple(hosts)

    def bad_entry(
        self, node: yaml.Node, errors: Sequence[InventoryError], seen: Mapping[str, int]
    ) -> Host:
        """The row a bad entry shows as: its written name when it has a free one, else
        ``file:line``; never probed (``invalid`` holds its errors)."""
        name = ""
        if isinstance(node, yaml.MappingNode):
            for knode, vnode in node.value:
                if getattr(knode, "value", None) == "name" and isinstance(vnode, yaml.ScalarNode):
                    name = str(vnode.value)
        if not name or name in seen or any(c.isspace() for c in name):
            name = f"{Path(self.file).name}:{node.start_mark.line + 1}"
        return Host(
            name=name,
            source=self.where(node),
            invalid="\n".join(str(e) for e in errors),
        )

    def mapping(
        self, node: yaml.Node, what: str, allowed: set[str]
    ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, f"{what} must be a mapping of `key: value` lines")
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        problems: list[InventoryError] = []  # every bad key of the mapping, not the first
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode) or knode.tag != _STR:
                problems.append(self.error(knode, f"keys in {what} must be plain names"))
                continue
            key = knode.value
            if key in out:
                problems.append(self.error(knode, f"key {key!r} appears twice in {what}", key=key))
            elif key not in allowed:
                close = difflib.get_close_matches(key, sorted(allowed), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                problems.append(
                    self.error(
                        knode,
                        f"key {key!r} is unknown{hint}; allowed in {what}: "
                        + ", ".join(sorted(allowed)),
                        key=key,
                    )
                )
            else:
                out[key] = (knode, vnode)
        if problems:
            raise problems[0] if len(problems) == 1 else InventoryErrors(problems)
        return out

    def scalar(self, node: yaml.Node, key: str, tag: str, expected: str) -> Any:
        if not isinstance(node, yaml.ScalarNode) or node.tag != tag:
            raise self.error(node, f"`{key}` must be {expected}", key=key)
        return yaml.SafeLoader("").construct_object(node) if tag == _BOOL else node.value

    def string(self, node: yaml.Node, key: str, expected: str = "a string") -> str:
        value = self.scalar(node, key, _STR, expected)
        if not value or any(c in value for c in "\0\n\t"):
            raise self.error(
                node, f"`{key}` must be {expected} (non-empty, one line, no tabs)", key=key
            )
        return value

    def strings(self, node: yaml.Node, key: str) -> tuple[str, ...]:
        return tuple(self.string(i, key, "a string or a list of strings") for i in self.items(node))

    def hosts(self, node: yaml.Node) -> list[Host]:
        """One entry: one host, or one per name of a node set (``name: gpu[001-128]``)."""
        fields = self.mapping(node, "a host", HOST_KEYS)
        if "name" not in fields:
            raise self.error(node, "host has no `name:`; every host needs a unique name", "name")
        get = {k: v for k, (_, v) in fields.items()}
        self.pattern = self.string(get["name"], "name")
        names = [self.pattern]
        if is_pattern(self.pattern):
            try:
                names = expand(self.pattern)
            except HostlistError as exc:
                raise self.error(get["name"], f"bad node set: {exc}", key="name") from exc
        for name in names:
            if not _NAME.match(name):
                raise self.error(
                    get["name"],
                    f"host name {name!r} may only hold letters, digits, '.', '_' and '-' "
                    "(or be a node set such as gpu[001-128])",
                    key="name",
                )
        for key in ("ssh", "exec"):
            if len(names) > 1 and key in get and "{name}" not in str(get[key].value):
                raise self.error(
                    get[key],
                    f"`{key}` is the same for all {len(names)} hosts of {self.pattern}; put "
                    f"{{name}} where each host's name goes (e.g. `ssh: root@{{name}}.dc`)",
                    key=key,
                )
        return [self.host(node, fields, name) for name in names]

    def host(
        self, node: yaml.Node, fields: dict[str, tuple[yaml.Node, yaml.Node]], name: str
    ) -> Host:
        get = {k: v for k, (_, v) in fields.items()}
        local = bool("local" in get and self.scalar(get["local"], "local", _BOOL, "true or false"))
        for key in ("ssh", "exec"):
            if local and key in get:
                raise self.error(
                    fields[key][0],
                    f"a host is either `local: true` or has `{key}:`, not both",
                    key=key,
                )
        if "ssh" in get and "exec" in get:
            raise self.error(
                fields["exec"][0],
                "a host is reached either by `ssh:` or by `exec:`, not both",
                key="exec",
            )
        ssh: str | None = None
        command: tuple[str, ...] = ()
        if "exec" in get:
            command = self.exec_words(get["exec"], name)
        elif "ssh" in get:
            ssh = self.string(get["ssh"], "ssh").replace("{name}", name)
            problem = ssh_target_problem(ssh) or (
                "has a placeholder other than {name}" if "{" in ssh or "}" in ssh else None
            )
            if problem:
                raise self.error(
                    get["ssh"],
                    f"`ssh: {ssh}` {problem}; use an ~/.ssh/config alias or [user@]host[:port]",
                    key="ssh",
                )
        elif not local:
            problem = ssh_target_problem(name)
            if problem:
                raise self.error(node, f"host {name!r} needs `ssh:` or `local: true`", "ssh")
            ssh = name

        pythons = self.strings(get["python"], "python") if "python" in get else ()
        origins = {
            f"python {p}": self.where(n)
            for p, n in zip(pythons, self.items(get.get("python")), strict=True)
        }
        if "root" in get:
            origins["root"] = self.where(get["root"])
        tags = self.strings(get["tags"], "tags") if "tags" in get else ()
        root = self.string(get["root"], "root", "an absolute path") if "root" in get else None
        if root is not None and not root.startswith("/"):
            raise self.error(get["root"], "`root` must be an absolute path", key="root")
        simulate = None
        if "simulate" in get:
            simulate = self.string(get["simulate"], "simulate")
            if simulate not in SIMULATIONS:
                raise self.error(
                    get["simulate"], f"`simulate` must be one of {SIMULATIONS}", key="simulate"
                )
        return Host(
            name=name,
            ssh=ssh,
            local=local,
            python=pythons,
            tags=tags,
            root=root,
            env=self.env(get["env"]) if "env" in get else {},
            simulate=simulate,
            source=self.where(node),
            exec=command,
            origins=origins,
        )

    def exec_words(self, node: yaml.Node, name: str) -> tuple[str, ...]:
        """``exec:`` split into words as a shell would, ``{name}`` filled in."""
        try:
            words = exec_template(self.string(node, "exec", "a command line"), name)
        except ValueError as exc:
            raise self.error(node, f"`exec`: {exc}", key="exec") from exc
        return words

    def where(self, node: yaml.Node) -> str:
        return f"{self.file}:{node.start_mark.line + 1}"

    @staticmethod
    def items(node: yaml.Node | None) -> list[yaml.Node]:
        if node is None:
            return []
        return list(node.value) if isinstance(node, yaml.SequenceNode) else [node]

    def env(self, node: yaml.Node) -> dict[str, str]:
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, "`env` must be a mapping of NAME: value", key="env")
        out: dict[str, str] = {}
        for knode, vnode in node.value:
            name = str(knode.value) if isinstance(knode, yaml.ScalarNode) else ""
            if not _ENV_NAME.match(name):
                raise self.error(knode, f"`env` key {name!r} is not a variable name", key="env")
            if name in out:
                raise self.error(knode, f"`env` sets {name!r} twice", key="env")
            if not isinstance(vnode, yaml.ScalarNode) or "\0" in vnode.value:
                raise self.error(vnode, f"`env` value of {name} must be a single value", "env")
            out[name] = vnode.value
        return out
