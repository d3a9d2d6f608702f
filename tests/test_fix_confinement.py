"""A fix on a demo or ``root:`` host changes only what that host is (issue 19, items 1 and 2).

Every payload is planted in a real fake-host tree of an inventory's ``root:`` host and the
real CLI runs the fix and its undo through the local transport: the tree's own
``usr/bin/systemctl`` (beside a ``.detective-fakehost`` marker), ``dpkg``/``curl``/``apt-get``
first on the host's PATH, an absolute ``etc/systemd/system`` symlink out of the tree, a
relative one climbing above it, a unit name that is a path. Nothing outside the tree may
change and nothing of the tree or of PATH may run.
"""

from __future__ import annotations

import dataclasses
import io
import os
import shutil
from pathlib import Path

import pytest
import yaml
from ct200_plans import ct200_facts

from tui.cli import main
from tui.core import exitcodes
from tui.core.fixes import FixError, build_plan
from tui.core.fixes.envset import dropin_dir
from tui.core.hosts import DEMO_SOURCE, Host
from tui.demo.fakehost import build_fake_host, reference_ct200

UNIT_DIR = "etc/systemd/system"
DROPIN = "sglang.service.d/50-detective-tui-cuda.conf"
MACHINE_TOOLS = ("systemctl", "dpkg", "curl", "apt-get", "wget", "ldconfig", "sudo")


@pytest.fixture
def no_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def tripwire(path: Path, marker: Path) -> None:
    """An executable that, if anything ever runs it, leaves ``marker`` (with its argv)."""
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\n')
    path.chmod(0o755)


def planted(tmp_path: Path) -> tuple[Path, Path, Path]:
    """hosts.yaml with one ``root:`` host (the reference ct200 tree, CUDA 13.0 on disk) whose
    tree holds the demo hook's payload, and a PATH whose machine tools are tripwires.
    Returns (inventory, root, marker)."""
    fake = build_fake_host(tmp_path / "ct200 root", reference_ct200(with_cuda13=True))
    root = fake.root
    marker = tmp_path / "ran"
    (root / ".detective-fakehost").write_text("")  # the old hook's marker
    tripwire(root / "usr/bin/systemctl", marker)  # the tree's own program
    bin_dir = tmp_path / "operator-bin"
    bin_dir.mkdir()
    for tool in MACHINE_TOOLS:
        tripwire(bin_dir / tool, marker)
    env = {**fake.env, "PATH": f"{bin_dir}:{fake.env['PATH']}"}
    entry = {"name": "ct200", "local": True, "root": str(root), "env": env}
    entry["python"] = list(fake.pythons)
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": [entry]}))
    return inv, root, marker


def fix(inv: Path, *argv: str) -> int:
    return main(["fix", "ct200", *argv, "--hosts", str(inv)])


def test_the_trees_own_systemctl_never_runs_in_a_fix_a_restart_or_an_undo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root, marker = planted(tmp_path)
    assert fix(inv, "use-installed-toolkit", "--yes", "--restart") == exitcodes.OK
    out = capsys.readouterr().out
    assert (root / UNIT_DIR / DROPIN).is_file()
    assert f"ct200 is a filesystem under {root}, not a running system" in out
    assert fix(inv, "--undo", "last", "--yes") == exitcodes.OK
    assert not (root / UNIT_DIR / DROPIN).exists()
    assert not (root / UNIT_DIR / DROPIN).parent.exists()  # the dir the fix made goes too
    assert not marker.exists(), marker.read_text()


def test_apt_on_a_root_host_is_refused_with_the_commands_to_run_inside_the_image(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root, marker = planted(tmp_path)
    before = sorted(p.name for p in root.rglob("*"))
    assert fix(inv, "install-cuda-toolkit-apt", "--yes") == exitcodes.USAGE
    err = capsys.readouterr().err
    assert "install-cuda-toolkit-apt runs dpkg" in err
    assert "here it would change the machine running detective-tui" in err
    assert "Inside the image run: curl -fsSL" in err and "apt-get install -y" in err
    assert sorted(p.name for p in root.rglob("*")) == before
    assert not marker.exists(), marker.read_text()


def test_a_demo_host_without_apt_stand_ins_refuses_apt_and_names_why() -> None:
    demo = Host(name="ct200", local=True, root="/srv/demo/ct200", source=DEMO_SOURCE)
    with pytest.raises(FixError, match=r"ct200 is a simulated host .* not a machine"):
        build_plan(ct200_facts(), demo, "install-cuda-toolkit-apt", {})
    tools = {t: f"/srv/demo tools/{t}" for t in ("dpkg", "curl", "apt-get")}
    with_tools = dataclasses.replace(demo, standins=tools)
    plan = build_plan(ct200_facts(), with_tools, "install-cuda-toolkit-apt", {})
    text = "\n".join(plan.preview_commands())
    assert "'/srv/demo tools/dpkg' -s cuda-keyring" in text
    assert "'/srv/demo tools/apt-get' update" in text
    # no bare machine tool is left to run on this machine
    for word in ("\ndpkg ", " dpkg -", "\napt-get ", " apt-get install", "wget "):
        assert word not in text.replace("'/srv/demo tools/", "'"), word


def _link_units_out(root: Path, outside: Path, target: str) -> Path:
    """Move the tree's unit directory to ``outside`` (a real directory of this machine) and
    leave ``etc/systemd/system`` as a symlink with ``target``; returns the outside copy."""
    real = outside / "system"
    outside.mkdir()
    shutil.move(root / UNIT_DIR, real)
    os.symlink(target, root / UNIT_DIR)
    return real


def _digest(path: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_an_absolute_unit_dir_symlink_resolves_inside_the_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root, marker = planted(tmp_path)
    outside = tmp_path / "the operator's etc"
    real = _link_units_out(root, outside, str(tmp_path / "the operator's etc" / "system"))
    before = _digest(outside)
    fix(inv, "use-installed-toolkit", "--yes")
    capsys.readouterr()
    assert _digest(outside) == before  # nothing written through the link
    # with the root as /, the link's target is a path of the image: the drop-in lands there
    inside = root / str(real).lstrip("/") / DROPIN
    assert inside.is_file()
    assert 'Environment="CUDA_HOME=/usr/local/cuda-13.0"' in inside.read_text()
    assert fix(inv, "--undo", "last", "--yes") == exitcodes.OK
    assert not inside.exists() and _digest(outside) == before
    assert not marker.exists()


def test_a_relative_symlink_climbing_out_of_the_root_stops_the_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root, marker = planted(tmp_path)
    outside = tmp_path / "outside"
    depth = len(root.relative_to("/").parts) + 2  # above / itself
    _link_units_out(root, outside, "../" * depth + str(outside / "system").lstrip("/"))
    before = _digest(outside)
    rc = fix(inv, "use-installed-toolkit", "--yes")
    captured = capsys.readouterr()
    assert rc == exitcodes.CRITICAL
    assert "/etc/systemd/system/sglang.service.d leaves" in captured.out + captured.err
    assert "refusing to write there" in captured.out + captured.err
    assert _digest(outside) == before
    assert not marker.exists()


@pytest.mark.parametrize(
    "unit", ["../../../tmp/x.service", "a/b.service", "x\n[Service].service", "sglang"]
)
def test_a_unit_name_from_the_host_that_is_not_one_is_refused(unit: str) -> None:
    with pytest.raises(FixError, match="is not a systemd unit name"):
        dropin_dir(unit)
