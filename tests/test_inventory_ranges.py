"""Node sets in hosts.yaml (``name: gpu[001-128]`` with ``{name}`` in ``ssh``/``exec``), ranges as
command-line TARGETs, and the ``exec`` field — every error at file:line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tui.cli import main
from tui.core.hosts import SCRIPT_WORD
from tui.core.reach.inventory import InventoryError, load_inventory, resolve_targets


def load(tmp_path: Path, text: str):
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    return load_inventory(path)


def error_of(tmp_path: Path, text: str) -> InventoryError:
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    with pytest.raises(InventoryError) as info:
        load_inventory(path)
    assert str(info.value).startswith(f"{path}:{info.value.line}:")
    return info.value


def test_a_range_expands_with_name_in_ssh(tmp_path: Path) -> None:
    inv = load(
        tmp_path,
        "hosts:\n"
        "  - name: head\n"
        "  - name: gpu[001-128]\n"
        "    ssh: root@{name}.dc\n"
        "    python: /opt/venv/bin/python\n"
        "    tags: [b200]\n",
    )
    names = [h.name for h in inv.hosts]
    assert len(names) == 129 and names[1] == "gpu001" and names[-1] == "gpu128"
    gpu7 = inv.get("gpu007")
    assert gpu7 is not None and gpu7.ssh == "root@gpu007.dc"
    assert gpu7.python == ("/opt/venv/bin/python",) and gpu7.tags == ("b200",)
    assert gpu7.source == f"{tmp_path / 'hosts.yaml'}:3"
    assert inv.get("head").ssh == "head"  # type: ignore[union-attr]


def test_lists_and_several_ranges(tmp_path: Path) -> None:
    inv = load(tmp_path, "hosts:\n  - name: gpu[01-04,07]\n  - name: rack[1-2]-n[1-2]\n")
    assert [h.name for h in inv.hosts] == [
        *("gpu01", "gpu02", "gpu03", "gpu04", "gpu07"),
        *("rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"),
    ]
    assert all(h.ssh == h.name for h in inv.hosts)


def test_duplicate_after_expansion_names_both_lines(tmp_path: Path) -> None:
    err = error_of(tmp_path, "hosts:\n  - name: gpu03\n    local: true\n  - name: gpu[01-04]\n")
    assert err.line == 4 and err.key == "name"
    assert "'gpu03' (from gpu[01-04]) is used twice (first on line 2)" in str(err)


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        ("hosts:\n  - name: dgx-[a-c][1-2]\n", 2, r"letter range.*dgx-a\[1-2\]"),
        ("hosts:\n  - name: gpu[01-100]\n", 2, "zero-padding"),
        ("hosts:\n  - name: gpu[1-4]\n    ssh: root@bastion\n", 3, r"same for all 4 hosts"),
        ("hosts:\n  - name: g[1-2]\n    ssh: root@{name}.{dc}\n", 3, "placeholder"),
        ("hosts:\n  - name: g[1-2]\n    ssh: '{name} x'\n", 3, "spaces"),
        ("hosts:\n  - name: p\n    exec: kubectl exec p -- sh -c\n", 3, r"\{script\} exactly"),
        ("hosts:\n  - name: p\n    exec: kubectl exec p -- sh -c '{script}x'\n", 3, "exactly"),
        ("hosts:\n  - name: p\n    exec: kubectl exec {pod} -- sh -c {script}\n", 3, "unknown"),
        ('hosts:\n  - name: p\n    exec: "sh -c \'x {script}"\n', 3, "cannot split"),
        ("hosts:\n  - name: p\n    exec: ssh -T {script}\n", 3, "after the destination"),
        ("hosts:\n  - name: p\n    ssh: p\n    exec: x {script}\n", 4, "not both"),
        ("hosts:\n  - name: p\n    local: true\n    exec: x {script}\n", 4, "not both"),
        ("hosts:\n  - name: p[1-2]\n    exec: kubectl exec p -- {script}\n", 3, "same for all"),
    ],
)
def test_errors_name_file_and_line(tmp_path: Path, text: str, line: int, match: str) -> None:
    err = error_of(tmp_path, text)
    assert err.line == line
    assert re.search(match, err.message), err.message


def test_exec_words(tmp_path: Path) -> None:
    inv = load(
        tmp_path,
        "hosts:\n"
        "  - name: pod-[1-2]\n"
        "    exec: kubectl exec -i -n 'ml team' {name} -- sh -c {script}\n",
    )
    pod = inv.get("pod-2")
    assert pod is not None and pod.ssh is None and not pod.local
    assert pod.exec == ("kubectl", "exec", "-i", "-n", "ml team", "pod-2", "--", "sh", "-c",
                        SCRIPT_WORD)  # fmt: skip
    assert pod.target == "kubectl exec -i -n 'ml team' pod-2 -- sh -c {script}"


def test_targets_on_the_command_line(tmp_path: Path) -> None:
    inv = load(tmp_path, "hosts:\n  - name: gpu[1-3]\n    ssh: root@{name}.dc\n")
    chosen = resolve_targets(inv, ["gpu[2-3]", "root@other[1-2]", "a,b", "[::1]:22"], False)
    assert [h.name for h in chosen] == [
        *("gpu2", "gpu3", "root@other1", "root@other2", "a", "b", "[::1]:22"),
    ]
    assert chosen[0].ssh == "root@gpu2.dc"
    with pytest.raises(InventoryError, match=r"'gpu\[3-1\]' is not a valid node set"):
        resolve_targets(inv, ["gpu[3-1]"], False)


def test_cli_range_target_with_demo(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["probe", "--demo", "ct20[0-1]", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    assert '"host": "ct200"' in out and '"host": "ct201"' in out


def test_single_host_commands_refuse_a_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--demo", "ct20[0-1]"]) == 3
    assert "names 2 hosts; this command takes one" in capsys.readouterr().err
