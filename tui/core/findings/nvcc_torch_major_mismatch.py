"""The JIT toolkit's CUDA major differs from `torch.version.cuda`'s. `warning`.

```
[warning] nvcc is CUDA 12.8 but torch 2.9.1+cu130 is built for CUDA 13.0
torch 2.9.1+cu130 was built with CUDA 13.0, but the toolkit a JIT build uses comes from
CUDA_HOME=/usr/local/cuda-12.8 and is CUDA 12.8 — a different major version. torch's BuildExtension
refuses that combination (…), and JIT modules compiled by it link a different CUDA runtime than torch
loads. Point CUDA_HOME at a CUDA 13.x toolkit and clear the FlashInfer JIT cache afterwards.
evidence: torch 2.9.1+cu130 (torch.version.cuda 13.0) · CUDA_HOME=/usr/local/cuda-12.8 ·
          nvcc 12.8.93 at /usr/local/cuda-12.8/bin/nvcc
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui.core.facts import Facts
from tui.core.findings import Finding
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding as _finding
from tui.core.rules.rulekit import toolkit_evidence as _toolkit_evidence
from tui.core.rules.subject import Subject
from tui.core.tables import support_matrix

ID = "nvcc-torch-major-mismatch"


def rule_major_mismatch(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        py, v = s.python, s.jit_version
        if py is None or not py.torch_cuda or v is None:
            continue
        if support_matrix.cuda_major(py.torch_cuda) == support_matrix.cuda_major(v):
            continue
        yield _finding(
            ID,
            "warning",
            f"nvcc is CUDA {v} but torch {py.torch_version} is built for CUDA {py.torch_cuda}",
            f"torch {py.torch_version} was built with CUDA {py.torch_cuda}, but the toolkit a "
            f"JIT build uses comes from {s.jit_origin} and is CUDA {v} — a different major "
            "version. torch's BuildExtension refuses that combination ('The detected CUDA "
            "version mismatches the version that was used to compile PyTorch'), and JIT "
            "modules compiled by it link a different CUDA runtime than torch loads. Point "
            f"CUDA_HOME at a CUDA {support_matrix.cuda_major(py.torch_cuda)}.x toolkit and clear the "
            "FlashInfer JIT cache afterwards.",
            [
                f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})",
                s.jit_origin,
                _toolkit_evidence(s.jit_toolkit, s.jit_nvcc),
            ],
            s,
        )


FINDING = FindingRecord(
    id=ID,
    title="The JIT toolkit's CUDA major differs from torch's",
    severities=("warning",),
    reads=("pythons.torch_version", "pythons.torch_cuda", "toolkits.version", "contexts.vars"),
    rules=(rule_major_mismatch,),
    fixes=("use-installed-toolkit", "install-cuda-toolkit-pip", "install-cuda-toolkit-apt"),
    follow_ups=("clear-flashinfer-jit-cache",),
    cause="nvcc {jit} vs torch CUDA {torch_cuda}",
    consequence="JIT and torch CUDA majors differ",
    implicates=("jit",),
    fires_when="the JIT toolkit's CUDA major differs from `torch.version.cuda`",
    example="nvcc 12.8 with torch 2.9.1+cu130",
    doc=__doc__ or "",
)
