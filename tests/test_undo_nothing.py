"""Undo with nothing left to undo says which case it is."""

from __future__ import annotations

from tui.core.fixes.undo import records_dir
from tui.core.hosts import Host
from tui.core.records.transcript import Transcript
from tui.core.run.fleet import plan_undo_last
from tui.core.run.runner import Session


async def test_undo_last_when_every_record_is_undone_says_so() -> None:
    """``u`` / ``--undo last`` on a host whose fixes are all undone says that, not "no fix
    recorded" (the records are kept aside as ``.undone``)."""
    host = Host(name="gpu7", ssh="gpu7")
    where = records_dir(host.name)
    where.mkdir(parents=True)
    (where / "20260102T030405-use-installed-toolkit.undone").write_text("{}")
    async with Session(transcript=Transcript.open_session()) as session:
        (item,) = await plan_undo_last(session, [host])
    assert item.skipped and item.plan is None
    assert item.error == (
        f"nothing to undo: every fix recorded for gpu7 is already undone (1 in {where})"
    )
