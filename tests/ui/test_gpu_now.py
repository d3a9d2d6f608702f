"""Live GPU state on the host screen (n) and in the detail pane, from the same probe."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.core.hosts import Host
from tui.demo.fakehost import mig_uuid
from tui.ui.screens.host import HostScreen
from tui.ui.widgets.fleet_table import FleetTable
from tui.ui.widgets.gpu_view import GpuView
from tui.ui.widgets.host_detail import HostDetail

from .conftest import demo_subset, host_root, make_app, probe_all, settle


@pytest.fixture
def gpu_hosts(demo_cache: Path) -> tuple[Host, ...]:
    """ct200 (8 GPUs, no MIG), pro6000-mig and no-driver, on the shared trees."""
    return demo_subset(demo_cache, ("ct200", "pro6000-mig", "no-driver"))


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Host, ...]:
    """ct200 on a private tree: the refresh test rewrites its nvidia-smi's answers."""
    return demo_subset(tmp_path / "trees", ("ct200",))


async def test_gpu_state_on_the_host_screen_and_pane(gpu_hosts: tuple[Host, ...]) -> None:
    app = make_app(gpu_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)
        table.cursor_row = table.row_names.index("ct200")
        detail = app.screen.query_one(HostDetail)
        await settle(pilot, lambda: str(detail.render()).startswith("ct200"))
        pane = str(detail.render())
        assert "8 GPUs now" in pane, pane
        assert "8 GPUs now · 0% busy · 689.9/764.7 GiB · 35 °C" in pane
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("n")
        text = str(app.screen.query_one(GpuView).render())
        assert "  7  RTX PRO 6000 Blackwell Serv…    0%     86.2 / 95.6     35 °C" in text
        assert "GPU 3  pid 4303    sglang::scheduler_TP3  86.2 GiB" in text
        app.open_host("no-driver")
        await settle(pilot, lambda: app.screen.host_name == "no-driver")
        assert "No live GPU state" in str(app.screen.query_one(GpuView).render())


async def test_mig_devices_under_their_gpu(gpu_hosts: tuple[Host, ...]) -> None:
    """pro6000-mig: the real R610 table says MIG M. Enabled and ``nvidia-smi -L`` lists four
    1g.24gb devices; each is shown under GPU 0 with the UUID CUDA_VISIBLE_DEVICES takes. A GPU
    not in MIG mode (ct200) lists none."""
    app = make_app(gpu_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        app.open_host("pro6000-mig")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("n")
        lines = str(app.screen.query_one(GpuView).render()).splitlines()
        row = next(i for i, line in enumerate(lines) if line.startswith("  0  RTX PRO 6000"))
        for device in range(4):
            uuid = mig_uuid("pro6000-mig", 0, device)
            assert lines[row + 1 + device] == f"     MIG 1g.24gb    device {device}  {uuid}"
        app.open_host("ct200")
        await settle(pilot, lambda: app.screen.host_name == "ct200")
        assert "MIG" not in str(app.screen.query_one(GpuView).render())


async def test_refresh_reads_the_state_again(fleet: tuple[Host, ...]) -> None:
    """N reads the live state again through the probe's nvidia-smi part: a GPU the fake
    nvidia-smi now says is 97% busy shows so, with when it was read; the probe's own state
    said 0% and its age."""
    app = make_app(fleet)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("n")
        view = app.screen.query_one(GpuView)
        text = str(view.render())
        assert text.startswith("As of the probe at 03:04:05 (just now) · N reads it again")
        assert "  0  RTX PRO 6000 Blackwell Serv…    0%" in text
        # the probe's one --query-gpu call (all.out) and, where it is refused, the state call
        smi = host_root(fleet, "ct200") / "usr/share/detective-tui-fake/nvidia-smi"
        lines = (smi / "state.out").read_text().splitlines()
        lines[0] = "0, 97, 88309, 97887, 61"
        (smi / "state.out").write_text("\n".join(lines) + "\n")
        lines = (smi / "all.out").read_text().splitlines()
        fields = lines[0].split(", ")
        fields[-5:-2] = ["97 %", "88309 MiB", "61"]
        lines[0] = ", ".join(fields)
        (smi / "all.out").write_text("\n".join(lines) + "\n")
        await pilot.press("N")
        await settle(pilot, lambda: view.fresh is not None)
        assert view.fresh is not None and view.fresh.error is None
        text = str(view.render())
        assert text.startswith("Live: read at 03:04:05 (just now)")
        assert "  0  RTX PRO 6000 Blackwell Serv…   97%     86.2 / 95.6     61 °C" in text
        assert "  1  RTX PRO 6000 Blackwell Serv…    0%" in text


async def test_refresh_of_a_host_without_a_driver_says_why(gpu_hosts: tuple[Host, ...]) -> None:
    app = make_app(gpu_hosts)
    async with app.run_test(size=(120, 40)) as pilot:
        await probe_all(pilot)
        app.open_host("no-driver")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("n", "N")
        view = app.screen.query_one(GpuView)
        await settle(pilot, lambda: view.fresh is not None)
        text = str(view.render())
        assert text.startswith("Refresh at 03:04:05 failed: nvidia-smi: NVIDIA-SMI has failed")
        assert "No live GPU state" in text
