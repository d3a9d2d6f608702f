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

from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.judge.judged import Judged
from tui.core.records import history
from tui.core.records.history import HistoryStore, Snapshot, store_path
from tui.core.run.runner import ProbeResult, Session
from tui.core.run.service import judge_facts
from tui.demo import fakehost
from tui.demo.fleet import DEMO_HOSTS, demo_host

BROKE_AFTER_UPGRADE = "ct200"
BEFORE_AT = "2026-11-29T18:00:00+00:00"  # SYNTHETIC: a day before the apt run of its log


def _before(host: Host) -> Host:
    """ct200 as it was: CUDA 13.0 beside 12.8 and in CUDA_HOME, torch 2.9.0+cu130 (its tree
    built beside the host's own)."""
    spec = fakehost.reference_ct200(with_cuda13=True, cuda="/usr/local/cuda-13.0", torch="2.9.0")
    tags = next(e.tags for e in DEMO_HOSTS if e.name == host.name)
    cache = Path(host.root).parent.parent if host.root else None
    return demo_host(f"{host.name}-before", spec, tags, cache)


def _probe(host: Host) -> ProbeResult:
    async def run() -> ProbeResult:
        async with Session() as session:
            return await session.probe(host)

    return asyncio.run(run())


def seed_demo_history(path: Path, host: Host) -> None:
    """Give a demo host its history: ct200's simulated earlier probe when it is missing, then
    a probe now when the host has none (kept through the one core path, like any probe)."""
    have: list[Snapshot] = []
    if path.exists():
        with HistoryStore.open(path) as store:
            have = store.snapshots(host.name)
    if host.name == BROKE_AFTER_UPGRADE and not any(s.at == BEFORE_AT for s in have):
        result = _probe(_before(host))
        earlier = replace(result, host=host)  # the same host, as it was
        facts = earlier.facts
        diagnosis = diagnose(facts, host) if facts is not None and earlier.reachable else None
        history.keep(Judged(earlier, diagnosis), at=BEFORE_AT, path=path)
    if not [s for s in have if s.at != BEFORE_AT]:
        judge_facts(_probe(host))


def host_snapshots(host: Host) -> list[Snapshot]:
    """A host's snapshots, newest first (a demo host's history seeded first, so this may
    probe: call it off the event loop); ``HistoryError`` when the store cannot be read."""
    path = store_path(host.demo)
    if host.demo:
        seed_demo_history(path, host)
    if not path.exists():
        return []
    with HistoryStore.open(path, create=False) as store:
        return store.snapshots(host.name)
