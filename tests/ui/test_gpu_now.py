"""Live GPU state on the host screen (n) and in the detail pane, from the same probe."""

from __future__ import annotations

from tui.core.hosts import Host
from tui.demo.fakehost import mig_uuid
from tui.ui.screens.host import HostScreen
from tui.ui.widgets.fleet_table import FleetTable
from tui.ui.widgets.gpu_view import GpuView
from tui.ui.widgets.host_detail import HostDetail

from .conftest import make_app, probe_all, settle


async def test_gpu_state_on_the_host_screen_and_pane(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
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


async def test_mig_devices_under_their_gpu(demo_hosts: tuple[Host, ...]) -> None:
    """pro6000-mig: the real R610 table says MIG M. Enabled and ``nvidia-smi -L`` lists four
    1g.24gb devices; each is shown under GPU 0 with the UUID CUDA_VISIBLE_DEVICES takes. A GPU
    not in MIG mode (ct200) lists none."""
    app = make_app(demo_hosts)
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
