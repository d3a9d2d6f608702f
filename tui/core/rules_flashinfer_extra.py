"""FlashInfer outside the replay's era table.

Before 0.2 FlashInfer had no JIT: its wheels carry kernels compiled for a fixed arch list
(``tui.core.flashinfer_pre02``), and a visible GPU outside it is ``flashinfer-arch-rejected``
for that reason — no toolkit or environment change helps. A release newer than the newest one
the replay was checked against is replayed with the newest era's rules, and an ``info``
finding says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core import compat
from tui.core.facts import Facts
from tui.core.findings import Finding
from tui.core.flashinfer_eras import ERAS
from tui.core.flashinfer_pre02 import NEWEST_READ, newer_than_read, prebuilt_for
from tui.core.rulekit import finding as _finding
from tui.core.rulekit import gpu_evidence as _gpu_evidence
from tui.core.rulekit import gpu_names as _gpu_names

if TYPE_CHECKING:
    from tui.core.rules import Subject

FINDING_ID = "flashinfer-arch-rejected"


def rule_flashinfer_outside_table(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        r, tr = s.replay, s.trace
        if r is None or tr is None:
            continue
        pre = prebuilt_for(r.version)
        if pre is not None and tr.dropped:
            missing = tr.dropped
            unsupported = all(not compat.flashinfer_supports_cc(cc) for cc in missing)
            yield _finding(
                FINDING_ID,
                "info" if unsupported else "critical",
                f"FlashInfer {r.version} has no kernels for {_gpu_names(facts, missing)}",
                f"FlashInfer {r.version} predates the JIT: its wheel carries kernels compiled for "
                f"{pre.arch_list} only (TORCH_CUDA_ARCH_LIST of its release workflow) → SM "
                f"{', '.join(f'{a}.{b}' for a, b in missing)} is not among them and no PTX "
                "in it can be compiled for that GPU → every FlashInfer kernel fails there with "
                "'no kernel image is available for execution on the device'. "
                + (
                    "This is not a version problem: FlashInfer supports SM 7.5 and newer only; "
                    "serve without FlashInfer kernels."
                    if unsupported
                    else "No toolkit or environment change helps: install a FlashInfer release "
                    "with a JIT (≥ 0.2) or serve without FlashInfer kernels."
                ),
                [
                    f"FlashInfer {r.version} in {s.python.path if s.python else '?'}",
                    f"prebuilt for {pre.arch_list} ({pre.source})",
                    *_gpu_evidence(facts, missing),
                ],
                s,
            )
        elif tr.era is not None and newer_than_read(r.version):
            yield _finding(
                FINDING_ID,
                "info",
                f"FlashInfer {r.version} is newer than the releases the replay knows",
                f"The replay of FlashInfer's arch decisions was checked against the real code up "
                f"to {NEWEST_READ}; {r.version} is replayed with the rules of the newest era "
                f"({ERAS[-1].name}). If FlashInfer changed them since, `diagnose --deep` runs "
                "the installed FlashInfer itself and reports where it disagrees.",
                [f"FlashInfer {r.version} in {s.python.path if s.python else '?'}"],
                s,
            )
