"""The torch build has no kernels for a visible GPU (`sm_XY` cubins run on the same major with
minor ≥ Y, minus torch's own exceptions; `compute_XY` PTX runs forward). The arch list comes
from `libtorch_python.so` when the probe read it, else from the PyPI wheel table per CUDA
variant (cuda-facts §5.2), and the evidence says which. `critical`.

```
[critical] torch 2.6.0+cu124 has no kernels for NVIDIA GeForce RTX 5090 (SM 12.0)
torch 2.6.0+cu124 was compiled for sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 (the PyPI cu124 wheel's
list); none of those runs on SM 12.0. torch warns 'sm_120 is not compatible with the current PyTorch
installation' and the first kernel fails with 'no kernel image is available for execution on the
device' (error 209). Install a torch build whose CUDA variant includes this GPU (Blackwell needs
cu128 or newer).
```

When the probe could not read the list, the fallback is keyed by (torch version, CUDA variant,
machine) (`tui/core/tables/torch_arch.py`): the PyPI default wheels of 2.4.0 – 2.14.0 (x86_64, and
aarch64 for 2.11.0 and 2.14.0) from their own `libtorch_python.so`; another variant of a
release (cu118, cu126 … from PyTorch's own index, which the test machines cannot reach) falls
back to the per-variant table, and the evidence says which row was used. The probe reads the
string even where the linker merged it into the tail of another (`…std::string
ipc_hsm_70 sm_75 …` in the 2.8.0 and 2.9.0 wheels, which it used to miss).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui.core.facts import Facts
from tui.core.findings import Finding
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import cc_text as _cc
from tui.core.rules.rulekit import finding as _finding
from tui.core.rules.rulekit import gpu_evidence as _gpu_evidence
from tui.core.rules.rulekit import gpu_names as _gpu_names
from tui.core.rules.subject import Subject
from tui.core.tables import support_matrix, torch_arch

ID = "torch-lacks-gpu-arch"


def rule_torch_arch(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        py = s.python
        if py is None or not py.torch_cuda or not s.devices:
            continue
        listed = py.torch_arch_list
        source = "read from libtorch_python.so"
        if listed is None:
            found = torch_arch.arch_list(py.torch_version, py.torch_cuda, facts.host.arch)
            if found is None:
                continue
            listed, source = found
        missing = tuple(
            dict.fromkeys(cc for cc in s.devices if not support_matrix.torch_runs_on(listed, cc))
        )
        if not missing:
            continue
        yield _finding(
            ID,
            "critical",
            f"torch {py.torch_version} has no kernels for {_gpu_names(facts, missing)}",
            f"torch {py.torch_version} was compiled for {' '.join(listed)} ({source}); none of "
            f"those runs on SM {', '.join(_cc(c) for c in missing)}. torch warns 'sm_"
            f"{missing[0][0]}{missing[0][1]} is not compatible with the current PyTorch "
            "installation' and the first kernel fails with 'no kernel image is available for "
            "execution on the device' (error 209). Install a torch build whose CUDA variant "
            "includes this GPU (Blackwell needs cu128 or newer).",
            [
                f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})",
                f"arch list {' '.join(listed)} ({source})",
                *_gpu_evidence(facts, missing),
            ],
            s,
        )


FINDING = FindingRecord(
    id=ID,
    title="torch has no kernels for a visible GPU",
    severities=("critical",),
    reads=(
        "pythons.torch_version",
        "pythons.torch_cuda",
        "pythons.torch_arch_list",
        "gpus.compute_cap",
        "host.arch",
    ),
    rules=(rule_torch_arch,),
    cause="SM {sm} + torch CUDA {torch_cuda}",
    consequence="no kernel image for the GPU",
    implicates=("torch",),
    fires_when="torch has no kernels for a visible GPU (error 209)",
    example="torch 2.6.0+cu124 on an RTX 5090 (SM 12.0)",
    doc=__doc__ or "",
)
