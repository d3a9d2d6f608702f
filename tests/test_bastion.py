"""Hosts behind a bastion, against real sshd instances on 127.0.0.1: one connection to the
bastion for all of them, and connections that sshd closes at start-up (``MaxStartups``) retried
with the likely cause named when they keep failing. Connections are counted from sshd's own log
(``LogLevel VERBOSE``: a line per connection, another per connection dropped past MaxStartups).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from conftest import home_with_bashrc
from sshd import SSHD, sshd_available, start_sshd

from tui.cli import main
from tui.core.hosts import Host
from tui.core.run.runner import Session
from tui.demo import fakehost

pytestmark = pytest.mark.sshd

STOCK_MAX_STARTUPS = "MaxStartups 10:30:100\n"  # sshd's default, written out


def _server(tmp_path_factory: pytest.TempPathFactory, name: str, extra: str = "") -> Iterator[SSHD]:
    reason = sshd_available()
    if reason:
        pytest.skip(f"no loopback sshd: {reason}")
    home = home_with_bashrc(tmp_path_factory, f"{name}-home", "")
    server = start_sshd(
        tmp_path_factory.mktemp(name), extra=f"{extra}SetEnv HOME={home}\n", log_level="VERBOSE"
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def bastion(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    yield from _server(tmp_path_factory, "bastion", STOCK_MAX_STARTUPS)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    yield from _server(tmp_path_factory, "target", STOCK_MAX_STARTUPS)


@pytest.fixture(scope="module")
def narrow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    """An sshd that takes at most 2 unauthenticated connections at once."""
    yield from _server(tmp_path_factory, "narrow", "MaxStartups 2\n")


def seen(server: SSHD) -> tuple[int, int, int]:
    """(connections, dropped past MaxStartups, authenticated) in the sshd's log so far."""
    log = (server.dir / "sshd.log").read_text(errors="replace")
    return (
        log.count("Connection from ") + log.count(" past MaxStartups"),
        log.count(" past MaxStartups"),
        log.count("Accepted publickey for "),
    )


def since(server: SSHD, before: tuple[int, int, int]) -> tuple[int, int, int]:
    now = seen(server)
    return (now[0] - before[0], now[1] - before[1], now[2] - before[2])


def _block(alias: str, server: SSHD, jump: str | None = None) -> str:
    return (
        f"Host {alias}\n  HostName 127.0.0.1\n  Port {server.port}\n  User root\n"
        f"  IdentityFile {server.client_key}\n  IdentitiesOnly yes\n"
        + (f"  ProxyJump {jump}\n" if jump else "")
    )


def write_config(
    dest: Path, bastion: SSHD, target: SSHD, n: int, prefix: str = "node"
) -> tuple[Path, Path]:
    """An ssh_config: ``bastion``, and ``<prefix>0``… ``<prefix>{n-1}`` reaching ``target``
    through it; a known_hosts trusting both."""
    dest.mkdir(parents=True, exist_ok=True)
    config = dest / "ssh_config"
    config.write_text(
        _block("bastion", bastion)
        + "".join(_block(f"{prefix}{i}", target, "bastion") for i in range(n))
    )
    known = dest / "known_hosts"
    known.write_text(f"{bastion.host_key_line}\n{target.host_key_line}\n")
    return config, known


@contextlib.asynccontextmanager
async def startups_held(server: SSHD, count: int) -> AsyncIterator[None]:
    """``count`` connections that never authenticate: each holds one of the server's
    MaxStartups slots until the block ends."""
    held = []
    try:
        for _ in range(count):
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            held.append(writer)
            assert (await asyncio.wait_for(reader.readline(), 10)).startswith(b"SSH-")
        yield
    finally:
        for writer in held:
            writer.close()


async def test_hosts_behind_one_bastion_share_one_connection_to_it(
    bastion: SSHD, target: SSHD, tmp_path: Path
) -> None:
    config, known = write_config(tmp_path, bastion, target, 6)
    before_bastion, before_target = seen(bastion), seen(target)
    async with Session(known_hosts=known, ssh_config=config) as s:
        results = await asyncio.gather(
            *(s.run_script(Host(name=f"n{i}", ssh=f"node{i}"), "echo up") for i in range(6))
        )
    assert [r.output for r in results] == ["up\n"] * 6, [r.error for r in results]
    assert since(bastion, before_bastion) == (1, 0, 1)
    assert since(target, before_target)[2] == 6


async def test_the_first_hops_own_proxyjump_is_honoured(
    bastion: SSHD, target: SSHD, tmp_path: Path
) -> None:
    """``node`` jumps via ``mid``, and ``mid`` itself via ``edge`` (as ``ssh -J`` would):
    every hop is opened by us and checked against our known_hosts."""
    config, known = write_config(tmp_path, bastion, target, 0)
    with config.open("a") as fh:
        fh.write(_block("edge", bastion) + _block("mid", target, "edge"))
        fh.write(_block("node", target, "mid"))
    before = seen(bastion)
    async with Session(known_hosts=known, ssh_config=config) as s:
        r = await s.run_script(Host(name="n", ssh="node"), "echo up")
    assert r.output == "up\n", r.error
    assert since(bastion, before)[2] == 1


@pytest.mark.slow
def test_a_hundred_hosts_through_one_bastion_with_stock_max_startups(
    bastion: SSHD, target: SSHD, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """100 inventory hosts, all ProxyJump through one bastion to one target (stock
    ``MaxStartups 10:30:100`` on both), probed by ``probe --all --json``: every host is
    probed, the bastion sees one connection, and the target's start-up drops are retried."""
    config, known = write_config(tmp_path / "ssh", bastion, target, 100)
    tree = fakehost.build_fake_host(tmp_path / "tree", fakehost.no_driver())
    inventory = tmp_path / "hosts.yaml"
    env = "".join(f"      {name}: {json.dumps(value)}\n" for name, value in tree.env.items())
    inventory.write_text(
        "hosts:\n"
        + "".join(
            f"  - name: gpu{i:03d}\n    ssh: node{i}\n    root: {tree.root}\n"
            f"    simulate: tree\n    env:\n{env}"
            for i in range(100)
        )
    )
    before_bastion, before_target = seen(bastion), seen(target)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DETECTIVE_TUI_SSH_CONFIG", str(config))
        mp.setenv("DETECTIVE_TUI_KNOWN_HOSTS", str(known))
        started = time.monotonic()
        code = main(["probe", "--all", "--json", "--hosts", str(inventory)])
        elapsed = time.monotonic() - started
    results = json.loads(capsys.readouterr().out)
    failed = {r["host"]: r["error"] for r in results if r["error"]}
    assert code == 0 and not failed, failed
    assert len(results) == 100
    bastion_seen, target_seen = since(bastion, before_bastion), since(target, before_target)
    print(f"100 hosts in {elapsed:.1f} s; bastion {bastion_seen}, target {target_seen}")
    assert bastion_seen[0] <= 2 and bastion_seen[2] == 1  # far fewer than 100
    assert target_seen[2] == 100


async def test_connection_dropped_past_max_startups_is_retried(
    narrow: SSHD, tmp_path: Path
) -> None:
    config, known = narrow.write_client_files(tmp_path)
    before = seen(narrow)
    async with Session(known_hosts=known, ssh_config=config, connect_timeout=20) as s:
        async with startups_held(narrow, 2):
            run = asyncio.create_task(s.run_script(Host(name="n", ssh="fakehost"), "echo up"))
            loop = asyncio.get_running_loop()
            end = loop.time() + 10
            while since(narrow, before)[1] == 0 and loop.time() < end:
                await asyncio.sleep(0.05)  # until sshd has dropped a first attempt
        result = await run
    assert result.output == "up\n", result.error
    assert since(narrow, before)[1] >= 1


async def test_start_up_refusals_that_last_name_max_startups(narrow: SSHD, tmp_path: Path) -> None:
    """Directly and through a bastion that refuses: the error says what happened, how often,
    and the likely cause, instead of 'Connection lost'."""
    config, known = narrow.write_client_files(tmp_path)
    with config.open("a") as fh:
        fh.write(_block("busy-bastion", narrow) + _block("behind", narrow, "busy-bastion"))
    session = Session(known_hosts=known, ssh_config=config, connect_timeout=2)
    async with session as s, startups_held(narrow, 2):
        direct, jumped = await asyncio.gather(
            s.run_script(Host(name="n", ssh="fakehost"), "true"),
            s.run_script(Host(name="j", ssh="behind"), "true"),
        )
    where = f"127.0.0.1:{narrow.port}"
    assert direct.error_kind == "unreachable"
    assert direct.error.startswith(
        "fakehost: the server closed the connection before its SSH banner ("
    )
    assert f"(sshd's MaxStartups on {where})" in direct.error
    attempts = int(direct.error.split("banner (")[1].split()[0])
    assert attempts >= 2
    assert jumped.error.startswith("behind (via ProxyJump busy-bastion): busy-bastion: the server")
    assert f"MaxStartups on {where}" in jumped.error


async def test_a_server_that_closes_during_key_exchange(tmp_path: Path) -> None:
    accepted = 0

    async def banner_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        nonlocal accepted
        accepted += 1
        writer.write(b"SSH-2.0-OpenSSH_9.2 overloaded\r\n")
        await writer.drain()
        await reader.read(1)  # the client's version line
        writer.close()

    server = await asyncio.start_server(banner_then_close, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, Session(connect_timeout=1.5) as s:
        r = await s.run_script(Host(name="x", ssh=f"root@127.0.0.1:{port}"), "true")
    assert r.error_kind == "unreachable"
    assert "the server closed the connection during the key exchange (" in r.error
    assert "MaxStartups" in r.error and accepted >= 2
