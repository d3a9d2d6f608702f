"""Live GPU state from the same probe, as nvitop shows it: utilisation, memory used/total and
temperature per GPU (one ``nvidia-smi --query-gpu`` under the probe's step deadline), and the
compute processes from the Processes section of the ``nvidia-smi`` table the probe already
reads (no extra call); the UI names each process's interpreter from the probe's processes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

# what the probe asks for, in this order (csv, noheader, nounits)
STATE_FIELDS = "index,utilization.gpu,memory.used,memory.total,temperature.gpu"

# "|    0   N/A  N/A          4242      C   /root/venv/bin/python3        70123MiB |"
_PROCESS = re.compile(
    r"^\|\s+(?P<gpu>\d+|N/A)\s+\S+\s+\S+\s+(?P<pid>\d+)\s+(?P<type>[CGM+]+)\s+"
    r"(?P<name>.+?)\s+(?P<mem>\d+|N/A)(?:MiB)?\s*\|$"
)


@dataclass(frozen=True)
class MigDevice:
    """A MIG device (GPU instance + compute instance) as ``nvidia-smi -L`` lists it."""

    gpu: int  # the parent GPU's index
    device: int  # its index under that GPU
    profile: str  # "1g.10gb"
    uuid: str  # "MIG-feb88891-…": what CUDA_VISIBLE_DEVICES takes


@dataclass(frozen=True)
class GpuLoad:
    index: int
    utilization_pct: int | None = None  # None: [N/A] / [Not Supported]
    memory_used_mib: int | None = None
    memory_total_mib: int | None = None
    temperature_c: int | None = None


@dataclass(frozen=True)
class GpuProcess:
    gpu: int | None  # None: N/A (MIG, or a driver that does not say)
    pid: int
    type: str  # C compute, G graphics, C+G
    name: str  # as nvidia-smi prints it (a path, possibly cut with "...")
    memory_mib: int | None = None


@dataclass(frozen=True)
class GpuNow:
    """A refresh of the live state alone (``tui.core.run.gpu_now``)."""

    at: datetime  # when the answer came
    load: tuple[GpuLoad, ...] = ()
    processes: tuple[GpuProcess, ...] = ()
    mig_devices: tuple[MigDevice, ...] = ()
    error: str | None = None  # why there is no fresh state (the old one stays shown)


def _number(text: str) -> int | None:
    text = text.strip()
    try:
        return int(float(text))
    except ValueError:
        return None  # [N/A], [Not Supported], [Unknown Error]


def parse_gpu_load(lines: Iterable[str]) -> tuple[GpuLoad, ...]:
    """``0, 45, 1234, 81559, 34`` per GPU; a line that is not that is skipped."""
    out = []
    for line in lines:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 5 or _number(parts[0]) is None:
            continue
        index, util, used, total, temp = (_number(p) for p in parts)
        assert index is not None
        out.append(GpuLoad(index, util, used, total, temp))
    return tuple(out)


def parse_gpu_processes(table: Iterable[str]) -> tuple[GpuProcess, ...]:
    """The rows of the table's Processes section (none when it says none are running)."""
    out = []
    inside = False
    for line in table:
        if "Processes:" in line:
            inside = True
            continue
        if not inside:
            continue
        m = _PROCESS.match(line.rstrip())
        if m is None:
            continue
        gpu = None if m["gpu"] == "N/A" else int(m["gpu"])
        out.append(GpuProcess(gpu, int(m["pid"]), m["type"], m["name"], _number(m["mem"])))
    return tuple(out)
