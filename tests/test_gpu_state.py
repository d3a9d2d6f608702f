"""Live GPU state: the --query-gpu state lines and the table's Processes rows, parsed; and
through the real probe of the reference demo host (its SYNTHETIC load)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tui.core.facts.gpu_state import GpuLoad, GpuProcess, parse_gpu_load, parse_gpu_processes
from tui.core.run.runner import Session
from tui.demo.fakehost import SYNTHETIC_TEMPERATURE_C, fixture_text
from tui.demo.fleet import demo_fleet

TABLE_TAIL = """\
+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|    0   N/A  N/A          4300      C   sglang::scheduler_TP0                   88312MiB |
|  N/A   N/A  N/A          4301      C   /usr/bin/python3                             N/A |
+-----------------------------------------------------------------------------------------+
"""


def test_state_lines() -> None:
    lines = ["0, 45, 1234, 81559, 34", "1, [N/A], [N/A], 81559, [Not Supported]", "garbage"]
    assert parse_gpu_load(lines) == (
        GpuLoad(0, 45, 1234, 81559, 34),
        GpuLoad(1, None, None, 81559, None),
    )


def test_processes_section() -> None:
    assert parse_gpu_processes(TABLE_TAIL.splitlines()) == (
        GpuProcess(0, 4300, "C", "sglang::scheduler_TP0", 88312),
        GpuProcess(None, 4301, "C", "/usr/bin/python3", None),
    )
    idle = fixture_text("nvidia-smi/nvidia-smi-rtx5090-570.124.06.txt")  # a real capture
    assert "No running processes found" in idle
    assert parse_gpu_processes(idle.splitlines()) == ()


def test_probe_reads_live_state_of_the_reference_host(tmp_path: Path) -> None:
    (ct200,) = [h for h in demo_fleet(tmp_path) if h.name == "ct200"]

    async def probe():
        async with Session() as session:
            return await session.probe(ct200)

    facts = asyncio.run(probe()).facts
    assert len(facts.gpu_load) == 8
    assert facts.gpu_load[3] == GpuLoad(3, 0, 88312, 97887, SYNTHETIC_TEMPERATURE_C)
    assert [(p.gpu, p.pid) for p in facts.gpu_processes] == [(i, 4300 + i) for i in range(8)]
