"""A fleet fix releases each host's SSH session when that host is done, not when the slowest
host of the fleet ends (issue 19). Two fake ct200 trees behind a real sshd: host b's first step
waits on a FIFO that the test opens only once host a's connection is gone."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shlex
from pathlib import Path

import pytest
from conftest import SSHEnv

from tui.core.fixes import build_plan
from tui.core.fixes.plan import Step
from tui.core.hosts import Host
from tui.core.run.fleet import FleetItem, apply_fleet
from tui.core.run.runner import Session
from tui.demo.fakehost import build_fake_host, reference_ct200

pytestmark = [pytest.mark.sshd, pytest.mark.slow]


def _host(dest: Path, name: str, alias: str) -> Host:
    fake = build_fake_host(dest, reference_ct200(with_cuda13=True))
    return Host(name=name, ssh=alias, root=str(fake.root), simulate="tree", env=fake.env,
                python=fake.pythons, standins=fake.standins)  # fmt: skip


async def test_each_hosts_session_is_released_when_that_host_is_done(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    wait = Step(title="wait for the test", command=f"read x < {shlex.quote(str(fifo))}",
                undo=None, changes="nothing", needs_root=False)  # fmt: skip
    hosts = [_host(tmp_path / n, n, ssh_env.alias) for n in ("a", "b")]
    async with Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config) as s:
        items = []
        for host in hosts:
            facts = (await s.probe(host)).facts
            assert facts is not None
            plan = build_plan(
                facts, host, "use-installed-toolkit", {"path": "/usr/local/cuda-13.0"}
            )
            if host.name == "b":
                plan = dataclasses.replace(plan, steps=(wait, *plan.steps))
            items.append(FleetItem(host=host, facts=facts, plan=plan))
        run = asyncio.create_task(apply_fleet(s, items))
        async with asyncio.timeout(120):
            while s.pool.holds(hosts[0]) or not s.pool.holds(hosts[1]):
                await asyncio.sleep(0.05)  # a's run ends; b is still held, waiting
        assert not run.done()
        fd = os.open(fifo, os.O_WRONLY)  # b may go on
        os.write(fd, b"go\n")
        os.close(fd)
        results = await run
        assert not s.pool.holds(hosts[1])
    assert [r.outcome.applied for r in results if r.outcome] == [True, True]
