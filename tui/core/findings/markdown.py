"""The registry as documents: docs/findings.md and the README's table of finding ids.

Both are generated from the records (``tui.core.findings.registry``) — ``findings --markdown``
prints docs/findings.md, ``scripts/findings-docs`` rewrites both files — and a test fails when
either file differs from what the records say.
"""

from __future__ import annotations

from collections.abc import Iterable

from tui.core.findings.record import FindingRecord
from tui.core.findings.registry import FINDINGS

README_START = "<!-- finding ids: generated from tui/core/findings by scripts/findings-docs -->"
README_END = "<!-- end of finding ids -->"
INTRO = """# Findings: what each one means, when it fires, what to do

`detective-tui diagnose` reports findings with a stable `id` (CONTRACT.md), a `severity`
(`critical` = something will fail, `warning` = a trap that bites under some conditions,
`info` = worth knowing, not a version problem or already worked around), the `evidence` that
made it fire (exact paths, versions, variables) and an `explanation` that tells the causal
chain. The examples below are real output of the rules on the host shapes named.
"""
HOW_JUDGED = """- **Each interpreter in the environment it really runs under.** A discovered serving process
  (`/proc/PID/environ`) beats its systemd unit, which beats the login shell, which beats the
  SSH session. FlashInfer inside `sglang.launch_server` reads the *server's* `CUDA_HOME`, not
  yours. Every finding ends with "(Judged in the … environment.)".
- **`local` is judged in your current environment.** For the `local` target the probe runs in
  detective-tui's own environment — an activated conda env, `module load cuda`, an exported
  `CUDA_HOME` or `PATH` — which is where your next command runs: it is the "current shell"
  context, and interpreters without a serving process are judged in it (before the login
  shell; serving processes and units still come first). Where a login shell (a new terminal,
  cron, a service started from it) would resolve the JIT toolkit differently, an `info`
  `toolkit-shadowed` finding says so, and every finding judged in the current shell carries a
  line of evidence "a login shell resolves … instead of …" (`tui/core/findings/toolkit_shadowed.py`).
- **FlashInfer is replayed, not imported.** `tui/core/rules/flashinfer_replay.py` re-enacts the
  installed FlashInfer version's own `get_cuda_path()`, `get_cuda_version()`,
  `_normalize_cuda_arch`, `check_cuda_arch()` and ninja flags (per release era, see
  `tui/core/tables/flashinfer_eras.py`), from the probed facts. The slow test
  `tests/test_oracle_flashinfer.py` checks the replay against the real FlashInfer code of
  0.5.3 – 0.7.2.post1 on ~170 generated cases. `diagnose --deep` runs the host's own
  FlashInfer as ground truth.
- **Fixes are checked by simulation.** For every finding, each applicable fix of CONTRACT.md is
  applied to a copy of the facts (`tui.core.judge.whatif.apply_fix`: the environments it changes,
  the serving process after its restart included) and the rules run again. `resolves` lists
  the findings that are gone afterwards (or only `info`); fixes that resolve nothing, or that
  bring a new critical finding (say, a toolkit newer than the driver), are not proposed. Fixes
  are ordered least invasive first: `use-installed-toolkit`, `set-flashinfer-arch-list`,
  `sampling-backend-fallback`, `install-cuda-toolkit-pip`, `install-cuda-toolkit-apt`, then
  `clear-flashinfer-jit-cache` as a follow-up (it resolves nothing by itself).
"""


def section(record: FindingRecord) -> str:
    """One finding's section of docs/findings.md: its heading and its documentation."""
    note = f" {record.heading_note}" if record.heading_note else ""
    return f"## `{record.id}`{note}\n\n{record.doc.strip()}\n"


def findings_markdown(records: Iterable[FindingRecord] = FINDINGS) -> str:
    """docs/findings.md: what each finding means, when it fires, what to do."""
    parts = [INTRO, "## How hosts are judged\n\n" + HOW_JUDGED, *map(section, records)]
    return "\n".join(parts)


def readme_table(records: Iterable[FindingRecord] = FINDINGS) -> str:
    """The README's table of finding ids, between its two marker comments."""
    rows = [f"| `{r.id}` | {r.fires_when} | {r.example} |" for r in records]
    return "\n".join(
        [README_START, "| id | fires when | example |", "|---|---|---|", *rows, README_END]
    )


def with_readme_table(readme: str) -> str:
    """``readme`` with the table between the markers replaced by the records' one."""
    start, end = readme.index(README_START), readme.index(README_END) + len(README_END)
    return readme[:start] + readme_table() + readme[end:]
