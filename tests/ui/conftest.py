"""Fixtures for the TUI tests: the demo fleet built once (tests that change hosts take the
few they need on private trees: ``demo_subset(tmp_path / "trees", names)``), an app factory
with a fixed clock and no animations, and helpers that let workers finish, probe the whole
fleet and put the cursor on a finding group."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tui.core.hosts import Host
from tui.core.records.transcript import Transcript

FIXED_NOW = datetime(2026, 1, 2, 3, 4, 5)


@pytest.fixture(autouse=True)
def no_answer_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo fleet's never-answering host takes a moment, as a real connection attempt does
    (the TUI shows it probing first)."""
    from tui.demo.unreachable import NeverAnswers

    monkeypatch.setattr(NeverAnswers, "delay_s", 0.05)


def fixed_clock() -> datetime:
    return FIXED_NOW


@pytest.fixture(scope="session")
def demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tui.demo.fleet import demo_fleet

    base = tmp_path_factory.mktemp("demo-cache")
    demo_fleet(base)
    return base


@pytest.fixture
def demo_hosts(demo_cache: Path) -> tuple[Host, ...]:
    from tui.demo.fleet import demo_fleet

    return demo_fleet(demo_cache)


@pytest.fixture
def reference_hosts(demo_cache: Path) -> tuple[Host, ...]:
    """ct200 (the reference case), a healthy host and the unreachable one, on the shared
    trees: for tests of one host's screens that change nothing."""
    return demo_subset(demo_cache, ("ct200", "h100-node", "gone-dark"))


def demo_subset(base: Path, names: Collection[str]) -> tuple[Host, ...]:
    """The demo hosts ``names`` only (their trees under ``base``, built if needed), for tests
    that look at a few hosts: probing the whole fleet is most of a UI test's time."""
    from tui.core.hosts import DEMO_SOURCE
    from tui.demo.fleet import DEMO_HOSTS, demo_host
    from tui.demo.unreachable import NeverAnswers

    wanted = [e for e in DEMO_HOSTS if e.name in names]
    assert {e.name for e in wanted} == set(names), names
    hosts = tuple(
        demo_host(e.name, e.spec(), e.tags, base)
        if e.spec is not None
        else Host(name=e.name, transport=NeverAnswers, tags=e.tags, source=DEMO_SOURCE)
        for e in wanted
    )
    for h in hosts:
        if h.root is not None:
            assert Path(h.root).is_relative_to(base), h.root
    return hosts


def host_root(hosts: Sequence[Host], name: str) -> Path:
    root = next(h.root for h in hosts if h.name == name)
    assert root is not None
    return Path(root)


def session_factory(**kwargs: Any) -> Callable[[], Any]:
    def make() -> Any:
        from tui.core.run.runner import Session

        return Session(transcript=Transcript.open_session(), **kwargs)

    return make


def make_app(hosts: Sequence[Host], **kwargs: Any) -> Any:
    from tui.ui.app import DetectiveApp

    kwargs.setdefault("session_factory", session_factory())
    app = DetectiveApp(hosts, clock=fixed_clock, **kwargs)
    app.animation_level = "none"
    return app


async def settle(pilot: Pilot, until: Callable[[], bool] = lambda: True, rounds: int = 400) -> None:
    """Let workers finish and messages drain until ``until()`` holds (bounded, not timed)."""
    for _ in range(rounds):
        # a failed worker is the app's business (its error handler shows it), not the test's
        await asyncio.gather(*(w.wait() for w in pilot.app.workers), return_exceptions=True)
        await pilot.pause()
        if until():
            await pilot.pause()
            return
    raise AssertionError("the app never reached the expected state")


def all_probed(app: Any) -> bool:
    return all(not s.busy and s.status != "idle" for s in app.fleet)


async def probe_all(pilot: Pilot) -> None:
    await pilot.press("P")
    await settle(pilot, lambda: all_probed(pilot.app))


async def cursor_on_group(pilot: Pilot, finding: str, hosts: set[str]) -> Any:
    """Probe everything, switch to the groups view, put the cursor on ``finding``'s group
    (which must hold exactly ``hosts``); returns that ``FindingGroup``."""
    from textual.widgets import Tree

    from tui.ui.grouping import FindingGroup

    await probe_all(pilot)
    await pilot.press("g")
    await pilot.pause()
    tree = pilot.app.screen.query_one("#groups-tree", Tree)
    node = next(
        n
        for n in tree.root.children
        if isinstance(n.data, FindingGroup) and n.data.finding_id == finding
    )
    assert set(node.data.hosts) == hosts, node.data
    tree.move_cursor(node)
    await pilot.pause()
    return node.data
