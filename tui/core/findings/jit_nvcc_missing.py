"""FlashInfer will JIT-compile for a visible GPU (its arch check passes) but there is no nvcc at
the toolkit it resolves: no toolkit at all (CUDA only from torch's pip wheels, which ship the
runtime and no compiler), a runtime-only tree (`/usr/local/cuda` of a CUDA *runtime* container
image: `lib64/libcudart.so.*`, no `bin/nvcc`), or a malformed `CUDA_HOME`/`CUDA_PATH` — a
`:`-separated list, a leading `:` (`export CUDA_HOME=$CUDA_HOME:/usr/local/cuda` with
`CUDA_HOME` unset), a value ending in `/bin` or naming `nvcc` itself, quotes or blanks that
become part of the name. With no nvcc, FlashInfer takes the CUDA version from
`torch.version.cuda`, so nothing fails at import; the first JIT build (the first sampling call
in SGLang/vLLM) does. The replay's `compiles` is `false` (`null` for a relative nvcc path).

- `critical`: no prebuilt module spares the build.
- `warning`: a `flashinfer-jit-cache` of the same version is installed, but the architectures
  it was built for are not recorded for its CUDA variant.
- silent: prebuilt modules cover the case (`tui/core/flashinfer_prebuilt.py`, from
  flashinfer-logic.md §8): 0.2.x AOT wheels (`+cuXYZtorchX.Y`); in 0.4.0 – 0.7.0.post1 a
  `flashinfer-jit-cache` whose version is flashinfer's (or starts with it; any version with
  `FLASHINFER_DISABLE_VERSION_CHECK=1`); from 0.7.1 one whose build (`7.5 8.0 8.9 9.0a 10.0a
  10.3a 12.0f` for cu129/cu130 x86_64, plus `11.0a 12.1a` on aarch64) serves every target arch.

Fixes: `use-installed-toolkit` (with the corrected path when `CUDA_HOME` was malformed and the
toolkit it meant is installed), `install-cuda-toolkit-pip` (torch built for CUDA 13),
`install-cuda-toolkit-apt`; each is checked by the what-if to make the finding disappear.

Example — the demo host `pro6000-no-nvcc` (RTX PRO 6000 workstation, driver 580.95.05, SGLang
with torch 2.11.0+cu130 and FlashInfer 0.6.8, no toolkit), the shape of vllm-project/vllm#49497
(torch 2.11.0+cu130, `flashinfer-python==0.6.15.post1`, "FlashInfer sampler JIT crashes engine
startup when nvcc isn't discoverable (default precompiled/wheel install)") and of
flashinfer-ai/flashinfer#1781 (vLLM + FlashInfer 0.3.0: `FileNotFoundError: [Errno 2] No such
file or directory: 'nvcc'` from `top_k_top_p_sampling_from_logits`):

```
[critical] FlashInfer 0.6.8 must compile for NVIDIA RTX PRO 6000 Blackwell Workstation Edition (SM 12.0) but finds no nvcc
FlashInfer 0.6.8 finds no toolkit: no CUDA_HOME, CUDA_PATH, nvcc on PATH or /usr/local/cuda → CUDA
here comes only from pip wheels (nvidia-cuda-nvrtc 13.0.88, nvidia-cuda-runtime 13.0.96), which ship
the runtime but no nvcc → get_cuda_version() falls back to torch.version.cuda 13.0, so its arch
check passes (TARGET_CUDA_ARCHS = ['12.0f']) → the first JIT build (in SGLang/vLLM: the first
sampling call) fails: RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda'
doesn't exist. Prebuilt modules: no flashinfer-jit-cache is installed, so nothing spares that build.
Install a CUDA toolkit (install-cuda-toolkit-pip/-apt) or point CUDA_HOME at one already on the
host. Alternatively flashinfer-jit-cache==0.6.8+cu130 (FlashInfer's own wheel index) ships these
modules prebuilt, so no nvcc would be needed. (Judged in the pid 5151 sglang.launch_server
environment.)
evidence: FlashInfer 0.6.8 in /opt/sglang/bin/python3 · no CUDA_HOME, CUDA_PATH, nvcc on PATH or
          /usr/local/cuda · nvidia-cuda-nvrtc 13.0.88 · nvidia-cuda-runtime 13.0.96 · no CUDA
          toolkit found · GPU0 NVIDIA RTX PRO 6000 Blackwell Workstation Edition SM 12.0 ·
          TARGET_CUDA_ARCHS = ['12.0f'] · replay: compiles = false · flashinfer-jit-cache not
          installed
fixes:    install-cuda-toolkit-pip version=13.0.2  ·  install-cuda-toolkit-apt
```
"""

from __future__ import annotations

from tui.core.findings.record import FindingRecord
from tui.core.rules_jit import rule_jit_nvcc_missing

ID = "jit-nvcc-missing"


FINDING = FindingRecord(
    id=ID,
    title="A needed JIT build finds no nvcc",
    severities=("critical", "warning"),
    reads=(
        "pythons.flashinfer_version",
        "pythons.flashinfer_jit_cache_version",
        "contexts.vars",
        "toolkits.exists",
        "toolkits.cudart",
        "gpus.compute_cap",
        "host.arch",
    ),
    rules=(rule_jit_nvcc_missing,),
    fixes=("use-installed-toolkit", "install-cuda-toolkit-pip", "install-cuda-toolkit-apt"),
    cause="SM {sm} + no nvcc for the JIT",
    consequence="the JIT cannot build",
    fires_when=(
        "FlashInfer must JIT-compile for a visible GPU, no prebuilt `flashinfer-jit-cache` covers "
        "that version and arch, and there is no nvcc where it looks (no toolkit, a runtime-only tree, "
        "a malformed `CUDA_HOME`)"
    ),
    example=(
        "torch 2.11.0+cu130 from pip, no toolkit → FlashInfer falls back to CUDA 13.0, builds `12.0f` "
        "→ the first sampling call raises *Could not find nvcc*"
    ),
    doc=__doc__ or "",
    examples=("vllm-project/vllm#49497", "flashinfer-ai/flashinfer#1781"),
)
