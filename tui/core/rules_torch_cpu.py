"""``torch-cpu-build``: a CPU-only torch where a GPU is visible and a GPU server is installed.

A ``+cpu`` wheel (PyPI's aarch64 default up to 2.10, PyTorch's cpu index, a requirements file
that pinned it) has ``torch.version.cuda = None``: ``torch.cuda.is_available()`` is False, so
vLLM/SGLang find no CUDA device and FlashInfer sees no GPU. The fix installs the CUDA build of
the same release that the driver runs (``tui.core.torch_variants``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core.facts import Facts, PythonEnv
from tui.core.findings import Finding
from tui.core.rulekit import finding, gpu_evidence, gpu_names
from tui.core.torch_variants import cuda_variant_for, is_cpu_build

if TYPE_CHECKING:
    from tui.core.subject import Subject

FINDING = "torch-cpu-build"
SERVERS = ("vllm", "sglang", "sgl-kernel", "flashinfer-python", "flashinfer")


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
            FINDING,
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
