"""The ptxas Triton runs for a visible GPU cannot target it. Triton assembles every kernel with
`ptxas --gpu-name=sm_<cc>a` (plain `sm_<cc>` below SM 9.0; before 3.3 only SM 9.0 got the `a`),
and it picks that ptxas itself: the one its override variable names, when that file runs and
prints its release, else the one in its wheel (`triton/backends/nvidia/bin/`). From 3.3 the
wheels carry a second one, `ptxas-blackwell`, for GPUs from SM 10.0 (from SM 9.0 in 3.9), with
its own variable. Which binary, which variable and which ptxas releases each Triton accepts are
a table read from the real wheels 3.0.0 – 3.9.0 (`tui/core/triton_ptxas.py`; the slow test
`tests/test_triton_ptxas_wheels_slow.py` downloads them, runs their ptxas and their own
selection code):

| triton | bundled `ptxas` | `ptxas-blackwell` (override) | ptxas CUDA it accepts |
|---|---|---|---|
| 3.0.0, 3.1.0 | 12.4.99 | — | 10.0 – 12.x |
| 3.2.0 | 12.4.99 | — | 10.0 – 12.6 |
| 3.3.0, 3.3.1 | 12.4.99 | 12.8.61, SM ≥ 10.0 (`TRITON_PTXAS-BLACKWELL_PATH`: no shell can set it) | 10.0 – 12.x |
| 3.4.0 | 12.8.93 | — | 10.0 – 12.x |
| 3.5.0, 3.5.1 | 12.8.93 | — | any |
| 3.6.0 | 12.8.93 | 12.9.86, SM ≥ 10.0 (`TRITON_PTXAS_BLACKWELL_PATH`) | any |
| 3.7.0, 3.7.1 | 12.8.93 | 13.1.80, SM ≥ 10.0 | any |
| 3.8.0 | 12.9.86 | 13.3.33, SM ≥ 10.0 | any |
| 3.9.0 | 12.9.86 | 13.4.59, SM ≥ 9.0 | any |

The probe runs each bundled ptxas and each `TRITON_PTXAS*` override it finds (`--version`,
under the step deadline); a binary that cannot run here — another machine's architecture, a
noexec mount — is read instead (its `Cuda compilation tools, release …` string), and without
the file the table's version is used; the evidence says which. The ptxas target table is
`tui/core/ptxas_targets.py` (from real `ptxas --help`). `critical` when vLLM or SGLang is
installed in that interpreter (their Triton kernels run while serving), `warning` otherwise
(torch.compile and direct Triton users). It also fires when an override names a ptxas whose
CUDA release that Triton has no PTX version for (a CUDA 13 ptxas under triton ≤ 3.4: every
compile raises `Triton only support CUDA 10.0 or higher, but got CUDA version: 13.0`).

Example — the demo host `spark-01` (DGX Spark, GB10 = SM 12.1, CUDA 13.0 installed, vLLM as a
systemd service, triton 3.5.1):

```
[critical] Triton 3.5.1's ptxas 12.8 cannot build for NVIDIA GB10 (SM 12.1)
Triton 3.5.1 assembles every kernel for SM 12.1 with ptxas --gpu-name=sm_121a → it runs its bundled
ptxas /home/ml/venv/lib/python3.11/site-packages/triton/backends/nvidia/bin/ptxas (CUDA 12.8.93, ran
--version) because TRITON_PTXAS_PATH is not set in this environment → ptxas 12.8 does not know
sm_121a (first in CUDA 12.9) → every Triton kernel fails with "ptxas fatal : Value 'sm_121a' is not
defined for option 'gpu-name'" → torch.compile and the Triton kernels of vLLM/SGLang fail while eager
torch works. Fix: point TRITON_PTXAS_PATH at the ptxas of a CUDA toolkit ≥ 12.9 (Triton 3.5.1 accepts
ptxas of any CUDA ≥ 10.0), or upgrade Triton to ≥ 3.6.0, whose bundled ptxas builds sm_121a. (Judged
in the pid 5151 vllm.entrypoints.openai.api_server environment.)
evidence: triton 3.5.1 in /home/ml/venv/bin/python3 · …/triton/backends/nvidia/bin/ptxas: CUDA
          12.8.93 (ran --version) · TRITON_PTXAS_PATH not set · target sm_121a · GPU0 NVIDIA GB10 SM 12.1
fixes:    use-toolkit-ptxas-for-triton path=/usr/local/cuda-13.0/bin/ptxas
```

In the wild: triton-lang/triton#8539 — on a DGX Spark, torch 2.10 nightly with pytorch-triton
3.5.0 fails with `ptxas fatal : Value 'sm_121a' is not defined for option 'gpu-name'` (repro
command: Triton's own `…/triton/backends/nvidia/bin/ptxas`); the maintainers' answer is "use
the PTXAS shipped with CUDA 13 … setting `TRITON_PTXAS_PATH` to `/usr/local/cuda/bin/ptxas`",
which a user confirms fixed it. vllm-project/vllm PR #31338 documents the same error for
`sm_110a` (Jetson Thor).

The fix `use-toolkit-ptxas-for-triton` sets the variable that release reads for the failing
GPUs (`TRITON_PTXAS_PATH`, or `TRITON_PTXAS_BLACKWELL_PATH` for a 3.6+ `ptxas-blackwell`) to
an installed toolkit's `bin/ptxas` that builds every such GPU and that Triton accepts — in the
serving unit's drop-in and the venv's `activate` (or the login profile), with backups and
undo like every environment fix; the what-if proves the finding is gone before it is offered.
For triton 3.3's `TRITON_PTXAS-BLACKWELL_PATH` it is not offered: upgrade Triton instead.
"""

from __future__ import annotations

from tui.core.findings.record import FindingRecord
from tui.core.rules_triton import rule_triton_ptxas

ID = "triton-ptxas-too-old"


FINDING = FindingRecord(
    id=ID,
    title="Triton's ptxas cannot target a visible GPU",
    severities=("critical", "warning"),
    reads=(
        "pythons.packages",
        "pythons.triton_bin_dir",
        "ptxas.version",
        "contexts.vars",
        "gpus.compute_cap",
    ),
    rules=(rule_triton_ptxas,),
    fixes=("use-toolkit-ptxas-for-triton",),
    cause="SM {sm} + Triton's ptxas",
    consequence="Triton kernels fail to compile",
    fires_when=(
        "the ptxas Triton runs for a GPU (its bundled one — per release, from the real wheels — "
        "unless `TRITON_PTXAS_PATH`/`TRITON_PTXAS_BLACKWELL_PATH` names one) cannot target it, or is "
        "a release that Triton rejects"
    ),
    example=(
        "GB10 (SM 12.1) with triton 3.5.1: bundled ptxas 12.8.93 has no `sm_121a` → every Triton "
        "kernel fails"
    ),
    doc=__doc__ or "",
    examples=("triton-lang/triton#8539", "vllm-project/vllm#31338"),
)
