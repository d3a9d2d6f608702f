"""A CPU-only torch (`+cpu`, `torch.version.cuda = None` in its `torch/version.py`) in an
interpreter that serves on GPUs: a GPU is visible to it and vLLM, SGLang, sgl-kernel or
FlashInfer is installed next to it. `torch.cuda.is_available()` is False, so the server finds
no CUDA device (vLLM: *AssertionError: Torch not compiled with CUDA enabled*) and FlashInfer
detects no GPU. Typical causes: a requirements file resolved against PyTorch's cpu index, a
`pip install torch` on aarch64 before 2.11 (PyPI's aarch64 wheels were CPU-only up to 2.10,
cuda-facts §5.1), an environment copied from a build machine. `critical`. A CPU torch with no
GPU server beside it (a notebook environment), a ROCm build and a host without a visible GPU
stay silent.

Fix `install-cuda-torch` (param `cuda=`): the CUDA build of the *same* torch release, the
newest variant PyTorch publishes for it (stable and experimental, RELEASE.md's compatibility
matrix as recorded in cuda-facts §5.1, `tui/core/tables/torch_variants.py`) that the driver runs
(minor-version compatibility considered) and that has kernels for every visible GPU. A pip plan
from that variant's index; undo reinstalls the recorded `+cpu` build from the cpu index.

Example — the demo host `h100-cpu-torch` (the H100 node whose vLLM venv got torch 2.13.0+cpu —
the real `torch/version.py` of that wheel; the shape of vllm-project/vllm#6655 and
vllm-project/vllm-ascend#516, *Torch not compiled with CUDA enabled*):

```
[critical] torch 2.13.0+cpu is a CPU-only build on a GPU host
/opt/venv/bin/python3 has torch 2.13.0+cpu, built without CUDA (torch.version.cuda is None), next to
vllm 0.10.1: torch.cuda.is_available() is False, so the server finds no CUDA device on NVIDIA H100
80GB HBM3 (SM 9.0) and FlashInfer detects no GPU. Install torch 2.13.0+cu126, the CUDA 12.6 build of
the same release this driver runs (install-cuda-torch). (Judged in the login shell (profile files
under the root) environment.)
evidence: torch 2.13.0+cpu (torch.version.cuda None) · vllm 0.10.1 · GPU0-3 NVIDIA H100 80GB HBM3 SM
          9.0 · driver 570.148.08 (CUDA 12.8)
fixes:    install-cuda-torch cuda=12.6('torch-cpu-build',)
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui.core.facts import Facts, PythonEnv
from tui.core.findings import Finding
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding, gpu_evidence, gpu_names
from tui.core.rules.subject import Subject
from tui.core.tables.torch_variants import cuda_variant_for, is_cpu_build

# The rule, in short:
# ``torch-cpu-build``: a CPU-only torch where a GPU is visible and a GPU server is installed.
#
# A ``+cpu`` wheel (PyPI's aarch64 default up to 2.10, PyTorch's cpu index, a requirements file
# that pinned it) has ``torch.version.cuda = None``: ``torch.cuda.is_available()`` is False, so
# vLLM/SGLang find no CUDA device and FlashInfer sees no GPU. The fix installs the CUDA build of
# the same release that the driver runs (``tui.core.tables.torch_variants``).

ID = "torch-cpu-build"

SERVERS = ("vllm", "sglang", "sgl-kernel", "sglang-kernel", "flashinfer-python", "flashinfer")


def serving_packages(py: PythonEnv) -> list[str]:
    found = [f"{name} {py.packages[name]}" for name in SERVERS if name in py.packages]
    if py.flashinfer_version and not any(f.startswith("flashinfer") for f in found):
        found.append(f"flashinfer {py.flashinfer_version}")
    return found


def variant_for(facts: Facts, py: PythonEnv, gpus: Sequence[tuple[int, int]]) -> str | None:
    d = facts.driver
    return cuda_variant_for(
        py.torch_version or "",
        d.driver_version or d.proc_version,
        d.driver_cuda,
        gpus,
        facts.host.arch,
    )


def rule_torch_cpu_build(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    if facts.driver.state != "ok":
        return
    for s in subs:
        py = s.python
        if py is None or not is_cpu_build(py.torch_version, py.torch_cuda) or not s.devices:
            continue
        servers = serving_packages(py)
        if not servers:
            continue
        cuda = variant_for(facts, py, s.devices)
        advice = (
            f"Install torch {py.torch_version.split('+')[0]}+cu{cuda.replace('.', '')}, the "
            f"CUDA {cuda} build of the same release this driver runs (install-cuda-torch)."
            if cuda
            else "No CUDA build of this torch release that this driver runs is recorded: "
            "upgrade the driver or install another torch release."
        )
        yield finding(
            ID,
            "critical",
            f"torch {py.torch_version} is a CPU-only build on a GPU host",
            f"{py.path} has torch {py.torch_version}, built without CUDA (torch.version.cuda is "
            f"None), next to {', '.join(servers)}: torch.cuda.is_available() is False, so the "
            f"server finds no CUDA device on {gpu_names(facts, s.devices)} and FlashInfer "
            f"detects no GPU. {advice}",
            [
                f"torch {py.torch_version} (torch.version.cuda None)",
                *servers,
                *gpu_evidence(facts, s.devices),
                f"driver {facts.driver.driver_version} (CUDA {facts.driver.max_cuda or '?'})",
            ],
            s,
        )


FINDING = FindingRecord(
    id=ID,
    title="A CPU-only torch where GPUs serve",
    severities=("critical",),
    reads=(
        "pythons.torch_version",
        "pythons.torch_cuda",
        "pythons.packages",
        "driver.state",
        "driver.driver_version",
        "gpus.compute_cap",
    ),
    rules=(rule_torch_cpu_build,),
    fixes=("install-cuda-torch",),
    cause="CPU-only torch",
    consequence="the service cannot use the GPUs",
    fires_when=(
        "a CPU-only torch (`torch.version.cuda` None) where a GPU is visible and "
        "vLLM/SGLang/FlashInfer is installed"
    ),
    example=(
        "torch 2.13.0+cpu in a vLLM venv on 4× H100 → *Torch not compiled with CUDA enabled*; fix: "
        "`install-cuda-torch cuda=12.6` (what driver 570 runs for 2.13)"
    ),
    doc=__doc__ or "",
    examples=("vllm-project/vllm#6655", "vllm-project/vllm-ascend#516"),
)
