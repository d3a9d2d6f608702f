"""The fix journal against faults, over a real loopback OpenSSH sshd: a step that writes and
then fails, the client killed with SIGKILL mid-step, the sshd killed mid-step. After each,
``fix HOST --history`` must tell the truth and ``fix HOST --undo last`` must put every file of
the host back byte for byte.

The host runs two SGLang servers (two systemd units) and a venv, so the fix has three steps;
the fake host's ``systemctl`` is wrapped by a shim (tests/step_shims.py) that fails or holds
on a chosen call, and the tests synchronise on the files the shim writes.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import SSHEnv, make_ssh_env
from sshd import SSHD, start_sshd
from step_shims import CHILD_STANDINS, host_digest, shim_systemctl, tree_standins, wait_for

from tui.cli import main
from tui.core import exitcodes
from tui.core.fixes.undo import list_records, records_dir
from tui.core.locations import sessions_dir
from tui.core.records.transcript import read_events
from tui.demo.fakehost import ProcessSpec, build_fake_host, reference_ct200

pytestmark = pytest.mark.sshd

VENV = "/root/venv_sglang211"
ACTIVATE = f'VIRTUAL_ENV={VENV}\nexport VIRTUAL_ENV\nPATH="$VIRTUAL_ENV/bin:$PATH"\nexport PATH\n'
DROPIN = "etc/systemd/system/{unit}.d/50-detective-tui-cuda.conf"
UNITS = ("sglang.service", "sglang-b.service")
CLIENT_DEADLINE_S = 300


def two_servers(dest: Path) -> tuple[Path, dict[str, object]]:
    """The reference CT200 with CUDA 13.0 on disk, a second SGLang server under its own unit
    and a venv activate script: use-installed-toolkit has three steps (unit, unit, venv)."""
    spec = reference_ct200(with_cuda13=True)
    first = spec.processes[0]
    second = ProcessSpec(
        pid=5252,
        argv=(*first.argv[:-1], "30001"),
        environ=first.environ,
        exe=first.exe,
        unit=UNITS[1],
    )
    unit_text = spec.files[f"/etc/systemd/system/{UNITS[0]}"].replace("30000", "30001")
    spec = dataclasses.replace(
        spec,
        processes=(*spec.processes, second),
        files={
            **spec.files,
            f"/etc/systemd/system/{UNITS[1]}": unit_text,
            f"{VENV}/bin/activate": ACTIVATE,
        },
    )
    fake = build_fake_host(dest, spec)
    entry = {
        "name": "ct200",
        "ssh": "fakehost",
        "root": str(fake.root),
        "simulate": "tree",
        "env": fake.env,
        "python": list(fake.pythons),
    }
    return fake.root, entry


def inventory(tmp_path: Path) -> tuple[Path, Path]:
    root, entry = two_servers(tmp_path / "ct200 root")
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": [entry]}))
    return inv, root


@pytest.fixture
def no_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


@pytest.fixture(autouse=True)
def standins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    tree_standins(monkeypatch, tmp_path)  # the trees this test builds run their fake systemctl


def fix(inv: Path, *argv: str) -> int:
    return main(["fix", "ct200", *argv, "--hosts", str(inv)])


def client(inv: Path) -> subprocess.Popen[str]:
    """``detective-tui fix ct200 use-installed-toolkit --yes`` as its own process."""
    code = CHILD_STANDINS + "import sys; from tui.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = ["fix", "ct200", "use-installed-toolkit", "--yes", "--hosts", str(inv)]
    return subprocess.Popen(
        [sys.executable, "-c", code, *argv],
        env=os.environ.copy(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def journal_events() -> list[dict]:
    return [
        e
        for path in sessions_dir().glob("*.jsonl")
        for e in read_events(path)
        if e["kind"] == "fix-journal"
    ]


def undo_restores(inv: Path, root: Path, before: dict[str, str], capsys) -> str:
    """``--undo last --yes`` succeeds, every file is back, nothing is left to undo."""
    assert fix(inv, "--undo", "last", "--yes") == exitcodes.OK
    out = capsys.readouterr().out
    assert host_digest(root) == before
    assert list_records("ct200") == []
    return out


def test_a_step_that_writes_then_fails_is_journaled_and_undone(
    tmp_path: Path, ssh_env: SSHEnv, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root = inventory(tmp_path)
    shim_systemctl(root, tmp_path / "shim", call=1, mode="fail")  # step 1's daemon-reload
    before = host_digest(root)

    assert fix(inv, "use-installed-toolkit", "--yes") == exitcodes.CRITICAL
    out = capsys.readouterr().out
    step1 = "Set CUDA_HOME, PATH for sglang.service"
    assert f"1. {step1}: FAILED (may have changed something) — 50-detective-tui-cuda.conf " in out
    assert (
        f"May have changed — {step1} did not finish (it reported: 50-detective-tui-cuda.conf "
        "written): adds the drop-in /etc/systemd/system/sglang.service.d/50-detective-tui-cuda"
    ) in out
    assert "Nothing was changed." not in out and "Fixed:" not in out
    assert (root / DROPIN.format(unit=UNITS[0])).is_file()  # it did write, then failed

    (record,) = list_records("ct200")
    assert record.state == "failed" and not record.live
    assert [s.status for s in record.journal] == ["unknown", "not-run", "not-run"]
    assert record.journal[0].reports == ("50-detective-tui-cuda.conf written",)
    assert record.journal[0].exit_status == 1
    assert [s.title for s in record.steps] == [step1]  # the undo covers the failed step
    assert f"Undo: detective-tui fix ct200 --undo {record.id}" in out
    statuses = [(e["step"], e["status"]) for e in journal_events()]
    assert (1, "running") in statuses and (1, "unknown") in statuses

    assert fix(inv, "--history") == exitcodes.OK
    history = capsys.readouterr().out
    assert f"{record.id}  " in history and "[FAILED at step 1 of 3]" in history
    assert f"1. {step1}: UNKNOWN — may have changed — 50-detective-tui-cuda.conf written" in history
    assert fix(inv, "--history", "--json") == exitcodes.OK
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["state"] == "failed" and listed["journal"][0]["status"] == "unknown"

    out = undo_restores(inv, root, before, capsys)
    assert "50-detective-tui-cuda.conf removed" in out


def test_the_client_killed_during_step_2_leaves_an_undoable_journal(
    tmp_path: Path, ssh_env: SSHEnv, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, root = inventory(tmp_path)
    shim = shim_systemctl(root, tmp_path / "shim", call=2, mode="hold")  # step 2's reload
    before = host_digest(root)

    proc = client(inv)
    try:
        shim.wait_reached(CLIENT_DEADLINE_S)
    finally:
        proc.kill()  # SIGKILL: no handler, no finally, nothing flushed on the way out
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    shim.release()  # the remote step runs on without its client, to its end
    wait_for(shim.finished(2))

    assert fix(inv, "--history") == exitcodes.OK
    captured = capsys.readouterr()
    assert "fix use-installed-toolkit on ct200 was interrupted at step 2 of 3" in captured.err
    assert "[INTERRUPTED at step 2 of 3]" in captured.out
    lines = captured.out
    assert "1. Set CUDA_HOME, PATH for sglang.service: changed" in lines
    assert "2. Set CUDA_HOME, PATH for sglang-b.service: UNKNOWN — may have changed" in lines
    assert "3. Set CUDA_HOME, PATH in the venv's activate script: not run" in lines
    (record,) = list_records("ct200")
    assert record.interrupted and record.needs_attention
    assert [s.title for s in record.steps] == [
        "Set CUDA_HOME, PATH for sglang-b.service",
        "Set CUDA_HOME, PATH for sglang.service",
    ]
    # the killed client's transcript got as far as the intent of step 2
    assert (2, "running") in [(e["step"], e["status"]) for e in journal_events()]

    out = undo_restores(inv, root, before, capsys)
    assert "Back to the verdict before the fix: " in out


def kill_sshd(server: SSHD) -> None:
    """SIGKILL the sshd: the listener and every sshd process under it (the connections),
    leaving the commands they ran alone, as when sshd is OOM-killed or restarted hard."""
    pids = [server.proc.pid]
    for pid in list(pids):
        pids += descendants(pid)
    for pid in pids:
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if comm.startswith("sshd"):
            os.kill(pid, signal.SIGKILL)
    server.proc.wait()


def descendants(pid: int) -> list[int]:
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            children.append(int(entry.name))
    return children + [d for c in children for d in descendants(c)]


def test_the_sshd_killed_during_step_2_leaves_an_undoable_journal(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_tty: None,
) -> None:
    home = tmp_path_factory.mktemp("own-sshd-home")
    work = tmp_path_factory.mktemp("own-sshd")
    server = start_sshd(work, extra=f"SetEnv HOME={home}\n")
    try:
        make_ssh_env(server, tmp_path / "ssh", monkeypatch)
        inv, root = inventory(tmp_path)
        shim = shim_systemctl(root, tmp_path / "shim", call=2, mode="hold")
        before = host_digest(root)

        proc = client(inv)
        shim.wait_reached(CLIENT_DEADLINE_S)
        kill_sshd(server)
        out, _ = proc.communicate(timeout=CLIENT_DEADLINE_S)
        assert proc.returncode == exitcodes.CRITICAL, out
        assert "2. Set CUDA_HOME, PATH for sglang-b.service: FAILED (may have changed" in out
        assert "connection" in out and "Nothing was changed." not in out
        shim.release()
        wait_for(shim.finished(2))

        server = start_sshd(work, extra=f"SetEnv HOME={home}\n", host_key=server.host_key)
        make_ssh_env(server, tmp_path / "ssh", monkeypatch)
        assert fix(inv, "--history") == exitcodes.OK
        history = capsys.readouterr().out
        assert "[FAILED at step 2 of 3]" in history
        assert "2. Set CUDA_HOME, PATH for sglang-b.service: UNKNOWN — may have changed" in history
        undo_restores(inv, root, before, capsys)
    finally:
        server.stop()


def test_a_journal_that_cannot_be_written_runs_nothing(
    tmp_path: Path, ssh_env: SSHEnv, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    """Write-ahead: when the intent cannot reach the disk (here the state dir is a file, as
    good as a full disk), no step runs and the output says so."""
    inv, root = inventory(tmp_path)
    before = host_digest(root)
    records_dir("ct200").parent.mkdir(parents=True, exist_ok=True)
    records_dir("ct200").write_text("not a directory\n")
    assert fix(inv, "use-installed-toolkit", "--yes") == exitcodes.CRITICAL
    out = capsys.readouterr().out
    assert "cannot write the fix journal" in out and "nothing was run" in out
    assert "Nothing was changed." in out
    assert host_digest(root) == before
