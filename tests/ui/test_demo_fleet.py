"""The demo fleet: fake host trees built once into the cache dir, then reused."""

from __future__ import annotations

from pathlib import Path

from tui.core import locations
from tui.demo.fleet import DEMO_HOSTS, META, demo_fleet
from tui.demo.unreachable import NeverAnswers


def test_built_once_then_reused(tmp_path: Path) -> None:
    hosts = demo_fleet(tmp_path)
    assert [h.name for h in hosts] == [d.name for d in DEMO_HOSTS]
    built = [h for h in hosts if h.transport is None]
    assert all(h.local and h.root and (Path(h.root) / META).is_file() for h in built)
    ct200 = next(h for h in built if h.name == "ct200")
    assert ct200.python == ("/root/venv_sglang211/bin/python3",)
    assert ct200.env["CUDA_HOME"] == "/usr/local/cuda-12.8"
    assert "reference" in ct200.tags
    marker = Path(ct200.root) / META
    before = marker.stat().st_mtime_ns
    assert demo_fleet(tmp_path) == hosts
    assert marker.stat().st_mtime_ns == before
    assert not [p for p in (tmp_path / "demo").iterdir() if p.name.startswith(".")]


def test_unfinished_tree_is_rebuilt(tmp_path: Path) -> None:
    first = demo_fleet(tmp_path)[0]
    (Path(first.root) / META).unlink()
    again = demo_fleet(tmp_path)[0]
    assert again == first and (Path(again.root) / META).is_file()


def test_never_answering_host_and_copies(tmp_path: Path) -> None:
    gone = demo_fleet(tmp_path)[-1]
    assert gone.transport is NeverAnswers and not gone.local and gone.root is None
    many = demo_fleet(tmp_path, copies=17)
    assert len(many) == 17 * len(DEMO_HOSTS)
    assert many[0].name == "ct200-01" and many[-1].name == "gone-dark-17"
    assert len({h.name for h in many}) == len(many)
    assert {h.root for h in many if h.name.startswith("ct200-")} == {demo_fleet(tmp_path)[0].root}


def test_default_location_is_the_xdg_cache() -> None:
    ct200 = demo_fleet()[0]
    assert Path(ct200.root).is_relative_to(locations.cache_dir() / "demo")
