"""Where the real command outputs live (``../shared/fixtures`` beside the repo, as in CI) and how a
test that needs one says so: locally a missing fixture skips the test with the path; in CI
(``CI`` set) ``conftest.py`` refuses to start without them, so nothing is skipped there."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"

needs_shared = pytest.mark.skipif(
    not SHARED_FIXTURES.is_dir(), reason=f"shared fixtures not at {SHARED_FIXTURES}"
)


def shared_fixture(relative: str) -> Path:
    """The fixture file ``relative`` (e.g. ``nvcc/nvcc-12.8.93.txt``); skips when it is absent."""
    path = SHARED_FIXTURES / relative
    if not path.exists():
        pytest.skip(f"shared fixture not at {path}")
    return path
