"""Fault injection with an in-process asyncssh server on 127.0.0.1.

The server runs each command it receives locally (so a probe produces real records and the
kill channel really kills), and injects one fault: ``drop`` aborts the TCP connection after N
output lines, ``hang`` stops forwarding output after N lines and never closes the channel,
``blackhole`` never answers a session at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh
from sshd import gone, processes_with, unique_sleep

from tui.core.fixes.plan import FixPlan, Step
from tui.core.hosts import Host
from tui.core.reach import transport
from tui.core.records.transcript import Transcript, read_events
from tui.core.run.fix_executor import run_steps
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
    tmp_path: Path,
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


async def test_blackhole_session_still_returns(tmp_path: Path) -> None:
    async with faulty_host(tmp_path, "blackhole") as f:
        result = await f.session.run_script(f.host, "echo hi", deadline_s=1)
    assert result.timed_out and result.exit_status is None and result.output == ""
    assert f.server.kills == []  # no pgid was ever printed: nothing to kill
    assert "never reported a process id" in result.error


async def test_one_bad_host_never_stops_the_others(tmp_path: Path) -> None:
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


SLACK_S = 0.5  # scheduling on a loaded machine; the old client took deadline + 10 s + kill + close


def test_the_quoted_deadline_is_split_so_that_everything_ends_within_it() -> None:
    plan = transport.budget(120)
    assert (plan.remote_s, plan.kill_after_s, plan.wait_s) == (105, 5, 115)
    line = transport.command_line("sh -s", deadline_s=120)
    assert line.endswith(" detective-tui 105 5 sh -s")  # TERM at 105 s, KILL at 110 s
    for deadline in (1, 2, 5, 30, 60, 300, 3600):
        plan = transport.budget(deadline)
        assert plan.wait_s < deadline and plan.remote_s >= 1 and plan.kill_after_s >= 1
        if deadline >= 5:  # the remote timeout ends the command first, its KILL included
            assert plan.remote_s + plan.kill_after_s < plan.wait_s


async def test_a_stall_after_the_session_starts_ends_within_the_quoted_deadline(
    tmp_path: Path,
) -> None:
    n = unique_sleep()
    async with faulty_host(tmp_path, "hang", after_lines=1) as f:  # the pgid line, then no more
        started = time.monotonic()
        result = await f.session.run_script(f.host, f"echo first; sleep {n}", deadline_s=2)
        elapsed = time.monotonic() - started
        assert processes_with("sleep", n) == [] or await gone("sleep", n)
    assert elapsed <= 2 + SLACK_S
    assert result.timed_out and result.duration_s <= 2
    assert result.error.startswith("no result within 2 s; the remote process group was killed")
    assert len(f.server.kills) == 1  # the kill went over a second channel, inside the budget


async def test_a_fix_step_that_stalls_fails_within_the_deadline_its_error_quotes(
    tmp_path: Path,
) -> None:
    n = unique_sleep()
    # the step lock under tmp_path: other runs' steps on this machine never make it wait
    async with faulty_host(tmp_path, "hang", after_lines=1) as f:
        host = Host(name="faulty", ssh="faulty", env={"TMPDIR": str(tmp_path)})
        step = Step(title="stall", command=f"echo started; sleep {n}", undo=None, changes="-",
                    needs_root=False, deadline_s=3)  # fmt: skip
        plan = FixPlan(fix_id="stall", host=host, params={}, steps=(step,), verify_gone=())
        started = time.monotonic()
        (result,), error = await run_steps(f.session, host, plan)
        elapsed = time.monotonic() - started
        assert processes_with("sleep", n) == [] or await gone("sleep", n)
    assert elapsed <= 3 + SLACK_S
    assert result.status == "failed"
    assert error == "step 1 (stall) failed: timed out after 3 s"
    assert result.output == ""  # "started" was held back by the stalled channel


async def test_the_remote_timeout_stops_a_command_first_and_the_result_quotes_the_deadline() -> (
    None
):
    n = unique_sleep()
    host = Host(name="local", local=True)
    started = time.monotonic()
    async with Session() as session:
        result = await session.run_script(host, f"echo up; exec sleep {n}", deadline_s=5)
    elapsed = time.monotonic() - started
    assert result.exit_status == 124 and result.timed_out  # coreutils timeout: TERM at 2 s
    assert result.error == "stopped by its 5 s deadline"
    assert result.output == "up\n"
    assert 2 <= elapsed < 5
