"""Fault injection with an in-process asyncssh server on 127.0.0.1.

The server runs each command it receives locally (so a probe produces real records and the
kill channel really kills), and injects one fault: ``drop`` aborts the TCP connection after N
output lines, ``hang`` stops forwarding output after N lines and never closes the channel,
``blackhole`` never answers a session at all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh
import pytest
from sshd import gone, processes_with, unique_sleep

from tui.core.hosts import Host
from tui.core.reach import transport
from tui.core.records.transcript import Transcript, read_events
from tui.core.run.runner import Session
from tui.demo.unreachable import NeverAnswers


class _NoAuth(asyncssh.SSHServer):
    def begin_auth(self, username: str) -> bool:
        return False


@dataclass
class FaultServer:
    mode: str
    after_lines: int
    kills: list[str] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    children: list[asyncio.subprocess.Process] = field(default_factory=list)

    async def handle(self, process: asyncssh.SSHServerProcess) -> None:
        command = process.command or ""
        if command.startswith("kill "):
            self.kills.append(command)
            killer = await asyncio.create_subprocess_exec("sh", "-c", command)
            process.exit(await killer.wait())
            return
        if self.mode == "blackhole":
            await self.release.wait()
            return
        child = await asyncio.create_subprocess_exec(
            "sh",
            "-c",
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        self.children.append(child)
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(await process.stdin.read())
        child.stdin.close()
        sent = 0
        async for line in child.stdout:
            if sent == self.after_lines and self.mode == "drop":
                process.channel.get_connection().abort()
                return
            if sent == self.after_lines and self.mode == "hang":
                await self.release.wait()
                return
            process.stdout.write(line)
            sent += 1
        process.exit(await child.wait())


@dataclass
class Faulty:
    server: FaultServer
    session: Session
    host: Host


@contextlib.asynccontextmanager
async def faulty_host(
    tmp_path: Path, mode: str, after_lines: int = 0, **session_kw: object
) -> AsyncIterator[Faulty]:
    fault = FaultServer(mode, after_lines)
    key = asyncssh.generate_private_key("ssh-ed25519")
    server = await asyncssh.create_server(
        _NoAuth,
        "127.0.0.1",
        0,
        server_host_keys=[key],
        process_factory=fault.handle,
        encoding=None,
    )
    port = server.sockets[0].getsockname()[1]
    config = tmp_path / "ssh_config"
    config.write_text(f"Host faulty\n  HostName 127.0.0.1\n  Port {port}\n  User root\n")
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{port} {key.export_public_key().decode()}")
    session = Session(known_hosts=known, ssh_config=config, **session_kw)  # type: ignore[arg-type]
    try:
        yield Faulty(fault, session, Host(name="faulty", ssh="faulty"))
    finally:
        fault.release.set()
        await session.close()
        server.close()
        await server.wait_closed()
        for child in fault.children:
            if child.returncode is None:
                child.kill()
                await child.wait()


@pytest.fixture
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client waits deadline + KILL_AFTER_S + CLIENT_GRACE_S; keep fault tests short."""
    monkeypatch.setattr(transport, "KILL_AFTER_S", 0.2)
    monkeypatch.setattr(transport, "CLIENT_GRACE_S", 0.2)


async def test_connection_dropped_mid_probe(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "t.jsonl")
    async with faulty_host(tmp_path, "drop", after_lines=6, transcript=transcript) as f:
        result = await f.session.probe(f.host)
        other = await f.session.probe(Host(name="local", local=True))
    assert result.error_kind == "probe-failed"
    assert "connection" in result.error and "mid-probe" in result.error
    assert result.reachable
    assert result.facts is not None and not result.facts.probe.complete
    assert 0 < len(result.raw_lines) <= 6
    assert other.ok and other.facts is not None and other.facts.probe.complete
    probe_events = [e for e in read_events(tmp_path / "t.jsonl") if e["kind"] == "probe"]
    assert [e["error_kind"] for e in probe_events] == ["probe-failed", None]


async def test_stalled_channel_hits_the_deadline_and_kills_over_a_second_channel(
    tmp_path: Path, short_grace: None
) -> None:
    n = unique_sleep()
    async with faulty_host(tmp_path, "hang", after_lines=2) as f:  # the pgid line, "first"
        result = await f.session.run_script(
            f.host, f"echo first; echo second; sleep {n}", deadline_s=1
        )
        assert processes_with("sleep", n) == [] or await gone("sleep", n)
    assert result.timed_out and result.error_kind == "timeout"
    assert result.output == "first\n"
    assert "the remote process group was killed" in result.error
    (kill,) = f.server.kills
    pgid = f.server.children[0].pid  # the server's child is its own group leader
    assert kill.startswith(f"kill -TERM -{pgid} ")  # no "--": dash's kill refuses it


async def test_blackhole_session_still_returns(tmp_path: Path, short_grace: None) -> None:
    async with faulty_host(tmp_path, "blackhole") as f:
        result = await f.session.run_script(f.host, "echo hi", deadline_s=1)
    assert result.timed_out and result.exit_status is None and result.output == ""
    assert f.server.kills == []  # no pgid was ever printed: nothing to kill
    assert "never reported a process id" in result.error


async def test_one_bad_host_never_stops_the_others(tmp_path: Path, short_grace: None) -> None:
    async with faulty_host(tmp_path, "drop", after_lines=2, probe_deadline_s=30) as f:
        hosts = [
            f.host,
            Host(name="local", local=True),
            Host(name="down", ssh="x", transport=NeverAnswers),
            Host(name="nowhere", ssh="root@127.0.0.1:1"),
        ]
        seen: list[str] = []
        results = await f.session.probe_many(hosts, on_result=lambda r: seen.append(r.host.name))
    assert [r.host.name for r in results] == ["faulty", "local", "down", "nowhere"]
    assert [r.error_kind for r in results] == ["probe-failed", None, "unreachable", "unreachable"]
    assert sorted(seen) == sorted(r.host.name for r in results)


async def test_a_dropped_connection_is_replaced_on_the_next_command(tmp_path: Path) -> None:
    async with faulty_host(tmp_path, "drop", after_lines=1) as f:
        dropped = await f.session.run_script(f.host, "echo one; echo two")
        f.server.mode = "none"
        again = await f.session.run_script(f.host, "echo one; echo two")
    assert dropped.error_kind == "connection-lost" and dropped.exit_status is None
    assert again.ok and again.output == "one\ntwo\n"
