"""Local commands run below the TUI's CPU priority: their own niceness and their session's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui.core.hosts import Host
from tui.core.reach.local_transport import LOCAL_NICE, LocalTransport
from tui.core.reach.transport import command_line

AUTOGROUP = Path("/proc/self/autogroup")


async def test_local_commands_and_their_children_run_niced() -> None:
    transport = LocalTransport(Host(name="local", local=True))
    result = await transport.execute(command_line("sh -s"), stdin="nice\nsh -c nice\n")
    assert result.ok, result.output
    expected = str(min(19, os.nice(0) + LOCAL_NICE))  # nice -n adds to the TUI's own
    assert result.output.split() == [expected, expected]


@pytest.mark.skipif(not AUTOGROUP.exists(), reason="kernel without scheduler autogroups")
async def test_local_commands_session_autogroup_is_niced() -> None:
    ours = AUTOGROUP.read_text()
    transport = LocalTransport(Host(name="local", local=True))
    result = await transport.execute(command_line("sh -s"), stdin="cat /proc/self/autogroup\n")
    assert result.ok, result.output
    theirs = result.output.strip()
    assert theirs.endswith(f" nice {LOCAL_NICE}"), theirs
    assert theirs.startswith("/autogroup-"), theirs
    # A session (group) of its own, not ours. Ours reads empty when this process never left
    # the kernel's default group (a container's first session, as in CI): different by then.
    assert theirs.split()[0] != (ours.split() or ["(default group)"])[0]
