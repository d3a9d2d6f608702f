"""MIG (Multi-Instance GPU) from nvidia-smi: each GPU's MIG mode and the MIG devices.

The default table's third row of each GPU ends with the "MIG M." cell (``Enabled``,
``Disabled``, ``N/A``; the R610 table of ``shared/fixtures`` shows ``Enabled``). ``nvidia-smi
-L`` lists each MIG device under its GPU, in the layout of the MIG user guide and of the public
capture in DataDog/datadog-agent#33120::

    GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16)
      MIG 1g.10gb     Device  0: (UUID: MIG-feb88891-0321-5fef-9c87-d4af3b54259e)

From R470 each MIG device has a ``MIG-`` UUID that ``CUDA_VISIBLE_DEVICES`` takes.
"""

from __future__ import annotations

import re

from tui.core.facts import MigDevice

_GPU_LINE = re.compile(r"^GPU (\d+): ")
_MIG_LINE = re.compile(r"^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)\s]+)\)")
_TABLE_ROW = re.compile(r"^\|\s+(\d+)\s+\S")
_LAST_CELL = re.compile(r"\|\s*(Enabled|Disabled|N/A)\s*\|\s*$")


def parse_mig_devices(listing: str) -> tuple[MigDevice, ...]:
    """``nvidia-smi -L`` → the MIG devices, each with its parent GPU's index."""
    out: list[MigDevice] = []
    gpu: int | None = None
    for line in listing.splitlines():
        m = _GPU_LINE.match(line)
        if m:
            gpu = int(m.group(1))
            continue
        m = _MIG_LINE.match(line)
        if m and gpu is not None:
            out.append(MigDevice(gpu, int(m.group(2)), m.group(1), m.group(3)))
    return tuple(out)


def parse_mig_modes(table: str) -> dict[int, str]:
    """The default table → {GPU index: "Enabled" | "Disabled" | "N/A"}."""
    modes: dict[int, str] = {}
    lines = table.splitlines()
    for i, line in enumerate(lines):
        m = _TABLE_ROW.match(line)
        if m and i + 2 < len(lines):
            cell = _LAST_CELL.search(lines[i + 2])
            if cell:
                modes[int(m.group(1))] = cell.group(1)
    return modes
