"""The one path from a host to its verdict, for both front ends: probe → diagnose (→ deep)
→ record (the transcript's ``diagnosis`` event, the history's snapshot).

The CLI (``detective-tui diagnose``) and the TUI's probe worker both call these, so their
transcripts hold the same events for a host: the runner's ``command`` / ``probe`` events, then
one ``diagnosis`` event with the findings, the FlashInfer replays and the deep results.
A host is judged when its probe reached it and left facts (partial facts from a timeout or a
dropped connection included); an unreached host has no diagnosis and no ``diagnosis`` event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from tui.core.findings.cuda_init_fails import cuinit_findings
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose, with_deep, with_findings
from tui.core.judge.judged import Judged
from tui.core.records import history
from tui.core.run.deep import DeepResults, run_cuinit, run_deep

if TYPE_CHECKING:
    from tui.core.run.runner import ProbeResult, ProgressCallback, Session


def kept(judged: Judged) -> Judged:
    """Store the probe's snapshot in the history (``tui.core.records.history``); a store that cannot
    be written adds a note to the result instead of failing it."""
    note = history.keep(judged)
    return replace(judged, notes=(*judged.notes, note)) if note else judged


def judge_facts(result: ProbeResult) -> Judged:
    """Diagnose a probe result in place, without a session (ingested output, tests)."""
    if result.facts is None or not result.reachable:
        return kept(Judged(result))
    return kept(Judged(result, diagnose(result.facts, result.host)))


async def judge(session: Session, result: ProbeResult, *, deep: bool = False) -> Judged:
    """Diagnose a probe result (off the event loop: the first diagnosis loads the rule
    tables), run the deep check where asked, record the ``diagnosis`` event and keep the
    snapshot (off the loop too: the store fsyncs)."""
    if result.facts is None or not result.reachable:
        return await asyncio.to_thread(kept, Judged(result))
    diagnosis = await asyncio.to_thread(diagnose, result.facts, result.host)
    deeps: DeepResults = {}
    if deep and diagnosis.flashinfer:
        deeps = await run_deep(session, result.host, result.facts, diagnosis)
        diagnosis = with_deep(diagnosis, deeps)
    cuinit: list[tuple[str, dict]] = []
    if deep:
        cuinit = await run_cuinit(session, result.host, result.facts)
        fired = [f.id for f in diagnosis.findings]
        diagnosis = with_findings(diagnosis, cuinit_findings(cuinit, fired))
    session.record(
        "diagnosis",
        host=result.host.name,
        findings=[f.to_json() for f in diagnosis.findings],
        flashinfer=[r.to_json() for r in diagnosis.flashinfer],
        deep=deeps or None,
        cuinit=[{"context": label, **r} for label, r in cuinit] or None,
    )
    judged = Judged(result, diagnosis, deeps, cuinit=tuple(cuinit))
    return await asyncio.to_thread(kept, judged)


async def probe_and_judge(
    session: Session,
    host: Host,
    on_progress: ProgressCallback | None = None,
    *,
    deep: bool = False,
) -> Judged:
    """Probe one host and judge what the probe found."""
    return await judge(session, await session.probe(host, on_progress), deep=deep)


async def probe_and_judge_many(
    session: Session,
    hosts: Sequence[Host],
    *,
    deep: bool = False,
    on_result: Callable[[ProbeResult], None] | None = None,
) -> list[Judged]:
    """Probe every host concurrently (``on_result`` sees each probe as it ends), then judge
    each; results in the order given, one bad host never stopping the others."""
    results = await session.probe_many(hosts, on_result=on_result)
    return [await judge(session, r, deep=deep) for r in results]


async def keep_probe(session: Session, result: ProbeResult) -> None:
    """Keep a probe made outside ``judge`` (a fix's verifying re-probe) in the history, judged;
    a snapshot that cannot be kept is noted in the transcript."""
    diagnosis = None
    if result.facts is not None and result.reachable:
        diagnosis = await asyncio.to_thread(diagnose, result.facts, result.host)
    judged = await asyncio.to_thread(kept, Judged(result, diagnosis))
    for note in judged.notes:
        session.record("history-not-kept", host=result.host.name, note=note)
