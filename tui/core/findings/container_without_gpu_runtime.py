"""The probe runs inside a container (`/.dockerenv`, podman's `/run/.containerenv`, a
Kubernetes service-account token, a container cgroup of PID 1) that has no `/dev/nvidia*`
device node and no `libcuda.so.1`/`libnvidia-ml.so.1` in the library directories (including
GKE's `/usr/local/nvidia/lib64` and WSL's `/usr/lib/wsl/lib`). The NVIDIA Container Toolkit
injects exactly those when a container is started with GPUs, so this one was started without
them — a runtime problem, not the host's driver: the host's kernel module is often visible
through `/proc/driver/nvidia/version`, which the explanation quotes as proof. `no-nvidia-driver`
(which would advise installing a driver) stays silent here. `critical` when something installed
needs a GPU (a CUDA torch, vLLM, SGLang, FlashInfer, or `NVIDIA_VISIBLE_DEVICES` set by the
image); `info` otherwise (a build container). The advice follows the markers: `--gpus all` and
`nvidia-ctk runtime configure` for Docker, CDI's `--device nvidia.com/gpu=all` for Podman, the
pod's `resources.limits: nvidia.com/gpu` with the device plugin for Kubernetes. No fix id: the
change belongs to how the container is started.

Example — the demo host `vllm-ctr-no-gpus` (the H100 node's vLLM image run with `docker run`
and no `--gpus`; the shape of abetlen/llama-cpp-python#1882, "CUDA not detected when running
without --gpus all", and of zzzyuqing/DreamMat#14, where `torch.cuda.is_available()` was False
in the image until the NVIDIA Container Toolkit was installed and `--gpus all` added):

```
[critical] Inside a container started without the NVIDIA GPU runtime
This runs in a container (/.dockerenv) with no /dev/nvidia* device nodes and no libcuda.so.1 or
libnvidia-ml.so.1: the NVIDIA Container Toolkit injects both when the container is started with
GPUs, so it was started without them. CUDA finds no device (torch.cuda.is_available() is False; the
CUDA runtime reports error 35 or 100) and nvidia-smi is missing or fails. Installing a driver inside
the container would not help. The host's NVIDIA kernel module 570.148.08 is loaded (its
/proc/driver/nvidia/version is visible here), so the driver is fine: this container was simply not
given the GPUs. For Docker: install the NVIDIA Container Toolkit on the host (nvidia-ctk runtime
configure --runtime=docker, then restart dockerd) and start the container with --gpus all (or
--runtime=nvidia / --device nvidia.com/gpu=all with CDI). Installed here and needing a GPU: torch
2.8.0+cu128 (CUDA 12.8), vllm 0.10.1, flashinfer-python 0.6.8.
evidence: container marker: /.dockerenv · no /dev/nvidia* device nodes · no libcuda.so.1 or
          libnvidia-ml.so.1 in the library directories · driver state: no-nvidia-smi ·
          /proc/driver/nvidia/version: 570.148.08 · torch 2.8.0+cu128 (CUDA 12.8) · vllm 0.10.1 ·
          flashinfer-python 0.6.8
--
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui.core.facts import Facts
from tui.core.facts.gpu_scope import container_scope
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding
from tui.core.rules.subject import Subject

# The rule, in short:
# ``container-without-gpu-runtime``: a container started without the NVIDIA GPU runtime.
#
# Inside a container (``/.dockerenv``, ``/run/.containerenv``, a Kubernetes service account, a
# container cgroup) with no ``/dev/nvidia*`` node and no ``libcuda.so.1``/``libnvidia-ml.so.1``,
# nothing CUDA can run — but the cause is how the container was started, not the host's driver:
# the NVIDIA Container Toolkit injects both when asked (``docker run --gpus``, CDI's
# ``--device nvidia.com/gpu=all``, a pod's ``nvidia.com/gpu`` limit). The host's kernel module
# is often visible through ``/proc/driver/nvidia/version``, which proves the driver is there.
# ``no-nvidia-driver`` stays silent in that case (``applies``).

ID = "container-without-gpu-runtime"

GPU_SERVERS = ("vllm", "sglang", "sgl-kernel", "sglang-kernel", "flashinfer-python")


def applies(facts: Facts) -> bool:
    c = facts.container
    return bool(c.markers) and not c.devices and not c.driver_libs


def _needs_gpu(facts: Facts) -> list[str]:
    out = []
    for p in facts.pythons:
        if p.torch_cuda:
            out.append(f"torch {p.torch_version} (CUDA {p.torch_cuda})")
        out += [f"{n} {p.packages[n]}" for n in GPU_SERVERS if n in p.packages]
    out += [
        f"NVIDIA_VISIBLE_DEVICES={c.vars['NVIDIA_VISIBLE_DEVICES']} ({c.label})"
        for c in facts.contexts
        if c.vars.get("NVIDIA_VISIBLE_DEVICES")
    ]
    return list(dict.fromkeys(out))


def _how(markers: Sequence[str]) -> str:
    if container_scope(markers) == "pod":
        return (
            "In Kubernetes: request the GPUs in the pod spec (resources.limits: "
            "nvidia.com/gpu: N), with the NVIDIA device plugin (or GPU Operator) on the node "
            "and, where the cluster uses one, runtimeClassName: nvidia."
        )
    if any("containerenv" in m or "libpod" in m for m in markers):
        return (
            "For Podman: generate the CDI spec on the host (nvidia-ctk cdi generate) and start "
            "the container with --device nvidia.com/gpu=all."
        )
    return (
        "For Docker: install the NVIDIA Container Toolkit on the host (nvidia-ctk runtime "
        "configure --runtime=docker, then restart dockerd) and start the container with "
        "--gpus all (or --runtime=nvidia / --device nvidia.com/gpu=all with CDI)."
    )


def rule_container_runtime(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    if not applies(facts) or facts.driver.state == "ok":
        return
    c = facts.container
    needs = _needs_gpu(facts)
    severity: Severity = "critical" if needs else "info"
    host_driver = facts.driver.proc_version
    proof = (
        f" The host's NVIDIA kernel module {host_driver} is loaded (its /proc/driver/nvidia/"
        "version is visible here), so the driver is fine: this container was simply not given "
        "the GPUs."
        if host_driver
        else ""
    )
    tail = (
        f" Installed here and needing a GPU: {', '.join(needs[:3])}."
        if needs
        else " Nothing installed here needs a GPU; if this container should not have one, "
        "ignore this."
    )
    yield finding(
        ID,
        severity,
        "Inside a container started without the NVIDIA GPU runtime",
        "This runs in a container ("
        + ", ".join(c.markers)
        + ") with no /dev/nvidia* device nodes and no libcuda.so.1 or libnvidia-ml.so.1: the "
        "NVIDIA Container Toolkit injects both when the container is started with GPUs, so "
        "it was started without them. CUDA finds no device (torch.cuda.is_available() is "
        "False; the CUDA runtime reports error 35 or 100) and nvidia-smi is missing or fails. "
        "Installing a driver inside the container would not help."
        + proof
        + " "
        + _how(c.markers)
        + tail,
        [
            *(f"container marker: {m}" for m in c.markers),
            "no /dev/nvidia* device nodes",
            "no libcuda.so.1 or libnvidia-ml.so.1 in the library directories",
            f"driver state: {facts.driver.state}",
            f"/proc/driver/nvidia/version: {host_driver}"
            if host_driver
            else "/proc/driver/nvidia/version absent",
            *needs[:4],
        ],
    )


FINDING = FindingRecord(
    id=ID,
    title="A container without the GPU runtime",
    severities=("critical", "info"),
    reads=(
        "container.markers",
        "container.devices",
        "container.driver_libs",
        "driver.state",
        "driver.proc_version",
    ),
    rules=(rule_container_runtime,),
    cause="container without the GPU runtime",
    consequence="no GPU inside",
    fires_when=(
        "inside a container (`/.dockerenv`, `/run/.containerenv`, a k8s service account) with no "
        "`/dev/nvidia*` and no injected `libcuda.so.1`/`libnvidia-ml.so.1`: the runtime, not the "
        "driver (`no-nvidia-driver` stays silent)"
    ),
    example=(
        "vLLM image started without `--gpus`; the host's module 570.148.08 shows in "
        "`/proc/driver/nvidia/version`"
    ),
    doc=__doc__ or "",
    examples=("abetlen/llama-cpp-python#1882", "zzzyuqing/DreamMat#14"),
)
