"""Issue 9 (e) on the TUI: the secret corpus (tests/secret_corpus.py) planted on a fake host
never reaches the host screen (headline, findings, replay, fixes), its raw probe output tab,
or the session saved with ctrl+s."""

from __future__ import annotations

from pathlib import Path

from secret_corpus import corpus_host, leaks
from textual.widgets import Static

from tui.core import locations
from tui.core.hosts import Host
from tui.ui.screens.host import HostScreen
from tui.ui.widgets.redacted_log import RedactedLog

from .conftest import all_probed, make_app, settle


async def test_no_planted_secret_reaches_the_screens(tmp_path: Path) -> None:
    fake = corpus_host(tmp_path / "root")
    host = Host(
        name="ct200", local=True, root=str(fake.root), simulate="tree", python=tuple(fake.pythons)
    )
    app = make_app([host])
    exports = locations.state_dir() / "exports"
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("P")
        await settle(pilot, lambda: all_probed(app))
        app.push_screen(HostScreen("ct200"))
        await settle(pilot, lambda: isinstance(app.screen, HostScreen))
        shown: dict[str, str] = {}
        for tab in ("tab-findings", "tab-replay", "tab-fixes", "tab-output"):
            app.screen.action_show_tab(tab)
            await pilot.pause()
            for widget in app.screen.query(Static):
                shown[f"{tab} #{widget.id}"] = str(widget.render())
        shown["raw output"] = "\n".join(app.screen.query_one("#output", RedactedLog).lines)
        assert "SGLANG_API_KEY" in shown["raw output"]  # the records did arrive
        await pilot.press("ctrl+s")
        await settle(pilot, lambda: exports.is_dir() and any(exports.glob("*.md")))
    for path in exports.iterdir():
        shown[f"export {path.name}"] = path.read_text()
    leaked = {name: found for name, text in shown.items() if (found := leaks(text))}
    assert leaked == {}, leaked
