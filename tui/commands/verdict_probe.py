"""Probe hosts and turn each result into a ``HostVerdict``: what ``export prometheus`` and
``check`` share. They run from timers every few minutes and change nothing, so they keep no
transcript; each probe has the runner's deadlines, and one bad host never stops the others."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence

from tui.commands.diagnose import warn_notes
from tui.commands.host_args import hosts_for
from tui.core.hosts import Host
from tui.core.records.verdicts import HostVerdict, host_verdict
from tui.core.run.runner import ProbeResult, Session
from tui.core.run.service import probe_and_judge_many


async def verdicts_of(hosts: Sequence[Host]) -> list[HostVerdict]:
    """Probe and judge ``hosts`` (no transcript); each verdict stamped when its probe ended."""
    ended: dict[int, float] = {}

    def finished(result: ProbeResult) -> None:
        ended[id(result)] = time.time()

    async with Session(transcript=None) as session:
        judged = await probe_and_judge_many(session, hosts, on_result=finished)
    warn_notes(judged)  # stderr: NPD and Nagios read stdout only
    return [host_verdict(j, ended.get(id(j.result), time.time())) for j in judged]


def probe_verdicts(args: argparse.Namespace) -> tuple[list[HostVerdict], bool]:
    """The verdicts of the TARGETs in ``args``, and whether a bad inventory entry is among
    them (it is a host not probed, its error the reason; the others are probed all the same).
    ``InventoryError`` when the inventory cannot be read at all."""
    hosts = hosts_for(args, args.targets, args.all_hosts, keep_bad=True)
    return asyncio.run(verdicts_of(hosts)), any(h.invalid for h in hosts)
