"""The ``decision`` transcript event: one field set written by one writer, and every shape
written before it read into that set (the transcript viewer, ``transcript show/export``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.core.records.decision import Decision, record_decision
from tui.core.records.transcript import Transcript, export, read_events
from tui.core.records.transcript_index import TranscriptIndex

# the shapes the front ends wrote before the one writer (issue 20): the CLI fleet fix, the
# wizard, the fleet-fix screen, the CLI's fleet undo, the CLI restart, trust, a refusal
OLD = [
    ({"fix": "use-installed-toolkit", "answer": "yes", "hosts": ["a", "b"]},
     ("fix", "yes", None, ("a", "b"), "use-installed-toolkit", None)),
    ({"host": "ct201", "fix": "use-installed-toolkit", "answer": "no"},
     ("fix", "no", "ct201", ("ct201",), "use-installed-toolkit", None)),
    ({"fix": "use-installed-toolkit", "answer": "yes", "fleet": True, "hosts": ["a"]},
     ("fix", "yes", None, ("a",), "use-installed-toolkit", None)),
    ({"undo": "20261201T1-fix", "answer": "yes", "host": "a", "fleet": True},
     ("undo", "yes", "a", ("a",), None, "20261201T1-fix")),
    ({"action": "restart", "host": "a", "units": ["sglang.service"]},
     ("restart", "yes", "a", ("a",), None, None)),
    ({"action": "trust-host-key", "host": "h", "fingerprint": "SHA256:x", "accepted": True},
     ("trust-host-key", "yes", "h", ("h",), None, None)),
    ({"answer": "refused", "reason": "no terminal"},
     ("fix", "refused", None, (), None, None)),
]  # fmt: skip


@pytest.mark.parametrize(("event", "expected"), OLD)
def test_old_shapes_read_into_the_field_set(event: dict, expected: tuple) -> None:
    d = Decision.from_event({"ts": "t", "seq": 1, "kind": "decision", **event})
    assert (d.action, d.answer, d.host, d.covers, d.fix, d.undo) == expected
    assert "fleet" not in d.details and "accepted" not in d.details  # read, not carried


def test_one_writer_one_field_set(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with Transcript(path) as tr:
        record_decision(tr, Decision.about("fix", "yes", ["a", "b"], fix="use-installed-toolkit"))
        record_decision(tr, Decision.about("restart", "no", ["a"], units=("sglang.service",)))
        record_decision(
            tr, Decision("trust-host-key", "yes", host="h", details={"fingerprint": "SHA256:x"})
        )
    fleet, restart, trust = read_events(path)
    allowed = {"ts", "seq", "kind", *Decision.__dataclass_fields__}
    assert all(set(e) <= allowed for e in (fleet, restart, trust))
    # only the fields that apply, and both ways the same record
    assert fleet["hosts"] == ["a", "b"] and "host" not in fleet and "undo" not in fleet
    assert (restart["host"], restart["hosts"], restart["units"]) == ("a", ["a"], ["sglang.service"])
    assert trust["details"] == {"fingerprint": "SHA256:x"}
    for event in (fleet, restart, trust):
        assert Decision.from_event(event).to_event() == {
            k: v for k, v in event.items() if k not in ("ts", "seq", "kind")
        }
    # the viewer's line and the exports read it
    index = TranscriptIndex.open(path)
    lines = [index.summary(i) for i in range(len(index))]
    assert "decision · fix use-installed-toolkit on a, b: yes" in lines[0]
    assert "decision · restart (sglang.service): no" in lines[1]
    md = export(path, "md")
    assert "— decision: fix use-installed-toolkit on a, b: yes" in md and '"SHA256:x"' in md
