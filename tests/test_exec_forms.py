"""The ``exec:`` forms of issue 11 end to end: ``srun … sh -c {script}`` through a recording
``srun`` stand-in, and ``ssh -T {name} sh -c {script}`` through the real OpenSSH client against
the loopback sshd (ssh re-joins its words and the remote shell splits them again, so there
``{script}`` is shell-quoted). Same facts as the local probe, the script and its environment
arrive byte for byte, the remote deadline holds and cancel kills the remote group, through
each. Where the remote command begins in an ssh command line, as ssh reads it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SSHEnv
from exec_engines import (
    SRUN,
    calls,
    cancel_after_start,
    comparable,
    install_shim,
    ssh_client_config,
    tree_host,
)
from sshd import gone, unique_sleep

from tui.core.hosts import SCRIPT_WORD, Host
from tui.core.reach.exec_transport import MAX_ARG_BYTES, exec_argv
from tui.core.reach.inventory import exec_template
from tui.core.run.runner import Session
from tui.core.ssh_argv import remote_command_start
from tui.demo.fakehost import build_fake_host, reference_ct200

ODD = "a b $(touch /tmp/detective-pwned) `id` ; 'q' '\\'' \"d\" \\ \n new line * ~ # %s"


@pytest.fixture
def srun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    return install_shim(tmp_path, "srun", SRUN, monkeypatch), tmp_path / "srun.log"


def node(shim: Path, name: str = "ct200") -> Host:
    words = (str(shim), "--jobid=123", "--overlap", "-w", name, "-N1", "-n1", "sh", "-c")
    return Host(name=name, exec=(*words, SCRIPT_WORD))


@pytest.fixture(params=["srun", "ssh sh -c", "ssh, options after the destination"])
def engine(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Host, Path | None]:
    """A host reached through one of the forms, and the stand-in's log (None for ssh)."""
    if request.param == "srun":
        shim = install_shim(tmp_path, "srun", SRUN, monkeypatch)
        return node(shim), tmp_path / "srun.log"
    ssh_env: SSHEnv = request.getfixturevalue("ssh_env")
    config = str(ssh_client_config(ssh_env))
    if request.param == "ssh sh -c":
        words = ("ssh", "-F", config, "-T", ssh_env.alias, "sh", "-c", SCRIPT_WORD)
    else:
        words = ("ssh", "-F", config, ssh_env.alias, "-T", "--", "sh", "-c", SCRIPT_WORD)
    return Host(name="ct200", exec=words), None


async def test_probe_equals_local(engine, tmp_path: Path) -> None:
    host, log = engine
    tree = build_fake_host(tmp_path / "ct200", reference_ct200(with_cuda13=True))
    local = Host(
        name="l",
        local=True,
        root=str(tree.root),
        simulate="tree",
        env=tree.env,
        python=tree.pythons,
    )
    async with Session() as s:
        over_exec, here = await s.probe_many([tree_host(tree, host), local])
    assert over_exec.ok, over_exec.error
    assert comparable(over_exec.facts) == comparable(here.facts)
    if log is not None:  # srun got the whole program as its last argument, as it is
        (argv,) = calls(log)
        assert argv[:7] == ["--jobid=123", "--overlap", "-w", "ct200", "-N1", "-n1", "sh"]
        assert argv[7] == "-c" and argv[8].startswith("printf '%s\\n' '@@detective-tui-exec")
        assert len(argv) == 9


async def test_script_and_env_arrive_exactly(engine) -> None:
    host, _log = engine
    script = "printf '%s|' \"$V\" \"$#\"; echo; printf '%s\\n' 'it'\\''s'; exit 3"
    async with Session() as s:
        r = await s.run_script(host, script, env={"V": ODD})
    assert (r.exit_status, r.output, r.error) == (3, f"{ODD}|0|\nit's\n", None)
    assert not Path("/tmp/detective-pwned").exists()


async def test_remote_deadline(engine) -> None:
    host, _log = engine
    n = unique_sleep()
    async with Session() as s:
        r = await s.run_script(host, f"echo started; sleep {n}; echo never", deadline_s=1)
    assert r.timed_out and r.error_kind == "timeout" and r.output == "started\n"
    assert await gone("sleep", n)


async def test_cancel_kills_the_remote_group(engine) -> None:
    host, log = engine
    n = unique_sleep()
    async with Session() as s:
        await cancel_after_start(s, host, n)
    assert await gone("sleep", n)
    if log is not None:  # the kill went through a second srun into the same node
        run, kill = calls(log)
        assert kill[:8] == run[:8] and kill[8].startswith("kill -TERM -")


async def test_srun_refusing_the_node_is_unreachable_with_its_message(srun) -> None:
    shim, _log = srun
    async with Session() as s:
        result = await s.probe(node(shim, "missing"))
    assert result.error_kind == "unreachable" and not result.reachable
    assert "exited with status 1 before the script started" in (result.error or "")
    assert "Invalid node name specified" in (result.error or "")


async def test_the_quoted_size_is_what_counts_with_ssh(tmp_path: Path) -> None:
    """Quoting makes each ' five bytes: a script that fits as a raw argument can be too large
    inside ssh's remote command; it is refused before ssh runs."""
    script = "#" + "'" * 30_000 + "\n"
    ssh = Host(name="h", exec=("ssh", "-T", "h", "sh", "-c", SCRIPT_WORD))
    assert len(exec_argv(ssh.exec, script)[-1]) > MAX_ARG_BYTES > len(script)
    async with Session() as s:
        r = await s.run_script(ssh, script)
    assert r.exit_status is None and "over Linux's limit of 131072 bytes" in (r.error or "")


# -- where ssh's remote command begins ---------------------------------------------------------

SSH_COMMANDS = {
    "ssh -T h sh -c S": 3,
    "ssh h S": 2,
    "ssh -F cfg -o BatchMode=yes -i key -p 2222 -l root h sh -c S": 12,
    "ssh -oBatchMode=yes -Tq h S": 4,
    "ssh -p2tN h S": 3,  # a letter with a value takes the rest of its word: port "2tN"
    "ssh -Tp 22 h S": 4,
    "ssh h -T -o X=y sh -c S": 5,  # options after the destination, as ssh.c reads them again
    "ssh h -- -T S": 3,  # `--` after the destination ends them: -T is the command
    "ssh -- h -T S": 3,  # `--` before it: nothing after the destination is an option
    "ssh -T -J jump -W x:1 h S": 7,
    "ssh -T": None,
    "ssh h": 2,
}


@pytest.mark.parametrize(("line", "start"), list(SSH_COMMANDS.items()), ids=list(SSH_COMMANDS))
def test_remote_command_start(line: str, start: int | None) -> None:
    assert remote_command_start(line.split()) == start


@pytest.mark.parametrize(
    ("template", "quoted"),
    [
        ("kubectl exec -i -n ml {name} -- sh -c {script}", False),
        ("srun --jobid=123 --overlap -w {name} -N1 -n1 sh -c {script}", False),
        ("ssh -T {name} sh -c {script}", True),
        ("/usr/bin/ssh -T {name} -- sudo -n sh -c {script}", True),
        ("ssh -T {name} {script}", False),  # the remote shell runs it as its command line
        ("ssh -T -o ConnectTimeout=5 {name} -- {script}", False),
    ],
)
def test_script_quoted_only_where_a_remote_shell_splits_it(template: str, quoted: bool) -> None:
    program = "printf '%s\\n' it's\nexit 3\n"
    argv = exec_argv(exec_template(template, "gpu1"), program)
    assert argv[-1] == ("'printf '\"'\"'%s\\n'\"'\"' it'\"'\"'s\nexit 3\n'" if quoted else program)


@pytest.mark.parametrize("template", ["ssh {script}", "ssh -T -o {script} h", "ssh -l {script} h"])
def test_ssh_script_word_must_be_in_the_remote_command(template: str) -> None:
    with pytest.raises(ValueError, match="after the destination"):
        exec_template(template, "gpu1")
