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

from tui.core.findings.record import FindingRecord
from tui.core.rules_container import rule_container_runtime

ID = "container-without-gpu-runtime"


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
