"""The installed FlashInfer is newer than the newest release the replay was checked against
(`tui/core/tables/flashinfer_pre02.py`'s `NEWEST_READ`): it is replayed with the newest era's rules
(`tui/core/tables/flashinfer_eras.py`), which FlashInfer may have changed since. `info`; run
`diagnose --deep` to have the installed FlashInfer decide itself (a disagreement is
`flashinfer-replay-disagrees`). Before this id existed the note was an `info`
`flashinfer-arch-rejected`: one id, one meaning.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui.core.facts import Facts
from tui.core.findings import Finding
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding
from tui.core.rules.subject import Subject
from tui.core.tables.flashinfer_eras import ERAS
from tui.core.tables.flashinfer_pre02 import NEWEST_READ, newer_than_read

ID = "flashinfer-replay-unverified"


def rule_replay_unverified(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        r, tr = s.replay, s.trace
        if r is None or tr is None or tr.era is None or not newer_than_read(r.version):
            continue
        yield finding(
            ID,
            "info",
            f"FlashInfer {r.version} is newer than the releases the replay knows",
            f"The replay of FlashInfer's arch decisions was checked against the real code up "
            f"to {NEWEST_READ}; {r.version} is replayed with the rules of the newest era "
            f"({ERAS[-1].name}). If FlashInfer changed them since, `diagnose --deep` runs "
            "the installed FlashInfer itself and reports where it disagrees.",
            [f"FlashInfer {r.version} in {s.python.path if s.python else '?'}"],
            s,
        )


FINDING = FindingRecord(
    id=ID,
    title="The installed FlashInfer is newer than the replay was checked against",
    severities=("info",),
    reads=("pythons.flashinfer_version",),
    rules=(),
    late_rules=(rule_replay_unverified,),
    cause="FlashInfer newer than the replay",
    consequence="the replay may be off",
    fires_when="(info) the installed FlashInfer is newer than the newest release the replay "
    "was checked against; it is replayed with the newest era's rules",
    example="FlashInfer 0.7.4 (the newest checked is 0.7.2.post1): replayed with the rules of "
    "the era 0.7.1 and later",
    doc=__doc__ or "",
)
