"""``detective-tui fix`` end to end on fake hosts (local transport, the real probe and rules)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import subprocess
from pathlib import Path

import pytest
import yaml
from step_shims import tree_standins

from tui.cli import main
from tui.core import exitcodes
from tui.core.reach import inventory as inventory_module
from tui.demo.fakehost import SYSTEMCTL_LOG, build_fake_host, healthy_h100, reference_ct200

PLAIN_LOAD = inventory_module.load_inventory  # an inventory as it is: no stand-ins

DROPIN = "etc/systemd/system/sglang.service.d/50-detective-tui-cuda.conf"


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def inventory(
    tmp_path: Path, *, broken: bool = False, ghost: bool = False, healthy: bool = False
) -> tuple[Path, Path]:
    spec = reference_ct200(with_cuda13=True)
    if broken:  # a plain file where the drop-in directory must go: the first step fails
        spec = dataclasses.replace(
            spec, files={**spec.files, "/etc/systemd/system/sglang.service.d": "not a dir\n"}
        )
    fake = build_fake_host(tmp_path / "ct200 root", spec)
    hosts: list[dict[str, object]] = [
        {
            "name": "ct200",
            "local": True,
            "root": str(fake.root),
            "simulate": "tree",
            "env": fake.env,
            "python": list(fake.pythons),
        }
    ]
    if ghost:
        hosts.append({"name": "ghost", "ssh": "root@127.0.0.1:1"})
    if healthy:
        h100 = build_fake_host(tmp_path / "h100 root", healthy_h100())
        hosts.append(
            {
                "name": "h100",
                "local": True,
                "root": str(h100.root),
                "simulate": "tree",
                "env": h100.env,
                "python": list(h100.pythons),
            }
        )
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump({"hosts": hosts}))
    return path, fake.root


@pytest.fixture
def no_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


@pytest.fixture(autouse=True)
def standins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    tree_standins(monkeypatch, tmp_path)  # the trees this test builds run their fake systemctl


def test_dry_run_prints_the_proposed_commands_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root = inventory(tmp_path)
    before = tree_digest(root)
    rc = main(["fix", "ct200", "use-installed-toolkit", "--dry-run", "--hosts", str(inv)])
    out = capsys.readouterr().out
    assert rc == exitcodes.OK
    # no NAME=VALUE: the diagnosis proposed the toolkit already on the host
    assert "Fix use-installed-toolkit on ct200 for /root/venv_sglang211/bin/python3" in out
    assert "(path=/usr/local/cuda-13.0)" in out
    # resolved inside the tree when it runs (no symlink of the tree leads out of it)
    assert f"d=\"$(dt_in_root '{root}' /etc/systemd/system/sglang.service.d)\"" in out
    assert 'Environment="CUDA_HOME=/usr/local/cuda-13.0"' in out
    assert tree_digest(root) == before


def test_dry_run_json_lists_exact_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, _root = inventory(tmp_path)
    rc = main(
        [
            "fix",
            "ct200",
            "set-flashinfer-arch-list",
            "value=12.0a",
            "--dry-run",
            "--json",
            "--hosts",
            str(inv),
        ]
    )
    assert rc == exitcodes.OK
    (item,) = json.loads(capsys.readouterr().out)
    assert item["fix"] == "set-flashinfer-arch-list" and item["params"] == {"value": "12.0a"}
    unit, venv = item["commands"]
    assert 'Environment="FLASHINFER_CUDA_ARCH_LIST=12.0a"' in unit
    assert "export FLASHINFER_CUDA_ARCH_LIST=12.0a" in venv
    assert "no activate script at /root/venv_sglang211/bin/activate" in venv
    assert item["verify_gone"] == ["flashinfer-arch-rejected"]


def test_without_a_terminal_and_without_yes_nothing_is_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root = inventory(tmp_path)
    before = tree_digest(root)
    rc = main(["fix", "ct200", "use-installed-toolkit", "--hosts", str(inv)])
    assert rc == exitcodes.USAGE
    assert "no terminal to ask on" in capsys.readouterr().err
    assert tree_digest(root) == before


def test_yes_applies_verifies_and_undo_restores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root = inventory(tmp_path)
    rc = main(["fix", "ct200", "use-installed-toolkit", "--yes", "--hosts", str(inv)])
    out = capsys.readouterr().out
    assert rc == exitcodes.OK, out
    assert "Fixed: flashinfer-arch-rejected" in out
    assert "Restart pending: sglang.service" in out
    assert "Not restarted. Restart later with: systemctl restart sglang.service" in out
    assert (root / DROPIN).is_file()

    assert main(["fix", "ct200", "--history", "--hosts", str(inv)]) == exitcodes.OK
    history = capsys.readouterr().out
    assert "use-installed-toolkit path=/usr/local/cuda-13.0  (1 step(s) to undo)" in history
    assert main(["history", "ct200", "--json", "--hosts", str(inv)]) == exitcodes.OK
    (verified,) = json.loads(capsys.readouterr().out)  # the fix's verifying probe is kept:
    assert verified["verdict"] == "critical"  # the host as it is (the restart is pending)

    rc = main(["fix", "ct200", "--undo", "last", "--yes", "--hosts", str(inv)])
    out = capsys.readouterr().out
    assert rc == exitcodes.OK, out
    # the findings the undo brings back are named as the verdict before the fix, not as new
    assert "Back to the verdict before the fix: flashinfer-arch-rejected" in out
    assert "NEW problems" not in out
    assert not (root / DROPIN).exists()
    assert main(["fix", "ct200", "--history", "--hosts", str(inv)]) == exitcodes.OK
    assert "No fixes to undo on ct200." in capsys.readouterr().out


def test_a_failed_fix_exits_1_and_says_where_it_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    """A step that fails after it started may have changed something: never "Nothing was
    changed", its undo is kept, and undoing it (from whatever state) changes nothing else."""
    inv, root = inventory(tmp_path, broken=True)
    before = tree_digest(root)
    rc = main(["fix", "ct200", "use-installed-toolkit", "--yes", "--hosts", str(inv)])
    out = capsys.readouterr().out
    assert rc == exitcodes.CRITICAL
    assert "Stopped: step 1 (Set CUDA_HOME, PATH for sglang.service) failed" in out
    assert "Nothing was changed." not in out
    assert "1. Set CUDA_HOME, PATH for sglang.service: FAILED (may have changed something)" in out
    assert "May have changed — Set CUDA_HOME, PATH for sglang.service did not finish: adds " in out
    assert "2. Set CUDA_HOME, PATH in the venv's activate script: not run" in out
    assert "Fixed:" not in out
    assert main(["fix", "ct200", "--history", "--hosts", str(inv)]) == exitcodes.OK
    history = capsys.readouterr().out
    assert "(1 step(s) to undo)  [FAILED at step 1 of 2]" in history
    assert "1. Set CUDA_HOME, PATH for sglang.service: UNKNOWN — may have changed" in history
    assert main(["fix", "ct200", "--undo", "last", "--yes", "--hosts", str(inv)]) == exitcodes.OK
    assert "50-detective-tui-cuda.conf: nothing of this fix run to undo" in capsys.readouterr().out
    after = tree_digest(root)
    assert after.pop(SYSTEMCTL_LOG.lstrip("/")) and after == before  # undo's reload is logged


def test_fleet_fix_reports_every_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, _root = inventory(tmp_path, ghost=True)
    rc = main(["fix", "ct200,ghost", "use-installed-toolkit", "--yes", "--hosts", str(inv)])
    captured = capsys.readouterr()
    assert rc == exitcodes.UNREACHABLE
    rows = [
        line.split()[:2] for line in captured.out.splitlines() if line[:5] in ("ct200", "ghost")
    ]
    assert ["ct200", "fixed"] in rows and ["ghost", "unreachable"] in rows


def test_fleet_fix_for_a_finding_leaves_other_hosts_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, _root = inventory(tmp_path, healthy=True)
    h100 = tree_digest(tmp_path / "h100 root")
    argv = ["fix", "*", "use-installed-toolkit", "--finding", "flashinfer-arch-rejected", "--yes"]
    rc = main([*argv, "--hosts", str(inv)])
    captured = capsys.readouterr()
    assert rc == exitcodes.OK, captured.out
    lines = captured.out.splitlines()
    rows = {line.split()[0]: line.split()[1] for line in lines if line[:5] in ("ct200", "h100 ")}
    assert rows == {"ct200": "fixed", "h100": "skipped"}
    assert tree_digest(tmp_path / "h100 root") == h100


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fix", "ct200", "frobnicate"], "unknown fix 'frobnicate'"),
        (["fix", "ct200"], "name a fix"),
        (["fix", "ct200", "use-installed-toolkit", "path"], "is not NAME=VALUE"),
        (
            ["fix", "ct200", "clear-flashinfer-jit-cache", "path=/x", "--dry-run"],
            "does not take path",
        ),
        (
            ["fix", "ct200", "use-installed-toolkit", "path=/opt/none", "--dry-run"],
            "no CUDA toolkit",
        ),
        (["fix", "ct200", "--undo", "nope"], "no undo record 'nope'"),
    ],
)
def test_bad_usage_exits_3_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None, argv: list[str], message: str
) -> None:
    inv, _root = inventory(tmp_path)
    assert main([*argv, "--hosts", str(inv)]) == exitcodes.USAGE
    assert message in capsys.readouterr().err


def systemctl_calls(root: Path) -> list[str]:
    """What the fake host's systemctl shim was asked, a call per line."""
    log = root / SYSTEMCTL_LOG.lstrip("/")
    return log.read_text().splitlines() if log.exists() else []


def recording_systemctl_on_path(tmp_path: Path, inv: Path) -> Path:
    """A ``systemctl`` first on the host's PATH that records its calls (this machine's)."""
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir()
    log = tmp_path / "path-systemctl.log"
    (fake_bin / "systemctl").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n')
    (fake_bin / "systemctl").chmod(0o755)
    data = yaml.safe_load(inv.read_text())
    env = data["hosts"][0]["env"]
    env["PATH"] = f"{fake_bin}:{env['PATH']}"
    inv.write_text(yaml.safe_dump(data))
    return log


def process_env(root: Path, pid: int) -> dict[str, str]:
    raw = (root / f"proc/{pid}/environ").read_bytes().decode()
    return dict(item.split("=", 1) for item in raw.split("\0") if item)


def test_restart_is_a_separate_step_that_runs_the_fake_hosts_systemctl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root = inventory(tmp_path)
    path_log = recording_systemctl_on_path(tmp_path, inv)

    rc = main(["fix", "ct200", "use-installed-toolkit", "--yes", "--hosts", str(inv)])
    assert rc == exitcodes.OK
    assert systemctl_calls(root) == ["daemon-reload"]  # no restart without asking
    assert "Not restarted" in capsys.readouterr().out
    assert process_env(root, 4242)["CUDA_HOME"] == "/usr/local/cuda-12.8"

    rc = main(["fix", "ct200", "--undo", "last", "--yes", "--hosts", str(inv)])
    assert rc == exitcodes.OK
    rc = main(["fix", "ct200", "use-installed-toolkit", "--yes", "--restart", "--hosts", str(inv)])
    out = capsys.readouterr().out
    assert rc == exitcodes.OK, out
    assert systemctl_calls(root) == [
        "daemon-reload",
        "daemon-reload",
        "daemon-reload",
        "restart sglang.service",
    ]
    assert "Restart sglang.service: changed — restarted sglang.service" in out
    # the shim gave the unit's processes the environment of the unit with the drop-in
    for pid in (4242, 4300, 4307):
        env = process_env(root, pid)
        assert env["CUDA_HOME"] == "/usr/local/cuda-13.0"
        assert env["PATH"].startswith("/usr/local/cuda-13.0/bin:")
    assert not path_log.exists()  # this machine's systemctl was never asked


def test_a_root_prefixed_host_that_is_not_a_fake_host_never_runs_systemctl(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    no_tty: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inv, root = inventory(tmp_path)
    # a root: host of the inventory is just a filesystem, e.g. a mounted container image: its
    # own usr/bin/systemctl (and a planted .detective-fakehost beside it) never runs
    (root / ".detective-fakehost").write_text("")
    monkeypatch.setattr(inventory_module, "load_inventory", PLAIN_LOAD)
    data = yaml.safe_load(inv.read_text())
    del data["hosts"][0]["simulate"]  # not a tree detective-tui built, as far as it knows
    inv.write_text(yaml.safe_dump(data))
    path_log = recording_systemctl_on_path(tmp_path, inv)
    rc = main(["fix", "ct200", "use-installed-toolkit", "--yes", "--restart", "--hosts", str(inv)])
    out = capsys.readouterr().out
    assert rc == exitcodes.OK, out
    assert not path_log.exists()
    assert systemctl_calls(root) == []
    where = f"ct200 is a filesystem under {root}, not a running system"
    assert (
        f"skipped systemctl daemon-reload: {where}: run systemctl daemon-reload on the machine "
        "that runs it" in out
    )
    assert (
        f"Restart sglang.service: nothing to do — skipped restarting sglang.service: {where}: "
        "restart sglang.service on the machine that runs it" in out
    )
    assert process_env(root, 4242)["CUDA_HOME"] == "/usr/local/cuda-12.8"


def test_fleet_restart_restarts_the_units_of_fixed_hosts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root = inventory(tmp_path, ghost=True)
    path_log = recording_systemctl_on_path(tmp_path, inv)
    argv = ["fix", "ct200,ghost", "use-installed-toolkit", "--yes", "--restart"]
    rc = main([*argv, "--hosts", str(inv)])
    out = capsys.readouterr().out
    assert rc == exitcodes.UNREACHABLE
    assert systemctl_calls(root) == ["daemon-reload", "restart sglang.service"]
    assert "Restart sglang.service: changed — restarted sglang.service" in out
    assert process_env(root, 4242)["CUDA_HOME"] == "/usr/local/cuda-13.0"
    assert not path_log.exists()


def test_the_fake_systemctl_restarts_like_systemd_and_refuses_what_it_cannot(
    tmp_path: Path,
) -> None:
    """The shim alone: systemd's default PATH when the unit sets none, a unit it does not know
    is exit 5 (systemctl's), other verbs exit 1; every call is logged."""
    spec = reference_ct200()
    unit = "/etc/systemd/system/sglang.service"
    text = "\n".join(ln for ln in spec.files[unit].splitlines() if "PATH=" not in ln)
    root = build_fake_host(tmp_path / "t", dataclasses.replace(spec, files={unit: text})).root
    shim = str(root / "usr/bin/systemctl")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([shim, *args], capture_output=True, text=True, timeout=60)

    assert run("restart", "sglang.service").returncode == 0
    env = process_env(root, 4242)
    assert env["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert env["CUDA_HOME"] == "/usr/local/cuda-12.8" and "LANG" not in env
    missing = run("restart", "nope.service")
    assert missing.returncode == 5 and "Unit nope.service not found" in missing.stderr
    assert run("stop", "sglang.service").returncode == 1
    assert systemctl_calls(root) == [
        "restart sglang.service",
        "restart nope.service",
        "stop sglang.service",
    ]
