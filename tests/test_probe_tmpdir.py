"""The probe's remote temp dir (issue 9 item 4): it holds nothing unredacted (the login shell's
environment is filtered before it is written), and it is removed on every exit path — a normal
end, a dropped connection (the probe's traps), a killed client (the kill path: see
tests/test_probe_pty.py), and a probe killed with SIGKILL (the next probe sweeps it). Over the
real loopback sshd, with the sessions' TMPDIR pointing at a directory of the test's own."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import _start, make_ssh_env
from secret_corpus import PROCESS_ENV, PROFILE, leaks
from sshd import SSHD

from tui.core.hosts import Host
from tui.core.run.runner import ProbeResult, Session

SLOW_S = 4


@dataclass(frozen=True)
class TmpSSHD:
    server: SSHD
    home: Path  # the sessions' HOME
    tmpdir: Path  # the sessions' TMPDIR
    capture: Path  # where the capturing interpreter copies the probe's temp dir


@pytest.fixture(scope="module")
def sshd_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TmpSSHD]:
    """Sessions with a private TMPDIR and a login profile that exports the secret corpus
    (and sleeps SLOW_S seconds while ``$HOME/slow`` exists)."""
    home = tmp_path_factory.mktemp("tmpdir-home")
    tmpdir = tmp_path_factory.mktemp("sessions-tmp")
    capture = tmp_path_factory.mktemp("capture")
    secrets = "".join(f"export {k}='{v}'\n" for k, v in PROCESS_ENV.items())
    slow = f'[ -e "$HOME/slow" ] && case $- in *i*) sleep {SLOW_S} ;; esac\n'
    (home / ".profile").write_text(PROFILE + secrets + slow)
    (home / ".bashrc").write_text("")
    extra = f"SetEnv HOME={home} TMPDIR={tmpdir}\n"
    for server in _start(tmp_path_factory, "sshd-tmpdir", extra=extra):
        yield TmpSSHD(server, home, tmpdir, capture)


@pytest.fixture
def slow_login(sshd_tmp: TmpSSHD) -> Iterator[Path]:
    """The login shell sleeps while this marker exists (the fixture removes it after)."""
    marker = sshd_tmp.home / "slow"
    marker.write_text("")
    yield marker
    marker.unlink(missing_ok=True)


def ours(env: TmpSSHD) -> list[Path]:
    return sorted(env.tmpdir.glob("detective-tui.*"))


async def probe(
    where: TmpSSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **host: object
) -> ProbeResult:
    ssh = make_ssh_env(where.server, tmp_path / "ssh", monkeypatch)
    async with Session(known_hosts=ssh.known_hosts, ssh_config=ssh.ssh_config) as session:
        return await session.probe(Host(name="tmp", ssh=ssh.alias, **host))  # type: ignore[arg-type]


def announced(result: ProbeResult) -> Path:
    (line,) = [ln for ln in result.raw_lines if ln.startswith("@@detective-tui-tmpdir ")]
    return Path(line.split(" ", 1)[1])


async def test_a_finished_probe_leaves_no_temp_dir(
    sshd_tmp: TmpSSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = await probe(sshd_tmp, tmp_path, monkeypatch)
    used = announced(result)
    assert used.parent == sshd_tmp.tmpdir and not used.exists()


async def test_the_temp_dir_never_holds_the_raw_login_environment(
    sshd_tmp: TmpSSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A toolkit's "nvcc" (a script the probe runs after the login shell has been read: the
    interpreters may start before it) copies the probe's temp dir: only the variables the probe
    reports are there, their secrets masked. Before: login.out held the whole login environment
    in clear."""
    spy = tmp_path / "spy-cuda" / "bin" / "nvcc"
    spy.parent.mkdir(parents=True)
    spy.write_text(
        f'#!/bin/sh\ncp -r "$TMPDIR"/detective-tui.* {sshd_tmp.capture}/ 2>/dev/null\nexit 1\n'
    )
    spy.chmod(0o755)
    result = await probe(sshd_tmp, tmp_path, monkeypatch, env={"CUDA_HOME": str(spy.parents[1])})
    assert result.facts is not None and result.facts.probe.complete
    login = next(c for c in result.facts.contexts if c.kind == "login")
    assert login.vars["SGLANG_DB_URL"] == "postgres://***@db.internal/x", login
    copied = {
        p.name: p.read_text(errors="replace") for p in sshd_tmp.capture.rglob("*") if p.is_file()
    }
    assert "login.out" in copied and "PATH=" in copied["login.out"], copied
    assert leaks("".join(copied.values())) == [], copied
    assert "GH_TOKEN" not in copied["login.out"]  # a variable the probe does not report


async def test_a_dropped_connection_still_removes_it(
    sshd_tmp: TmpSSHD, slow_login: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sshd process serving the probe is killed while the login shell is still running:
    the probe's next write fails (SIGPIPE) and its trap removes the temp dir."""
    before = set(ours(sshd_tmp))
    task = asyncio.create_task(probe(sshd_tmp, tmp_path, monkeypatch))
    new = await _appears(sshd_tmp, before)
    probe_pid = int(new.name.split(".")[1])
    sshd_session = _ancestor(probe_pid, "sshd")
    os.kill(sshd_session, signal.SIGKILL)
    result = await task
    assert result.error is not None  # the connection was lost
    assert await _gone(new, within_s=SLOW_S + 15), f"{new} left behind"


@pytest.mark.parametrize("path", ["sh", "auto"])
async def test_a_probe_killed_with_sigkill_leaves_nothing(
    sshd_tmp: TmpSSHD, slow_login: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """No trap runs. The sh path: the next probe sweeps the dir. The host helper (auto) sees
    the probe gone, ends the login shell it started and removes the dir itself."""
    before = set(ours(sshd_tmp))
    chosen = {"DT_PROBE_PATH": path}
    task = asyncio.create_task(probe(sshd_tmp, tmp_path, monkeypatch, env=chosen))
    left = await _appears(sshd_tmp, before)
    os.kill(int(left.name.split(".")[1]), signal.SIGKILL)  # no trap runs
    await task
    if path == "auto":
        assert await _gone(left, within_s=5), f"{left} left behind"
        return
    assert left.exists()
    slow_login.unlink()
    await probe(sshd_tmp, tmp_path / "again", monkeypatch)
    assert not left.exists()


@pytest.mark.parametrize("path", ["sh", "auto"])
async def test_the_sweep_spares_a_probe_of_another_pid_namespace(
    sshd_tmp: TmpSSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """A probe running in another PID namespace (a container sharing the temp dir) has a pid
    this one cannot see: before, the next probe here took it for dead and removed its dir.
    Only a dir whose ``probe`` file names this namespace is swept; so is none of an older
    probe's, which named no namespace."""
    pid = _unused_pid()
    mine = os.readlink("/proc/self/ns/pid")
    planted = {
        "other": f"detective-tui pid:[{int(mine[5:-1]) + 1}]",
        "older": "detective-tui",
        "this": f"detective-tui {mine}",
    }
    dirs = {}
    for n, (what, tag) in enumerate(planted.items()):
        d = sshd_tmp.tmpdir / f"detective-tui.{pid}.{what[:3]}{n:03d}"
        d.mkdir()
        (d / "probe").write_text(tag + "\n")
        dirs[what] = d
    try:
        await probe(sshd_tmp, tmp_path, monkeypatch, env={"DT_PROBE_PATH": path})
        assert dirs["other"].exists() and dirs["older"].exists()
        assert not dirs["this"].exists()
    finally:
        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)


def _unused_pid() -> int:
    """A pid no process has now (the sweep takes its owner for gone)."""
    top = int(Path("/proc/sys/kernel/pid_max").read_text())
    return next(p for p in range(top - 1, 1, -1) if not Path(f"/proc/{p}").exists())


async def _appears(env: TmpSSHD, before: set[Path]) -> Path:
    for _ in range(400):
        new = set(ours(env)) - before
        if new and (path := new.pop() / "login.pid").exists():
            return path.parent
        await asyncio.sleep(0.05)
    raise AssertionError("the probe never made its temp dir")


async def _gone(path: Path, within_s: float) -> bool:
    for _ in range(int(within_s / 0.1)):
        if not path.exists():
            return True
        await asyncio.sleep(0.1)
    return False


def _ancestor(pid: int, name: str) -> int:
    """The nearest ancestor of ``pid`` whose command name starts with ``name``."""
    while pid > 1:
        stat = Path(f"/proc/{pid}/stat").read_text()
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if comm.startswith(name):
            return pid
        pid = ppid
    raise AssertionError(f"no {name} above the probe")
