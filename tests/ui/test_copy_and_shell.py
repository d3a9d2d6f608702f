"""y copies (OSC 52) the selected host's report, a finding or a fix command; S hands the
terminal to an SSH session (a shell for local and demo hosts) and the TUI comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.core import locations
from tui.core.hosts import Host
from tui.core.reach.shell_command import NoShell, ShellCommand, run_session, shell_command
from tui.demo.unreachable import NeverAnswers
from tui.ui.screens.host import HostScreen
from tui.ui.widgets.fleet_table import FleetTable

from .conftest import demo_subset, make_app, probe_all, settle


@pytest.fixture
def demo_hosts(demo_cache: Path) -> tuple[Host, ...]:
    """Only the hosts these tests look at, on the shared trees: ct200, ct201 (whose row the
    copied report must not hold) and the unreachable one."""
    return demo_subset(demo_cache, ("ct200", "ct201", "gone-dark"))


async def test_y_copies_report_finding_and_fix_command(demo_hosts: tuple[Host, ...]) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await probe_all(pilot)
        table = app.screen.query_one("#hosts-table", FleetTable)
        table.cursor_row = table.row_names.index("ct200")
        await pilot.press("y")
        assert app.clipboard.startswith("# detective-tui report")
        assert "| ct200 |" in app.clipboard and "| ct201 |" not in app.clipboard

        app.open_host("ct200")
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("y")
        assert app.clipboard.startswith("### 🔴 critical: `flashinfer-arch-rejected`")
        assert "Evidence: " in app.clipboard
        await pilot.press("w")
        await pilot.press("y")
        first_fix = app.fleet["ct200"].diagnosis.findings[0].fixes[0]
        assert app.clipboard.startswith(f"detective-tui fix ct200 {first_fix.id} ")
        assert app.clipboard.endswith(" --demo")
        message = list(app._notifications)[-1].message
        # no terminal says whether it took OSC 52: the text is also in a file, named
        kept = locations.state_dir() / "clipboard.txt"
        assert message.startswith("Sent the ") and f"it is also in {kept}" in message
        assert kept.read_text() == app.clipboard + "\n"
        assert kept.stat().st_mode & 0o777 == 0o600


async def test_shell_key_says_what_to_run_where_it_cannot_hand_over(
    demo_hosts: tuple[Host, ...],
) -> None:
    app = make_app(demo_hosts)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        table = app.screen.query_one("#hosts-table", FleetTable)
        table.cursor_row = table.row_names.index("ct200")
        await pilot.press("S")  # the test driver cannot suspend: it says what to run
        await pilot.pause()
        message = list(app._notifications)[-1].message
        root = next(h.root for h in demo_hosts if h.name == "ct200")
        assert "run it yourself: cd " in message and str(root) in message
        table.cursor_row = table.row_names.index("gone-dark")
        await pilot.press("S")
        await pilot.pause()
        assert "never answers" in list(app._notifications)[-1].message


def test_ssh_command_uses_our_known_hosts_and_strict_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "ssh_config"
    config.write_text("Host gpu-7\n  HostName 127.0.0.1\n")
    monkeypatch.setenv("DETECTIVE_TUI_SSH_CONFIG", str(config))
    command = shell_command(Host(name="gpu-7", ssh="ml@gpu-7:2222"))
    assert command.argv == (
        "ssh",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        f"UserKnownHostsFile={locations.known_hosts_file()}",
        "-F",
        str(config),
        "-p",
        "2222",
        "ml@gpu-7",
    )
    with pytest.raises(NoShell, match="a simulated demo host that never answers: there is no"):
        shell_command(Host(name="x", transport=NeverAnswers))


def test_a_failed_ssh_session_says_its_exit_status_and_why() -> None:
    """S on a host ssh cannot reach: the real ssh's own error (kept out of the terminal the
    TUI repaints over) and its exit status come back for the notification."""
    command = shell_command(Host(name="dead", ssh="root@127.0.0.1:1"))
    end = run_session(command)
    assert end.failed and end.exit_status == 255
    assert "port 1: Connection refused" in end.message, end.message


def test_a_session_that_ends_well_says_nothing(tmp_path: Path) -> None:
    end = run_session(ShellCommand(("sh", "-c", "exit 0"), cwd=str(tmp_path)))
    assert not end.failed and end.message == ""
