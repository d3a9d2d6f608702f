"""Every finding docs/findings.md documents has a short reason line ("cause → consequence"), so the
hosts table's Reason column and the groups view never fall back to a long title."""

from __future__ import annotations

import re
from pathlib import Path

from tui.ui.reasons import CAUSES, VALUE_KEYS, cause, reason_line

FINDINGS_DOC = Path(__file__).resolve().parents[2] / "docs" / "findings.md"
LONG_TITLE = "a title a rule wrote, long enough that it would never fit in the column " * 2


def documented_finding_ids() -> list[str]:
    return re.findall(r"^## `([a-z0-9-]+)`", FINDINGS_DOC.read_text(encoding="utf-8"), re.M)


def test_every_documented_finding_has_a_cause() -> None:
    ids = documented_finding_ids()
    assert len(ids) >= 18  # the table was read, not an empty section
    assert [i for i in ids if i not in CAUSES] == []


def test_reason_lines_are_short_with_the_hosts_values() -> None:
    values = dict.fromkeys(VALUE_KEYS, "12.9")
    for finding_id in CAUSES:
        line = reason_line(finding_id, LONG_TITLE, values)
        assert LONG_TITLE not in line
        assert len(line) <= 70, line
        assert "{" not in line


def test_an_unknown_finding_falls_back_to_its_title() -> None:
    assert cause("not-a-finding", "Its title", {}) == ("", "Its title")
