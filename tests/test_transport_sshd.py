"""The transport and runner against a real OpenSSH sshd on 127.0.0.1 (and the local transport)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path

import pytest
from conftest import SSHEnv, make_ssh_env
from sshd import SSHD, gone, keygen, processes_with, start_sshd, unique_sleep

from tui.cli import main
from tui.core.facts import Facts
from tui.core.facts.build import ProbeProgress
from tui.core.hosts import Host
from tui.core.reach.hostkeys import HostKeyChanged
from tui.core.records.decision import Decision
from tui.core.records.transcript import Transcript, list_sessions, read_events
from tui.core.run.runner import Session, add_known_host, trust_host
from tui.demo.fakehost import FakeHost, build_fake_host, reference_ct200
from tui.demo.unreachable import NeverAnswers

pytestmark = pytest.mark.sshd

HOSTILE = "a b $(touch /tmp/detective-pwned) `id` ; | & 'q' \"d\" \\ \n new line $HOME"


def fake(ssh_env: SSHEnv) -> Host:
    return Host(name="fake", ssh=ssh_env.alias)


def session(ssh_env: SSHEnv, **kw: object) -> Session:
    return Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config, **kw)


async def test_run_script_over_alias(ssh_env: SSHEnv, tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "t.jsonl")
    async with session(ssh_env, transcript=transcript) as s:
        r = await s.run_script(
            fake(ssh_env),
            'printf "%s|" "$V"; echo; echo to-stderr >&2; exit 3',
            env={"V": HOSTILE},
        )
    assert r.exit_status == 3 and r.error is None and not r.timed_out
    assert r.output == f"{HOSTILE}|\nto-stderr\n"
    assert not Path("/tmp/detective-pwned").exists()
    events = read_events(tmp_path / "t.jsonl")
    (cmd,) = [e for e in events if e["kind"] == "command"]
    assert cmd["host"] == "fake" and cmd["exit_status"] == 3
    assert cmd["command"] == r.command and "exit 3" in cmd["script"]
    assert cmd["output"] == r.output


async def test_interpreters_and_stdin(ssh_env: SSHEnv) -> None:
    async with session(ssh_env) as s:
        py = await s.run_script(
            fake(ssh_env),
            "import os; print(os.environ['X'] * 2)",
            env={"X": "ab"},
            interpreter="python3 -",
        )
        fed = await s.run_script(
            fake(ssh_env), 'read line; echo "got $line"', stdin="hello\n", interpreter="sh -c"
        )
    assert py.output == "abab\n" and py.exit_status == 0
    assert fed.output == "got hello\n" and fed.exit_status == 0


async def test_user_at_host_port_target(ssh_env: SSHEnv) -> None:
    host = Host(name="adhoc", ssh=f"root@127.0.0.1:{ssh_env.sshd.port}")
    async with session(ssh_env) as s:
        r = await s.run_script(host, "id -u")
    assert r.output == "0\n"


async def test_one_connection_many_channels(ssh_env: SSHEnv) -> None:
    """More concurrent commands than sshd's MaxSessions (10) on one host: the per-connection
    channel cap queues them instead of failing, and the connection is reused."""
    host = fake(ssh_env)
    async with session(ssh_env) as s:
        results = await asyncio.gather(
            *(s.run_script(host, f"sleep 0.2; echo {i}") for i in range(24))
        )
        transport = s.pool.transport(host)
        conn = await transport.connection()
        again = await s.run_script(host, "echo again")
        assert await transport.connection() is conn
    assert [r.output for r in results] == [f"{i}\n" for i in range(24)], [
        r for r in results if not r.ok
    ]
    assert all(r.ok for r in results) and again.ok


async def test_remote_deadline_kills_the_command(ssh_env: SSHEnv) -> None:
    n = unique_sleep()
    async with session(ssh_env) as s:
        r = await s.run_script(fake(ssh_env), f"echo started; sleep {n}; echo never", deadline_s=1)
    assert r.timed_out and r.error_kind == "timeout"
    assert r.output == "started\n"
    assert await gone("sleep", n)


async def test_cancel_kills_the_remote_process_group(ssh_env: SSHEnv, tmp_path: Path) -> None:
    n = unique_sleep()
    started = asyncio.Event()
    async with session(ssh_env, transcript=Transcript(tmp_path / "t.jsonl")) as s:
        task = asyncio.create_task(
            s.run_script(
                fake(ssh_env),
                f"sleep {n} & sleep {n}; wait",  # a child and a grandchild
                on_line=lambda _line: None,
                deadline_s=600,
            )
        )
        loop = asyncio.get_running_loop()
        end = loop.time() + 15
        while not processes_with("sleep", n) and loop.time() < end:
            await asyncio.sleep(0.05)
        started.set()
        assert processes_with("sleep", n), "the remote command never started"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await gone("sleep", n)
    (event,) = [e for e in read_events(tmp_path / "t.jsonl") if e["kind"] == "command"]
    assert event["error"].startswith("cancelled")


async def test_banner_from_shell_rc_does_not_break_output(
    sshd_banner: SSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = make_ssh_env(sshd_banner, tmp_path / "ssh", monkeypatch)
    async with session(env) as s:
        r = await s.run_script(fake(env), "echo payload")
    assert r.exit_status == 0
    assert "Welcome to a very chatty host" in r.output
    assert r.output.endswith("payload\n")


async def test_unreachable_port_is_a_clear_error(ssh_env: SSHEnv) -> None:
    from sshd import free_port

    host = Host(name="nobody", ssh=f"root@127.0.0.1:{free_port()}")
    async with session(ssh_env, connect_timeout=5) as s:
        r = await s.run_script(host, "true")
        p = await s.probe(Host(name="demo-down", ssh="x", transport=NeverAnswers))
    assert r.exit_status is None and r.error_kind == "unreachable"
    assert "127.0.0.1" in r.error and "cannot connect" in r.error
    assert p.error_kind == "unreachable" and p.error == "no answer (simulated demo host)"
    assert not p.reachable and p.facts is None


async def test_unknown_key_is_refused_then_trusted(ssh_env: SSHEnv) -> None:
    ssh_env.known_hosts.write_text("")
    host = fake(ssh_env)
    async with session(ssh_env) as s:
        r = await s.run_script(host, "true")
        p = await s.probe(host)
    fp = ssh_env.sshd.host_fingerprint
    assert r.error_kind == "hostkey-unknown" and r.exit_status is None
    assert fp in r.error and "detective-tui trust fakehost" in r.error
    assert p.error_kind == "hostkey-unknown" and p.hostkey is not None
    assert p.hostkey.fingerprint == fp and p.hostkey.key_type == "ssh-ed25519"

    key_type, fingerprint = info = await trust_host(
        host, known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config
    )
    assert (key_type, fingerprint) == ("ssh-ed25519", fp)
    assert ssh_env.known_hosts.read_text() == ""  # trust_host writes nothing
    assert add_known_host(host, info, ssh_env.known_hosts) is True
    assert ssh_env.known_hosts.read_text().startswith(f"[127.0.0.1]:{ssh_env.sshd.port} ")
    assert add_known_host(host, info, ssh_env.known_hosts) is False  # already there
    async with session(ssh_env) as s:
        assert (await s.run_script(host, "echo ok")).output == "ok\n"


async def test_changed_key_is_refused_and_never_trusted(ssh_env: SSHEnv, tmp_path: Path) -> None:
    other = tmp_path / "other_key"
    keygen(other)
    pub = other.with_suffix(".pub").read_text().split()[:2]
    stale = f"[127.0.0.1]:{ssh_env.sshd.port} {' '.join(pub)}\n"
    ssh_env.known_hosts.write_text(stale)
    host = fake(ssh_env)
    async with session(ssh_env) as s:
        p = await s.probe(host)
    assert p.error_kind == "hostkey-changed" and p.facts is None
    assert "HOST KEY CHANGED" in p.error and ssh_env.sshd.host_fingerprint in p.error
    assert "ssh-keygen -R" in p.error
    with pytest.raises(HostKeyChanged):
        await trust_host(host, known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config)
    assert ssh_env.known_hosts.read_text() == stale


def test_trust_cli(ssh_env: SSHEnv, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ssh_env.known_hosts.write_text("")
    # no terminal and no --yes: refuse, write nothing
    assert main(["trust", "fakehost"]) == 3
    captured = capsys.readouterr()
    assert ssh_env.sshd.host_fingerprint in captured.out and "--yes" in captured.err
    assert ssh_env.known_hosts.read_text() == ""
    assert main(["trust", "fakehost", "--yes"]) == 0
    assert "Added [127.0.0.1]:" in capsys.readouterr().out
    assert main(["trust", "fakehost", "--yes"]) == 0
    assert "already trusted" in capsys.readouterr().out
    assert main(["trust", "local"]) == 3
    (session,) = list_sessions()  # the decision is in the transcript
    (event,) = [e for e in read_events(session) if e["kind"] == "decision"]
    decision = Decision.from_event(event)
    assert (decision.action, decision.answer) == ("trust-host-key", "yes")
    assert decision.host == "fakehost"
    assert decision.details["fingerprint"] == ssh_env.sshd.host_fingerprint


def test_trust_cli_refuses_changed_key(
    ssh_env: SSHEnv, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "other_key"
    keygen(other)
    stale = f"[127.0.0.1]:{ssh_env.sshd.port} " + " ".join(
        other.with_suffix(".pub").read_text().split()[:2]
    )
    ssh_env.known_hosts.write_text(stale + "\n")
    assert main(["trust", "fakehost", "--yes"]) == 2
    assert "HOST KEY CHANGED" in capsys.readouterr().err
    assert ssh_env.known_hosts.read_text() == stale + "\n"


async def test_restarted_host_with_new_key_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same address comes back with a new host key (a reinstall, or an attacker)."""
    first = start_sshd(tmp_path / "first")
    try:
        env = make_ssh_env(first, tmp_path / "ssh", monkeypatch)
        async with session(env) as s:
            assert (await s.run_script(fake(env), "true")).ok
    finally:
        first.stop()
    second = start_sshd(tmp_path / "second")
    try:
        config, _ = second.write_client_files(tmp_path / "ssh2")
        env2 = SSHEnv(second, config, env.known_hosts)  # old known_hosts, new port + key
        env.known_hosts.write_text(
            env.known_hosts.read_text().replace(f":{first.port} ", f":{second.port} ")
        )
        async with session(env2) as s:
            r = await s.run_script(fake(env2), "true")
        assert r.error_kind == "hostkey-changed"
    finally:
        second.stop()


async def test_local_transport_same_semantics(tmp_path: Path) -> None:
    n = unique_sleep()
    local = Host(name="local", local=True)
    async with Session() as s:
        r = await s.run_script(local, 'printf "%s" "$V"; exit 4', env={"V": HOSTILE})
        slow = await s.run_script(local, f"sleep {n}", deadline_s=1)
        m = unique_sleep()
        task = asyncio.create_task(s.run_script(local, f"sleep {m} & sleep {m}; wait"))
        loop = asyncio.get_running_loop()
        end = loop.time() + 10
        while len(processes_with("sleep", m)) < 2 and loop.time() < end:
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert r.exit_status == 4 and r.output == HOSTILE + "\n"  # output is whole lines
    assert slow.timed_out and await gone("sleep", n)
    assert await gone("sleep", m)
    assert os.getpgid(0) == os.getpgrp()  # we never killed our own group


# -- the real probe over SSH, on fake hosts -------------------------------------------------


def fake_host(tree: FakeHost, name: str, *, ssh: str | None = None) -> Host:
    """An inventory host for a fake host tree: over SSH when ``ssh`` is given, else local."""
    return Host(
        name=name,
        ssh=ssh,
        local=ssh is None,
        root=str(tree.root),
        env=tree.env,
        python=tree.pythons,
        simulate="tree",  # its stand-in programs may run (the trust rule runs none otherwise)
    )


def comparable(facts: Facts) -> dict:
    data = facts.to_json()
    data["probe"].pop("duration_s")
    return data


async def test_probe_over_ssh_equals_probe_over_local(ssh_env: SSHEnv, tmp_path: Path) -> None:
    tree = build_fake_host(tmp_path / "ct200", reference_ct200(with_cuda13=True))
    async with session(ssh_env) as s:
        over_ssh, local = await s.probe_many(
            [fake_host(tree, "ct200", ssh="fakehost"), fake_host(tree, "ct200-local")]
        )
    assert over_ssh.ok, over_ssh.error
    assert local.ok, local.error
    assert comparable(over_ssh.facts) == comparable(local.facts)


async def test_reference_host_facts_over_real_ssh(ssh_env: SSHEnv, tmp_path: Path) -> None:
    tree = build_fake_host(tmp_path / "ct200", reference_ct200())
    progress: list[object] = []
    async with session(ssh_env) as s:
        result = await s.probe(
            fake_host(tree, "ct200", ssh="fakehost"), lambda _h, item: progress.append(item)
        )
    assert result.ok, result.error
    facts = result.facts
    assert facts is not None and facts.probe.complete
    assert facts.driver.state == "ok"
    assert (facts.driver.driver_version, facts.driver.driver_cuda) == ("580.95.05", "13.0")
    assert len(facts.gpus) == 8
    assert {g.compute_cap for g in facts.gpus} == {"12.0"}
    assert {g.name for g in facts.gpus} == {"NVIDIA RTX PRO 6000 Blackwell Server Edition"}
    tk = facts.toolkit_at("/usr/local/cuda-12.8")
    assert tk is not None and (tk.version, tk.full_version) == ("12.8", "12.8.93")
    assert [t.home for t in facts.toolkits] == ["/usr/local/cuda-12.8"]
    venv = [p for p in facts.pythons if p.path == "/root/venv_sglang211/bin/python3"]
    assert {p.source for p in venv} == {"inventory", "process"}  # one per context it runs in
    for py in venv:
        assert (py.torch_version, py.torch_cuda) == ("2.9.1+cu130", "13.0")
        assert py.flashinfer_version == "0.6.8"
    ssh_ctx = facts.contexts[0]
    assert ssh_ctx.kind == "ssh" and ssh_ctx.vars["CUDA_HOME"] == "/usr/local/cuda-12.8"
    (server,) = [c for c in facts.contexts if c.kind == "process"]
    assert server.unit == "sglang.service"
    assert server.vars["CUDA_HOME"] == "/usr/local/cuda-12.8"
    steps = [p for p in progress if isinstance(p, ProbeProgress)]
    assert steps and steps[-1].done == steps[-1].total


async def test_banner_host_gives_the_same_facts(
    ssh_env: SSHEnv, sshd_banner: SSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = build_fake_host(tmp_path / "ct200", reference_ct200())
    async with session(ssh_env) as s:
        plain = await s.probe(fake_host(tree, "ct200", ssh="fakehost"))
    chatty_env = make_ssh_env(sshd_banner, tmp_path / "chatty", monkeypatch)
    async with session(chatty_env) as s:
        chatty = await s.probe(fake_host(tree, "ct200", ssh="fakehost"))
    assert chatty.ok, chatty.error
    assert "Welcome to a very chatty host" in chatty.raw_lines
    assert comparable(chatty.facts) == comparable(plain.facts)


async def test_hung_nvidia_smi_hits_its_step_deadline_and_the_rest_arrives(
    ssh_env: SSHEnv, tmp_path: Path
) -> None:
    spec = reference_ct200()
    spec = dataclasses.replace(spec, driver=dataclasses.replace(spec.driver, hang=True))
    tree = build_fake_host(tmp_path / "hung", spec)
    async with session(ssh_env, step_timeout_s=1, probe_deadline_s=60) as s:
        result = await s.probe(fake_host(tree, "hung", ssh="fakehost"))
    assert result.ok, result.error
    facts = result.facts
    assert facts is not None and facts.probe.complete
    assert facts.driver.state == "timeout"
    assert any("nvidia-smi" in step for step in facts.probe.timed_out)
    assert facts.toolkit_at("/usr/local/cuda-12.8") is not None
    assert any(p.flashinfer_version == "0.6.8" for p in facts.pythons)


async def test_stdin_needs_an_interpreter_that_takes_the_script_as_argument() -> None:
    async with Session() as s:
        with pytest.raises(ValueError, match="'sh -c' or 'python3 -c'"):
            await s.run_script(Host(name="local", local=True), "cat", stdin="data")
        r = await s.run_script(
            Host(name="local", local=True), "cat", stdin="data\n", interpreter="sh -c"
        )
    assert r.output == "data\n"


def jump_config(ssh_env: SSHEnv, bastion_port: int, suffix: str = "") -> None:
    """Add ``bastion<suffix>`` (a hop) and ``jumped<suffix>`` (reached through it)."""
    key = ssh_env.sshd.client_key
    with ssh_env.ssh_config.open("a") as fh:
        fh.write(
            f"Host bastion{suffix}\n  HostName 127.0.0.1\n  Port {bastion_port}\n  User root\n"
            f"  IdentityFile {key}\n"
            f"Host jumped{suffix}\n  HostName 127.0.0.1\n  Port {ssh_env.sshd.port}\n"
            f"  User root\n  IdentityFile {key}\n  ProxyJump bastion{suffix}\n"
        )


async def test_proxyjump_from_ssh_config(ssh_env: SSHEnv) -> None:
    jump_config(ssh_env, ssh_env.sshd.port)  # the sshd is its own bastion
    async with session(ssh_env) as s:
        r = await s.run_script(Host(name="jumped", ssh="jumped"), "echo through")
    assert r.output == "through\n", r.error


async def test_proxyjump_hop_is_checked_like_any_host(ssh_env: SSHEnv) -> None:
    from sshd import free_port

    jump_config(ssh_env, free_port(), "-down")
    jump_config(ssh_env, ssh_env.sshd.port, "-new")
    async with session(ssh_env, connect_timeout=5) as s:
        down = await s.run_script(Host(name="j", ssh="jumped-down"), "true")
    assert down.error_kind == "unreachable" and "via ProxyJump bastion-down" in down.error
    ssh_env.known_hosts.write_text("")
    async with session(ssh_env) as s:
        unknown = await s.run_script(Host(name="j", ssh="jumped-new"), "true")
    assert unknown.error_kind == "hostkey-unknown"
    assert "detective-tui trust bastion-new" in unknown.error


def test_unknown_vs_changed_is_decided_from_known_hosts(tmp_path: Path) -> None:
    """No network: the refusal for an offered key, from what known_hosts says about the host
    (plain, hashed by ``ssh-keygen -H``, or only a ``@cert-authority`` line)."""
    import subprocess

    import asyncssh

    from tui.core.reach.hostkeys import HostKeyInfo, HostKeyUnknown, refusal

    offered = asyncssh.generate_private_key("ssh-ed25519").convert_to_public()
    other = asyncssh.generate_private_key("ssh-ed25519").convert_to_public()
    info = HostKeyInfo(host="gpu1.example", port=2222, addr="10.0.0.5", key=offered)
    known = tmp_path / "known_hosts"
    other_line = other.export_public_key().decode().strip()

    known.write_text(f"[elsewhere]:2222 {other_line}\n")
    assert isinstance(refusal("gpu1", info, known), HostKeyUnknown)
    known.write_text(f"@cert-authority *.example {other_line}\n")
    assert isinstance(refusal("gpu1", info, known), HostKeyUnknown)
    known.write_text(f"[gpu1.example]:2222 {other_line}\n")
    changed = refusal("gpu1", info, known)
    assert isinstance(changed, HostKeyChanged) and "ssh-keygen -R '[gpu1.example]:2222'" in str(
        changed
    )
    subprocess.run(["ssh-keygen", "-H", "-f", str(known)], check=True, capture_output=True)
    assert "gpu1.example" not in known.read_text()  # hashed
    assert isinstance(refusal("gpu1", info, known), HostKeyChanged)
    with pytest.raises(HostKeyChanged):
        add_known_host(Host(name="gpu1", ssh="gpu1"), info, known)
