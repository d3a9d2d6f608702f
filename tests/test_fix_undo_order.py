"""Undo is undo (issue 19, item 4). A killed client's step still running holds the host's
step lock, so the undo waits for it. Fix A then fix B on the same ``activate`` (and unit), then
``--undo A`` must never remove B's block with A's backup, and ``--undo B`` afterwards must never
bring A back. The real CLI, probe and journal on a fake host tree (local transport)."""

from __future__ import annotations

import dataclasses
import io
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from step_shims import CHILD_STANDINS, tree_standins, wait_for

from tui.cli import main
from tui.core import exitcodes
from tui.core.fixes.undo import list_records
from tui.demo.fakehost import build_fake_host, reference_ct200

VENV = "/root/venv_sglang211"
ACTIVATE = f'VIRTUAL_ENV={VENV}\nexport VIRTUAL_ENV\nPATH="$VIRTUAL_ENV/bin:$PATH"\nexport PATH\n'


@pytest.fixture
def host_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    tree_standins(monkeypatch, tmp_path)
    spec = reference_ct200(with_cuda13=True)
    spec = dataclasses.replace(spec, files={**spec.files, f"{VENV}/bin/activate": ACTIVATE})
    fake = build_fake_host(tmp_path / "ct200 root", spec)
    entry = {"name": "ct200", "local": True, "root": str(fake.root), "env": fake.env}
    entry["python"] = list(fake.pythons)
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": [entry]}))
    return inv, fake.root / VENV.lstrip("/") / "bin/activate"


def fix(inv: Path, *argv: str) -> int:
    return main(["fix", "ct200", *argv, "--hosts", str(inv)])


def test_an_older_fix_is_not_undone_under_a_later_one_on_the_same_file(
    host_tree: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    inv, activate = host_tree
    assert fix(inv, "use-installed-toolkit", "--yes") == exitcodes.OK
    after_a = activate.read_text()
    assert fix(inv, "set-flashinfer-arch-list", "value=12.0a", "--yes") == exitcodes.OK
    after_b = activate.read_text()
    assert "CUDA_HOME" in after_a and "FLASHINFER_CUDA_ARCH_LIST" in after_b
    b, a = list_records("ct200")
    assert (a.fix_id, b.fix_id) == ("use-installed-toolkit", "set-flashinfer-arch-list")
    capsys.readouterr()

    assert fix(inv, "--undo", a.id, "--yes") == exitcodes.USAGE
    err = capsys.readouterr().err
    assert f"{a.id} (use-installed-toolkit) on ct200 cannot be undone before the later" in err
    assert f"{b.id} (set-flashinfer-arch-list: {VENV}/bin/activate" in err
    assert f"fix ct200 --undo {b.id}" in err and "nothing was changed" in err
    assert activate.read_text() == after_b
    assert [r.id for r in list_records("ct200")] == [b.id, a.id]

    assert fix(inv, "--undo", b.id, "--yes") == exitcodes.OK
    assert activate.read_text() == after_a  # A's block stays, B's is gone
    assert fix(inv, "--undo", a.id, "--yes") == exitcodes.OK
    assert activate.read_text() == ACTIVATE  # nothing resurrected
    capsys.readouterr()
    assert fix(inv, "--history") == exitcodes.OK
    assert "No fixes to undo" in capsys.readouterr().out


MKDIR_HOLD = """#!/bin/sh
# the first mkdir of the drop-in dir waits (bounded) for @D@/release: a slow remote step
case "$*" in *sglang.service.d*)
  if [ ! -e @D@/reached ]; then
    : > @D@/reached
    i=0
    while [ ! -e @D@/release ] && [ "$i" -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
  fi ;;
esac
exec /bin/mkdir "$@"
"""


def waiting(line: str) -> bool:
    """The undo's step saying it waits for the host's step lock (not the preview's echo)."""
    return (
        "waiting: a step of an earlier detective-tui run still runs" in line and "echo" not in line
    )


CLI = CHILD_STANDINS + "import sys; from tui.cli import main; sys.exit(main(sys.argv[1:]))"


def test_an_undo_waits_for_the_step_a_killed_client_left_running(
    host_tree: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv, _activate = host_tree
    shim = tmp_path / "slow-bin"
    shim.mkdir()
    (shim / "mkdir").write_text(MKDIR_HOLD.replace("@D@", shlex.quote(str(shim))))
    (shim / "mkdir").chmod(0o755)
    data = yaml.safe_load(inv.read_text())
    env = data["hosts"][0]["env"]
    env["PATH"] = f"{shim}:{env['PATH']}"
    inv.write_text(yaml.safe_dump(data))
    root = Path(data["hosts"][0]["root"])
    dropin = root / "etc/systemd/system/sglang.service.d/50-detective-tui-cuda.conf"
    argv = ["--hosts", str(inv)]
    client = subprocess.Popen(
        [sys.executable, "-c", CLI, "fix", "ct200", "use-installed-toolkit", "--yes", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(shim / "reached", 300)  # inside step 1, before its write
    finally:
        client.kill()
        client.wait(60)
    assert client.returncode == -signal.SIGKILL
    undo = subprocess.Popen(
        [sys.executable, "-c", CLI, "fix", "ct200", "--undo", "last", "--yes", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: list[str] = []
    try:
        assert undo.stdout is not None
        for line in undo.stdout:  # ends at exit: an undo that does not wait fails here
            seen.append(line)
            if waiting(line):
                break
        assert any(waiting(s) for s in seen), "".join(seen)
        (shim / "release").touch()  # the orphaned step writes the drop-in now
        rest, _ = undo.communicate(timeout=300)
    finally:
        undo.kill()
    assert undo.returncode == exitcodes.OK, "".join(seen) + rest
    assert not dropin.exists() and not dropin.parent.exists()  # the late write was undone
    capsys.readouterr()
    assert fix(inv, "--history") == exitcodes.OK
    assert "No fixes to undo" in capsys.readouterr().out
