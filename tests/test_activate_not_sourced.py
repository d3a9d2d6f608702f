"""A fix's check of a venv's ``activate`` sources that file: for an inspected ``root:`` tree
(a mounted image, a container's filesystem) it must never run on the inspecting machine."""

from __future__ import annotations

from pathlib import Path

from tui.core.fixes.executor import read_envs
from tui.core.fixes.plan import FixPlan
from tui.core.hosts import Host
from tui.core.runner import Session


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "image"
    bindir = root / "venv" / "bin"
    bindir.mkdir(parents=True)
    marker = tmp_path / "ran"
    (bindir / "activate").write_text(f"touch {marker}\nexport CUDA_HOME=/usr/local/cuda-13.0\n")
    return root, marker


def _plan(host: Host) -> FixPlan:
    return FixPlan(
        fix_id="use-installed-toolkit",
        host=host,
        params={},
        steps=(),
        verify_gone=(),
        activate="/venv/bin/activate",
        env_keys=("CUDA_HOME",),
    )


async def test_an_inspected_trees_activate_is_not_sourced(tmp_path: Path) -> None:
    root, marker = _tree(tmp_path)
    host = Host(name="image", local=True, root=str(root))
    async with Session() as session:
        reads = await read_envs(session, host, _plan(host))
    assert not marker.exists()
    assert reads.activate is None


async def test_a_simulated_trees_activate_is_read(tmp_path: Path) -> None:
    root, marker = _tree(tmp_path)
    host = Host(name="image", local=True, root=str(root), simulate="tree")
    async with Session() as session:
        reads = await read_envs(session, host, _plan(host))
    assert marker.exists()  # the control: the same file is sourced where its programs may run
    assert reads.activate is not None
    assert reads.activate.vars["CUDA_HOME"] == "/usr/local/cuda-13.0"
