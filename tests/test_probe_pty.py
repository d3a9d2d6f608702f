"""The probe under a terminal (issue 10 item 9): run through OpenSSH's own client with
``ssh -tt`` (a PTY, as Ansible, ``srun --pty`` and ``kubectl exec -t`` give), the background
login shell runs in a session of its own, so it neither stops on SIGTTIN nor escapes the step
deadline or the kill path. Against the real loopback sshd."""

from __future__ import annotations

import asyncio
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import _start, home_with_bashrc, make_ssh_env
from sshd import SSHD, gone, processes_with, unique_sleep

from probes import probe_env, probe_script
from tui.core.facts import Facts
from tui.core.facts.build import facts_from_output
from tui.core.hosts import Host
from tui.core.reach.transport import TMPDIR_MARK
from tui.core.run.runner import Session

SSH = shutil.which("ssh")
pytestmark = pytest.mark.skipif(SSH is None, reason="OpenSSH's ssh client is not installed")

STEP_S = 8


def probe_over_ssh_tt(server: SSHD, tmp_path: Path, *, tools: Path | None = None) -> str:
    """The probe script run as a file by ``ssh -tt`` (stdout is the PTY's output)."""
    config, known = server.write_client_files(tmp_path / "client")
    script = tmp_path / "probe.sh"
    script.write_text(probe_script())
    env = probe_env([], step_timeout_s=STEP_S)
    if tools is not None:
        env["PATH"] = str(tools)
    remote = "env " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
    remote += f" sh {shlex.quote(str(script))}"
    proc = subprocess.run(
        [SSH, "-tt", "-F", str(config), "-o", f"UserKnownHostsFile={known}", "-o",
         "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "fakehost", remote],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode(errors="replace")


def login(facts: Facts):
    return next(c for c in facts.contexts if c.kind == "login")


def test_login_shell_under_a_pty_does_not_stop(sshd: SSHD, tmp_path: Path) -> None:
    """Before: bash -ilc stopped on SIGTTIN, the step deadline killed it, and the login
    context had no variables (+STEP_S seconds per host)."""
    facts = facts_from_output(probe_over_ssh_tt(sshd, tmp_path))
    assert facts.probe.complete, facts.probe
    assert "login shell" not in facts.probe.timed_out, facts.probe
    assert not [e for e in facts.probe.errors if e.startswith("login shell")], facts.probe
    assert login(facts).label == "login shell (bash -ilc)"
    assert login(facts).vars.get("PATH"), login(facts)


def tools_without_setsid(tmp_path: Path, *extra: str) -> Path:
    """A PATH of the tools a minimal image has, without setsid."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("sh", "bash", "env", "timeout", "mktemp", "rm", "cat", "id", "uname", "grep", "ls",
                 "tr", "readlink", "od", "head", "sleep", "kill", *extra):  # fmt: skip
        found = shutil.which(name, path="/usr/bin:/bin")  # the system's (no pyenv shims)
        if found:
            (tools / name).symlink_to(found)
    return tools


def test_without_setsid_the_hosts_python_detaches_it(sshd: SSHD, tmp_path: Path) -> None:
    """No setsid on the host (a minimal image): the host's python3 starts the session."""
    tools = tools_without_setsid(tmp_path, "python3")
    facts = facts_from_output(probe_over_ssh_tt(sshd, tmp_path, tools=tools))
    assert "login shell" not in facts.probe.timed_out, facts.probe
    assert login(facts).vars.get("PATH"), login(facts)


def test_with_nothing_to_detach_it_a_plain_login_shell_is_read(sshd: SSHD, tmp_path: Path) -> None:
    """Neither setsid nor Python: under the terminal the probe reads ``bash -lc`` (no SIGTTIN,
    no stall) and says that the interactive rc file was not read."""
    facts = facts_from_output(
        probe_over_ssh_tt(sshd, tmp_path, tools=tools_without_setsid(tmp_path))
    )
    assert facts.probe.complete and "login shell" not in facts.probe.timed_out, facts.probe
    assert login(facts).label == "login shell (bash -lc)" and login(facts).vars.get("PATH")
    (error,) = facts.probe.errors
    assert error.startswith("login shell: no setsid (or Python)"), error


@pytest.fixture(scope="module")
def sshd_slow_login(tmp_path_factory: pytest.TempPathFactory):
    """An sshd whose sessions' ~/.bashrc hangs (a unique ``sleep``) when read by the probe."""
    n = unique_sleep()
    rc = f"case $- in *i*) sleep {n} ;; esac\n"
    home = home_with_bashrc(tmp_path_factory, "slow-home", rc)
    (home / ".profile").write_text(rc)  # what a login shell reads
    for server in _start(tmp_path_factory, "sshd-slow", extra=f"SetEnv HOME={home}\n"):
        yield server, n


def test_a_hanging_rc_file_under_a_pty_still_meets_the_deadline(
    sshd_slow_login: tuple[SSHD, str], tmp_path: Path
) -> None:
    server, n = sshd_slow_login
    facts = facts_from_output(probe_over_ssh_tt(server, tmp_path))
    assert facts.probe.complete and "login shell" in facts.probe.timed_out, facts.probe
    assert processes_with("sleep", n) == [] or asyncio.run(gone("sleep", n)), (
        "the login shell's sleep outlived the step deadline"
    )


async def test_a_cancelled_probe_kills_the_detached_login_shell(
    sshd_slow_login: tuple[SSHD, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kill path (a cancelled probe) reaches the login shell in its own session, and the
    probe's temp dir is removed."""
    server, n = sshd_slow_login
    env = make_ssh_env(server, tmp_path / "ssh", monkeypatch)
    host = Host(name="slow", ssh=env.alias)
    seen: list[str] = []
    async with Session(
        known_hosts=env.known_hosts, ssh_config=env.ssh_config, step_timeout_s=300
    ) as session:
        task = asyncio.create_task(session.probe(host, lambda _h, line: seen.append(str(line))))
        for _ in range(400):
            if processes_with("sleep", n):
                break
            await asyncio.sleep(0.05)
        assert processes_with("sleep", n), "the slow rc file never ran"
        (tmpdir,) = [Path(ln.split(" ", 1)[1]) for ln in seen if ln.startswith(TMPDIR_MARK)]
        assert tmpdir.is_dir()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert await gone("sleep", n), "the detached login shell survived the kill path"
    for _ in range(200):
        if not tmpdir.exists():
            break
        await asyncio.sleep(0.05)
    assert not tmpdir.exists(), "the probe's temp dir survived the kill path"


def test_with_nothing_to_detach_and_no_terminal_the_probe_goes_on(tmp_path: Path) -> None:
    """The terminal check itself must not end the probe where there is no terminal (a failed
    redirection of a special built-in ends a POSIX shell)."""
    env = {"PATH": str(tools_without_setsid(tmp_path)), "HOME": str(tmp_path), "SHELL": "/bin/bash"}
    env |= probe_env([], step_timeout_s=STEP_S)
    proc = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env,
        timeout=120, start_new_session=True,
    )  # fmt: skip
    facts = facts_from_output(proc.stdout)
    assert facts.probe.complete and facts.probe.errors == (), (facts.probe, proc.stderr)
    assert login(facts).vars.get("PATH"), login(facts)
