"""Inventory: lookup order, the schema, and errors that name file, line and key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui.core import locations
from tui.core.reach.inventory import (
    LOCAL_HOST,
    InventoryError,
    InventoryErrors,
    find_inventory,
    load_inventory,
    parse_ssh_target,
    resolve_targets,
)

REPO = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str, name: str = "hosts.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(tmp_path: Path, text: str) -> InventoryError:
    path = write(tmp_path, text)
    with pytest.raises(InventoryError) as info:
        load_inventory(path)
    assert info.value.file == str(path)
    assert str(info.value).startswith(f"{path}:")
    return info.value


def test_example_inventory_loads() -> None:
    inv = load_inventory(REPO / "hosts.example.yaml")
    names = [h.name for h in inv.hosts]
    assert names == ["ct200", "h100-a", "jumped", "image", "this-box"]
    ct200 = inv.get("ct200")
    assert ct200 is not None
    assert ct200.ssh == "root@10.1.2.200"
    assert ct200.python == ("/root/venv_sglang211/bin/python3",)
    assert ct200.tags == ("blackwell", "sglang")
    assert ct200.source == f"{REPO / 'hosts.example.yaml'}:4"
    h100 = inv.get("h100-a")
    assert h100 is not None and h100.ssh == "h100-a" and len(h100.python) == 2
    image = inv.get("image")
    assert image is not None and image.local and image.root == "/mnt/container-rootfs"
    box = inv.get("this-box")
    assert box is not None and dict(box.env) == {"CUDA_HOME": "/usr/local/cuda-13.0"}


def test_no_inventory_means_local_only() -> None:
    inv = load_inventory(None)
    assert inv.hosts == (LOCAL_HOST,)
    assert resolve_targets(inv, [], False) == [LOCAL_HOST]


def test_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_xdg: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert find_inventory(None) is None
    xdg = isolated_xdg / "config" / "detective-tui" / "hosts.yaml"
    xdg.parent.mkdir(parents=True)
    xdg.write_text("hosts: [{name: a, local: true}]\n")
    assert find_inventory(None) == xdg
    cwd = write(tmp_path, "hosts: [{name: b, local: true}]\n")
    assert find_inventory(None).resolve() == cwd
    env_file = write(tmp_path, "hosts: [{name: c, local: true}]\n", "env.yaml")
    monkeypatch.setenv("DETECTIVE_TUI_HOSTS", str(env_file))
    assert find_inventory(None) == env_file
    explicit = write(tmp_path, "hosts: [{name: d, local: true}]\n", "explicit.yaml")
    assert find_inventory(str(explicit)) == explicit


def test_explicit_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(InventoryError, match=r"not found.*--hosts") as info:
        find_inventory(str(tmp_path / "nope.yaml"))
    assert info.value.file == str(tmp_path / "nope.yaml")
    # the default it suggests is where this platform's config dir really is (XDG here)
    assert f"{os.environ['XDG_CONFIG_HOME']}/detective-tui/hosts.yaml" in str(info.value)


def test_unknown_key_suggests_the_right_one(tmp_path: Path) -> None:
    err = error_of(
        tmp_path,
        "hosts:\n  - name: gpu1\n    ssh: gpu1\n    pyhton: /usr/bin/python3\n",
    )
    assert err.line == 4
    assert err.key == "pyhton"
    assert "key 'pyhton' is unknown" in str(err)
    assert "(did you mean 'python'?)" in str(err)


def test_every_error_at_once_and_bad_entries_kept(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "hosts:\n  - name: gpu1\n    ssh: gpu1\n    pyhton: /usr/bin/python3\n    tgas: [x]\n"
        "  - name: ok\n    local: true\n  - name: ok\n    local: true\n  - ssh: x\n",
    )
    with pytest.raises(InventoryErrors) as info:
        load_inventory(path)
    lines = str(info.value).splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [f"{path}:{n}" for n in (4, 5, 8, 10)]
    inv = load_inventory(path, keep_bad=True)
    assert [str(e) for e in inv.errors] == lines
    assert [h.name for h in inv.hosts] == ["gpu1", "ok", "hosts.yaml:8", "hosts.yaml:10"]
    gpu1, ok, dup, nameless = inv.hosts
    assert ok.invalid is None and ok.local
    assert gpu1.invalid == "\n".join(lines[:2]) and gpu1.ssh is None and not gpu1.local
    assert dup.invalid == lines[2] and "used twice (first on line 6)" in lines[2]
    assert nameless.invalid == lines[3] and nameless.source == f"{path}:10"


def test_duplicate_names_point_at_both(tmp_path: Path) -> None:
    err = error_of(
        tmp_path,
        "hosts:\n  - name: a\n    local: true\n  - name: b\n  - name: a\n    ssh: x\n",
    )
    assert err.line == 5
    assert "used twice (first on line 2)" in str(err)


@pytest.mark.parametrize(
    ("text", "line", "key", "needle"),
    [
        ("hosts:\n  - name: a\n    tags: 3\n", 3, "tags", "`tags` must be a string or a list"),
        ("hosts:\n  - name: a\n    local: maybe\n", 3, "local", "`local` must be true or false"),
        ("hosts:\n  - name: a\n    local: true\n    ssh: b\n", 4, "ssh", "not both"),
        ("hosts:\n  - name: a\n    ssh: 'u@h:99999'\n", 3, "ssh", "port '99999'"),
        ("hosts:\n  - name: a\n    ssh: -oProxyCommand=x\n", 3, "ssh", "must not start"),
        ("hosts:\n  - name: a b\n", 2, "name", "may only hold"),
        ("hosts:\n  - ssh: a\n", 2, "name", "no `name:`"),
        ("hosts:\n  - name: a\n    root: rel/path\n    local: true\n", 3, "root", "absolute"),
        ("hosts:\n  - name: a\n    env: {1X: y}\n", 3, "env", "not a variable name"),
        ("hosts:\n  - name: a\n    env: [x]\n", 3, "env", "mapping"),
        ("hosts:\n  - name: a\n    name: b\n", 3, "name", "appears twice"),
        ("hosts:\n  - name: a\n    simulate: unreachable\n", 3, "simulate", "one of"),
        ("hosts:\n  - name: a\n    python: [/x, [/y]]\n", 3, "python", "list of strings"),
        ('hosts:\n  - name: a\n    python: "/opt/v\\tenv/bin/python"\n', 3, "python", "no tabs"),
        ("hosts: {name: a}\n", 1, "hosts", "non-empty list"),
        ("hostz: []\n", 1, "hostz", "did you mean 'hosts'"),
        ("hosts:\n  - [a]\n", 2, None, "mapping"),
    ],
)
def test_schema_errors(tmp_path: Path, text: str, line: int, key: str | None, needle: str) -> None:
    err = error_of(tmp_path, text)
    assert needle in str(err)
    assert err.line == line
    assert err.key == key


def test_yaml_syntax_error_has_line(tmp_path: Path) -> None:
    err = error_of(tmp_path, "hosts:\n  - name: a\n    tags: [x\n  - name: b\n")
    assert "not valid YAML" in str(err)
    assert err.line is not None and err.line >= 3


def test_empty_file(tmp_path: Path) -> None:
    assert "empty" in str(error_of(tmp_path, "# nothing\n"))


def test_values_stay_text(tmp_path: Path) -> None:
    inv = load_inventory(
        write(tmp_path, "hosts:\n  - name: a\n    local: true\n    env: {N: 010, B: yes}\n")
    )
    assert dict(inv.hosts[0].env) == {"N": "010", "B": "yes"}


def test_resolve_targets(tmp_path: Path) -> None:
    inv = load_inventory(
        write(tmp_path, "hosts:\n  - name: a\n    ssh: alias-a\n  - name: b\n    local: true\n")
    )
    assert [h.name for h in resolve_targets(inv, [], False)] == ["a", "b"]
    assert [h.name for h in resolve_targets(inv, ["b"], True)] == ["a", "b"]
    chosen = resolve_targets(inv, ["b", "local", "me@10.0.0.5:2222", "b"], False)
    assert [h.name for h in chosen] == ["b", "local", "me@10.0.0.5:2222"]
    assert chosen[1].local
    assert chosen[2].ssh == "me@10.0.0.5:2222" and not chosen[2].local
    with pytest.raises(InventoryError, match="must not start with '-'"):
        resolve_targets(inv, ["-oProxyCommand=touch /tmp/x"], False)
    with pytest.raises(InventoryError, match="shell characters"):
        resolve_targets(inv, ["host;reboot"], False)


@pytest.mark.parametrize(
    ("target", "parsed"),
    [
        ("gpu", (None, "gpu", None)),
        ("root@10.1.2.200", ("root", "10.1.2.200", None)),
        ("u@h:2222", ("u", "h", 2222)),
        ("[::1]:22", (None, "::1", 22)),
        ("u@[fe80::1]", ("u", "fe80::1", None)),
        ("::1", (None, "::1", None)),
    ],
)
def test_parse_ssh_target(target: str, parsed: tuple) -> None:
    assert parse_ssh_target(target) == parsed


def test_locations_follow_xdg_and_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "c"))
    monkeypatch.setenv("XDG_STATE_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert locations.default_inventory() == tmp_path / "c" / "detective-tui" / "hosts.yaml"
    assert locations.sessions_dir() == (
        tmp_path / "home" / ".local" / "state" / "detective-tui" / "sessions"
    )
    monkeypatch.delenv("DETECTIVE_TUI_KNOWN_HOSTS")
    monkeypatch.delenv("DETECTIVE_TUI_SSH_CONFIG")
    assert locations.known_hosts_file() == tmp_path / "home" / ".ssh" / "known_hosts"
    assert locations.ssh_config_file() is None  # no ~/.ssh/config: none is used
    config = tmp_path / "cfg"
    config.write_text("Host x\n")
    monkeypatch.setenv("DETECTIVE_TUI_SSH_CONFIG", str(config))
    assert locations.ssh_config_file() == config


def test_locations_on_macos_honour_xdg_and_find_the_xdg_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """platformdirs' macOS directories (its MacOS class runs anywhere): the XDG variables the
    tests set still win; without them, ~/Library, and the inventory at the XDG default path
    (where earlier releases looked on macOS too) is still found."""
    import platformdirs
    from platformdirs.macos import MacOS

    monkeypatch.setattr(locations, "PLATFORM", "darwin")
    monkeypatch.setattr(platformdirs, "PlatformDirs", MacOS)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "s"))
    assert locations.sessions_dir() == tmp_path / "s" / "detective-tui" / "sessions"
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var)
    support = tmp_path / "Library" / "Application Support" / "detective-tui"
    assert locations.config_dir() == support
    assert locations.state_dir() == support
    assert locations.cache_dir() == tmp_path / "Library" / "Caches" / "detective-tui"
    assert locations.default_inventory() == support / "hosts.yaml"
    legacy = tmp_path / ".config" / "detective-tui" / "hosts.yaml"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("hosts: []\n")
    assert locations.default_inventory() == legacy
    (support / "hosts.yaml").parent.mkdir(parents=True)
    (support / "hosts.yaml").write_text("hosts: []\n")
    assert locations.default_inventory() == support / "hosts.yaml"
