"""``detective-tui --ingest DIR``: a directory of captured probe outputs opens as a read-only
fleet, every host read from its file on start (nothing is run), inventory hosts without output
unreachable, a truncated file a probe failure with its partial facts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from textual.widgets import Static

from tui.cli import build_parser, main
from tui.core import exitcodes
from tui.core.hosts import Host
from tui.core.reach.standalone import standalone_probe
from tui.core.run.ingest import CapturedSession
from tui.ui.launch import build_app
from tui.ui.screens.host import HostScreen

from .conftest import all_probed, settle


def captured(host: Host) -> str:
    script = standalone_probe(
        host=host.name,
        env=host.env,
        pythons=host.python,
        root=host.root,
        step_timeout_s=10,
        deadline_s=120,
        tree_exec=host.fake_tree,
    )
    done = subprocess.run(["sh", "-s"], input=script, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_a_captured_directory_opens_as_a_fleet(
    demo_hosts: tuple[Host, ...], tmp_path: Path
) -> None:
    by_name = {h.name: h for h in demo_hosts}
    out = tmp_path / "out"
    out.mkdir()
    (out / "ct200.txt").write_text(captured(by_name["ct200"]))
    h100 = captured(by_name["h100-node"]).splitlines(keepends=True)
    (out / "h100-node").write_text("".join(h100[: len(h100) // 2]))
    inv = tmp_path / "hosts.yaml"
    inv.write_text("hosts:\n  - name: ct200\n  - name: h100-node\n  - name: gpu1\n")
    app = build_app(build_parser().parse_args(["--ingest", str(out), "--hosts", str(inv)]))
    assert app.read_only and "Captured output of 3 hosts" in (app.notice or "")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot, lambda: all_probed(pilot.app))
        assert isinstance(app.session, CapturedSession)
        states = {s.name: s for s in app.fleet}
        assert list(app.fleet.order) == ["ct200", "h100-node", "gpu1"]
        assert states["ct200"].status == "done"
        assert states["ct200"].diagnosis.worst() == "critical"
        assert states["h100-node"].status == "probe-failed"
        assert states["h100-node"].result.facts.host.hostname == "h100-node"
        assert states["gpu1"].status == "unreachable"
        assert app.probe_output("ct200")[0].startswith("@@DT1\tbegin")
        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        title = str(app.screen.query_one("#host-title", Static).render())
        assert title.startswith("ct200  captured output  · ") and title.count("ct200") == 1


def test_an_unreadable_ingest_path_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["--ingest", str(tmp_path / "missing")]) == exitcodes.USAGE
    assert "--ingest:" in capsys.readouterr().err
