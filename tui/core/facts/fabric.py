"""The NVLink fabric from the probe's ``smi fabric`` and ``fm`` records.

``nvidia-smi --query-gpu=index,fabric.state,fabric.status --format=csv,noheader`` prints a
line per GPU, e.g. ``0, In Progress, N/A`` — the values of ``nvidia-smi -q``'s Fabric section
(``State : In Progress``, ``Status : N/A`` on a 580.159.04 HGX node whose fabric manager had
not registered its GPUs, NVIDIA/gpu-operator#2511). ``[N/A]`` and ``[Not Supported]`` in
brackets, as nvidia-smi writes fields it cannot read, read as ``N/A`` and ``Not Supported``.
"""

from __future__ import annotations

from collections.abc import Iterable

from tui.core.facts import FabricInfo, GpuFabric


def _value(cell: str) -> str:
    return cell.strip().removeprefix("[").removesuffix("]")


def parse_fabric(lines: Iterable[str]) -> tuple[GpuFabric, ...]:
    """The query's lines → one ``GpuFabric`` per line of three cells."""
    out: list[GpuFabric] = []
    for line in lines:
        cells = line.split(",")
        if len(cells) != 3:
            continue
        index = cells[0].strip()
        out.append(
            GpuFabric(int(index) if index.isdigit() else None, _value(cells[1]), _value(cells[2]))
        )
    return tuple(out)


def fabric_info(
    lines: Iterable[str], rc: int | None, fm: Iterable[tuple[str, str, str]]
) -> FabricInfo:
    """The fabric query (its lines and exit status) and the ``fm`` records (``pid``, ``pkg``)."""
    fm = tuple(fm)
    return FabricInfo(
        gpus=parse_fabric(lines) if rc == 0 else (),
        query_rc=rc,
        manager_pids=tuple(int(n) for k, n, _ in fm if k == "pid" and n.isdigit()),
        packages=tuple((n, v) for k, n, v in fm if k == "pkg"),
    )
