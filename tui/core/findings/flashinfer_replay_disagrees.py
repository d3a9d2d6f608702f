"""`--deep` imported the host's own FlashInfer in the judged environment
(`probes/deep_flashinfer.py`) and it decided differently from the replay. `info`; the
evidence lists each difference. Trust the real answer and please report it with the
`--markdown` output attached. (This id is an addition to the CONTRACT.md table.)
"""

from __future__ import annotations

from tui.core.findings.record import FindingRecord

ID = "flashinfer-replay-disagrees"


FINDING = FindingRecord(
    id=ID,
    title="The host's own FlashInfer disagrees with the replay",
    severities=("info",),
    reads=("pythons.flashinfer_version", "contexts.vars"),
    rules=(),
    cause="replay vs the host's FlashInfer",
    consequence="the replay is off",
    fires_when="(`--deep` only, info) the host's own FlashInfer disagrees with the replay — "
    "please report it",
    doc=__doc__ or "",
    heading_note="(only with `--deep`)",
)
