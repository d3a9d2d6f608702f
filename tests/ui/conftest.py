"""Fixtures for the TUI tests: the demo fleet built once, an app factory with a fixed clock
and no animations, and a helper that lets workers finish."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tui.core.hosts import Host
from tui.core.transcript import Transcript

FIXED_NOW = datetime(2026, 1, 2, 3, 4, 5)


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


def session_factory(**kwargs: Any) -> Callable[[], Any]:
    def make() -> Any:
        from tui.core.runner import Session

        return Session(transcript=Transcript.open_session(), simulate_delay_s=0.05, **kwargs)

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
