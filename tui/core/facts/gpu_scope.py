"""Whose GPUs the facts show: a node's, or what a container runtime put into a pod/container.

Inside a container (``ContainerInfo.markers``), ``nvidia-smi``, ``/dev/nvidia*`` and the driver
libraries are the ones the NVIDIA Container Toolkit injected — only the GPUs the container was
given, which may be fewer than the node has. What it was given is read where the runtime leaves
it: PID 1's ``NVIDIA_VISIBLE_DEVICES`` (GPU indices or ``GPU-…``/``MIG-…`` UUIDs, ``all``,
``none``, ``void``; the device plugin's default ``envvar`` strategy sets it to the allocated
devices) and, with the device plugin's ``volume-mounts`` strategy, one file per allocated device
under ``/var/run/nvidia-container-devices`` (``NVIDIA_VISIBLE_DEVICES`` then names that
directory; NVIDIA/k8s-device-plugin ``internal/plugin/server.go``). A pod's ``nvidia.com/gpu``
limit itself is not readable from inside: the downward API exposes only cpu, memory,
ephemeral-storage and hugepages limits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_GPU_NODE = re.compile(r"/dev/nvidia\d+$")
RUNTIME_VARS = ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")  # shown in the note


def container_scope(markers: Sequence[str]) -> str | None:
    """``"pod"`` for Kubernetes markers, ``"container"`` for any other, ``None`` without."""
    if any("kubernetes" in m.lower() or "kubepods" in m for m in markers):
        return "pod"
    return "container" if markers else None


def scope_note(container: Mapping[str, Any]) -> str | None:
    """One sentence saying that the GPUs shown are the pod's/container's, from the JSON form of
    ``ContainerInfo`` (``Facts.to_json()["container"]``); ``None`` outside a container."""
    scope = container.get("scope")
    if scope is None:
        return None
    nodes = [d for d in container.get("devices", ()) if _GPU_NODE.match(d)]
    env = container.get("runtime_env") or {}
    asked = [f"{k}={env[k]}" for k in RUNTIME_VARS if k in env]
    if container.get("allocated"):
        asked.append("allocated by the device plugin: " + ", ".join(container["allocated"]))
    if not nodes and not container.get("driver_libs"):
        return (
            f"GPU visibility is this {scope}'s: the runtime put no GPU device node and no "
            f"driver library into it{' (' + '; '.join(asked) + ')' if asked else ''}."
        )
    shown = ", ".join(nodes[:4]) + (", …" if len(nodes) > 4 else "")
    given = [f"{len(nodes)} GPU device node{'s' if len(nodes) != 1 else ''}"]
    given[0] += f" ({shown})" if nodes else ""
    whose = (
        "all of the node's GPUs"
        if env.get("NVIDIA_VISIBLE_DEVICES") == "all"
        else "not necessarily all of the node's"
    )
    return (
        f"GPU visibility is this {scope}'s: nvidia-smi, the GPUs, /dev/nvidia* and the driver "
        f"libraries here are what the runtime put into the {scope} — {'; '.join(given + asked)}"
        f" — {whose}."
    )
