"""The groups view by GPU model, driver or tag (`b` cycles finding → GPU model → driver → tag):
groups computed from each host's last probe (a host not probed or not reached is "unknown"),
the header names the grouping, `space` marks a group, `f` fixes what most of its hosts share."""

from __future__ import annotations

from dataclasses import replace

from textual.widgets import Tree

from tui.core.facts import DriverInfo, Gpu
from tui.core.hosts import Host
from tui.ui.fleet_state import HostState
from tui.ui.grouping import UNKNOWN, FindingGroup, group_by, group_by_finding
from tui.ui.palette import FleetCommands
from tui.ui.screens.fleet_fix import FleetFixScreen

from .conftest import make_app, probe_all, settle
from .test_fleet_views import GONE, HEALTHY, REJECTED, REJECTED_TOO

OLD_DRIVER = DriverInfo(state="ok", driver_version="550.163.01", driver_cuda="12.4")
MIXED = replace(  # an H100 and an A100 in one host, on an older driver, tagged twice
    HEALTHY,
    host=Host(name="mixed", local=True, tags=("rack1", "blackwell")),
    result=replace(
        HEALTHY.result,
        facts=replace(
            HEALTHY.facts,
            driver=OLD_DRIVER,
            gpus=(Gpu(0, "NVIDIA H100 80GB HBM3", "9.0"), Gpu(1, "NVIDIA A100-SXM4-80GB", "8.0")),
        ),
    ),
)
IDLE = HostState(Host(name="new", local=True, tags=("rack1",)))
FLEET = [REJECTED, HEALTHY, GONE, REJECTED_TOO, MIXED, IDLE]


def _groups(by: str) -> dict[str, tuple[str, ...]]:
    return {g.key[1]: g.hosts for g in group_by(FLEET, by)}


def test_by_gpu_model_driver_and_tag() -> None:
    assert list(_groups("gpu").items()) == [
        ("A100-SXM4-80GB", ("mixed",)),
        ("H100 80GB HBM3", ("mixed",)),
        ("RTX PRO 6000 Blackwell Server Edition", ("ct200", "h100", "ct201")),  # fleet order
        (UNKNOWN, ("gone", "new")),  # not reached, not probed: last
    ]
    # numbers as numbers: 550 before 580; the label counts the hosts by their worst finding
    drivers = group_by(FLEET, "driver")
    assert [g.label for g in drivers] == [
        "1 host: driver 550.163.01 (CUDA 12.4)",
        "3 hosts: driver 580.95.05 (CUDA 13.0) · 2 critical",
        f"2 hosts: {UNKNOWN}",
    ]
    assert [g.severity for g in drivers] == ["healthy", "critical", "unreachable"]
    # tags come from the inventory: known before any probe
    assert _groups("tag") == {
        "blackwell": ("ct200", "mixed"),
        "no tag": ("h100", "gone", "ct201"),
        "rack1": ("mixed", "new"),
    }
    assert all(g.finding_id is None for by in ("gpu", "driver", "tag") for g in group_by(FLEET, by))
    assert group_by(FLEET, "finding") == group_by_finding(FLEET)


def test_a_host_being_probed_again_keeps_its_groups() -> None:
    again = replace(REJECTED, status="probing", step="toolkits")
    assert _groups("driver") == {g.key[1]: g.hosts for g in group_by([again, *FLEET[1:]], "driver")}


async def test_b_cycles_the_groupings_and_f_fixes_a_driver_group(
    demo_hosts: tuple[Host, ...],
) -> None:
    hosts = tuple(h for h in demo_hosts if h.name in {"ct200", "ct201", "h100-node", "gone-dark"})
    app = make_app(hosts)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await probe_all(pilot)
        screen = app.screen
        titles = [c[0] for c in FleetCommands(screen)._all()]
        assert "Group by (b)" in titles and "Columns (C)" in titles
        tree = screen.query_one("#groups-tree", Tree)
        seen = []
        for _ in range(4):
            await pilot.press("b")
            await pilot.pause()
            assert screen.grouped
            groups = tuple(n.data for n in tree.root.children)
            assert groups == group_by(app.fleet, screen.grouping)
            header = str(screen.query_one("#hosts-title").render())
            seen.append((screen.grouping, header.split(" · ")[-1]))
        assert seen == [
            ("gpu", "by GPU model (b)"),
            ("driver", "by driver (b)"),
            ("tag", "by tag (b)"),
            ("finding", "by finding (b)"),
        ]
        await pilot.press("b", "b")  # by driver
        await pilot.pause()
        node = next(n for n in tree.root.children if "580.95.05" in n.data.key[1])
        assert set(node.data.hosts) == {"ct200", "ct201"}
        tree.move_cursor(node)
        await pilot.pause()
        await pilot.press("space")
        assert screen.marked == {"ct200", "ct201"}
        await pilot.press("M")
        await pilot.press("f")
        await settle(pilot, lambda: isinstance(app.screen, FleetFixScreen))
        fleet_fix = app.screen
        assert fleet_fix.finding_id == "flashinfer-arch-rejected"
        assert {s.name for s in fleet_fix.states} == {"ct200", "ct201"}
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is screen)
        # back on the group it was opened from
        assert isinstance(tree.cursor_node.data, FindingGroup)
        assert "580.95.05" in tree.cursor_node.data.key[1]
        await pilot.press("g")  # the table again; the header says nothing of groups
        await pilot.pause()
        assert " by " not in str(screen.query_one("#hosts-title").render())
