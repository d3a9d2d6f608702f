"""The toolkit a JIT build uses — the one FlashInfer's replay (or torch's `CUDA_HOME` search)
resolves — is assembled from parts of different CUDA releases: its nvcc, the runtime headers
in its `include/` (`CUDART_VERSION` of `cuda_runtime_api.h`, read by the probe, never
compiled), and, for a pip toolkit (`site-packages/nvidia/cu13`), the dist-info versions of
`nvidia-cuda-nvcc`, `-runtime`, `-crt`, `nvidia-nvvm` and `nvidia-cuda-cccl` in that
interpreter. It fires when they disagree in major.minor. When the compiler and the headers
differ, CCCL (CUB/Thrust/libcu++, included by FlashInfer's kernels) stops every build:
`#error "CUDA compiler and CUDA toolkit headers are incompatible, please check your include
paths"` (`cuda/std/__cccl/cuda_toolkit.h` of the 13.0 wheels; the slow test reads it).
`critical` with FlashInfer installed (it JIT-compiles at run time), `warning` otherwise.

Example — a venv whose `CUDA_HOME` is the pip toolkit, with `pip install nvidia-cuda-nvcc`
having brought nvcc 13.3 next to the CUDA 13.0 runtime torch 2.11.0+cu130 pins (test host
`pip_toolkit_mixed`):

```
[critical] The JIT toolkit /opt/venv/lib/python3.11/site-packages/nvidia/cu13 mixes CUDA 13.0 and 13.3
The toolkit a JIT build uses here (CUDA_HOME=/opt/venv/lib/python3.11/site-packages/nvidia/cu13) is assembled from
parts of different CUDA releases: nvcc 13.3; runtime headers 13.0; nvidia-cuda-nvcc 13.3; nvidia-cuda-runtime 13.0;
nvidia-cuda-crt 13.3; nvidia-nvvm 13.3. nvcc 13.3 compiles against the CUDA 13.0 runtime headers of …/nvidia/cu13/
include → CCCL (CUB/Thrust, included by FlashInfer's and most CUDA extensions' kernels) stops every such build with
'#error "CUDA compiler and CUDA toolkit headers are incompatible, please check your include paths"'. Pin the pip
wheels of /opt/venv/bin/python3 to CUDA 13.0 (the runtime torch uses), or point CUDA_HOME at a complete toolkit of
that release.
fixes:    align-cuda-wheels version=13.0.2
```

In the wild: flashinfer-ai/flashinfer#3493 (and vllm-project/vllm#44305) — `CUDA_HOME` at
`site-packages/nvidia/cu13` with nvcc 13.3.33 and torch 2.11.0+cu130 gives "CUDA compiler and
toolkit headers are incompatible" on the first JIT build.

Fixes: `use-installed-toolkit` when a toolkit whose nvcc and headers are one release is on
disk; `align-cuda-wheels` (param `version`, a `cuda-toolkit` release, default the newest of
the runtime's minor) runs `pip install "cuda-toolkit[nvcc,crt,nvvm,cccl]==<release>"` in that
venv — the metapackage pins every part exactly — behind a check that does nothing when every
part is already of that minor; a pip plan like `match-extension-to-torch`'s: its undo puts
back every package as the `pip freeze` recorded before it ran, and the venv's files as they
were (README, *The pip plans*).
"""

from __future__ import annotations

from tui.core.findings.record import FindingRecord
from tui.core.rules_headers import rule_headers_mismatch

ID = "toolkit-headers-mismatch"


FINDING = FindingRecord(
    id=ID,
    title="The JIT toolkit's nvcc, headers and wheels disagree",
    severities=("critical", "warning"),
    reads=("toolkits.version", "toolkits.headers_version", "pythons.packages", "contexts.vars"),
    rules=(rule_headers_mismatch,),
    fixes=("use-installed-toolkit", "align-cuda-wheels"),
    cause="nvcc {jit} vs its headers/wheels",
    consequence="JIT builds fail in the headers",
    implicates=("jit",),
    fires_when=(
        "the parts of the JIT toolkit disagree in major.minor: nvcc, `CUDART_VERSION` of its "
        "`include/cuda_runtime_api.h`, and for a pip toolkit the "
        "`nvidia-cuda-nvcc`/`-runtime`/`-crt`/`nvidia-nvvm`/`nvidia-cuda-cccl` wheels"
    ),
    example=(
        'pip nvcc 13.3 with the 13.0 runtime headers → CCCL `#error "CUDA compiler and CUDA toolkit '
        'headers are incompatible"`'
    ),
    doc=__doc__ or "",
    examples=("flashinfer-ai/flashinfer#3493", "vllm-project/vllm#44305"),
)
