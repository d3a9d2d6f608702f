"""The demo fleet's history, so ``history``, ``diff`` and the History tab can be tried at once.

A demo host's history starts with a probe of it now, taken the first time its history is
read. ``ct200`` also has an earlier, simulated probe (``BEFORE_AT``): the same host a day
before, when it worked — CUDA 13.0 installed and in ``CUDA_HOME`` and torch 2.9.0+cu130 —
before ``pip install -U torch`` (2.9.1+cu130) and the apt run in its ``history.log``
(``fleet.CT200_APT_LOG``) took CUDA 13.0 away, leaving FlashInfer's JIT on CUDA 12.8, which
cannot build for SM 12.0. Both probes are real probes of fake host trees.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from tui.core import history
from tui.core.diagnosis import diagnose
from tui.core.history import HistoryStore
from tui.core.hosts import Host
from tui.core.judged import Judged
from tui.core.runner import ProbeResult, Session
from tui.core.service import judge_facts
from tui.demo import fakehost
from tui.demo.fleet import DEMO_HOSTS, demo_host

BROKE_AFTER_UPGRADE = "ct200"
BEFORE_AT = "2026-11-29T18:00:00+00:00"  # SYNTHETIC: a day before the apt run of its log


def _before(name: str) -> Host:
    """ct200 as it was: CUDA 13.0 beside 12.8 and in CUDA_HOME, torch 2.9.0+cu130."""
    spec = fakehost.reference_ct200(with_cuda13=True, cuda="/usr/local/cuda-13.0", torch="2.9.0")
    tags = next(e.tags for e in DEMO_HOSTS if e.name == name)
    return demo_host(f"{name}-before", spec, tags)


def _probe(host: Host) -> ProbeResult:
    async def run() -> ProbeResult:
        async with Session() as session:
            return await session.probe(host)

    return asyncio.run(run())


def seed_demo_history(path: Path, host: Host) -> None:
    """Give a demo host its history when it has none: the simulated earlier probe (ct200),
    then a probe now (kept through the one core path, like any probe)."""
    if path.exists():
        with HistoryStore.open(path) as store:
            if store.snapshots(host.name, limit=1):
                return
    if host.name == BROKE_AFTER_UPGRADE:
        result = _probe(_before(host.name))
        earlier = replace(result, host=host)  # the same host, as it was
        facts = earlier.facts
        diagnosis = diagnose(facts, host) if facts is not None and earlier.reachable else None
        history.keep(Judged(earlier, diagnosis), at=BEFORE_AT, path=path)
    judge_facts(_probe(host))
