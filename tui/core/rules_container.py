"""``container-without-gpu-runtime``: a container started without the NVIDIA GPU runtime.

Inside a container (``/.dockerenv``, ``/run/.containerenv``, a Kubernetes service account, a
container cgroup) with no ``/dev/nvidia*`` node and no ``libcuda.so.1``/``libnvidia-ml.so.1``,
nothing CUDA can run — but the cause is how the container was started, not the host's driver:
the NVIDIA Container Toolkit injects both when asked (``docker run --gpus``, CDI's
``--device nvidia.com/gpu=all``, a pod's ``nvidia.com/gpu`` limit). The host's kernel module
is often visible through ``/proc/driver/nvidia/version``, which proves the driver is there.
``no-nvidia-driver`` stays silent in that case (``applies``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core.facts import Facts
from tui.core.findings import Finding, Severity
from tui.core.gpu_scope import container_scope
from tui.core.rulekit import finding

if TYPE_CHECKING:
    from tui.core.subject import Subject

FINDING = "container-without-gpu-runtime"
GPU_SERVERS = ("vllm", "sglang", "sgl-kernel", "flashinfer-python")


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
        FINDING,
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
