"""The host screen says whose GPUs it shows: a pod's output (captured, opened with
``--ingest``) titles them "pod's GPUs", a node's does not."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.widgets import Static

from tui.cli import build_parser
from tui.core.hosts import Host
from tui.demo.fakehost import build_fake_host, healthy_h100
from tui.demo.neighbours import container_without_gpus
from tui.ui.launch import build_app
from tui.ui.screens.host import HostScreen

from .conftest import all_probed, settle
from .test_ingest_tui import captured


def capture(tmp_path: Path, name: str, spec) -> str:  # type: ignore[no-untyped-def]
    tree = build_fake_host(tmp_path / name, spec)
    host = Host(name=name, root=str(tree.root), simulate="tree", env=tree.env, python=tree.pythons)
    return captured(host)


async def test_the_title_says_the_gpus_are_the_pods(tmp_path: Path) -> None:
    pod = container_without_gpus(runtime=True, kubernetes=True)
    pod = replace(pod, files={**pod.files, "/proc/1/environ": "NVIDIA_VISIBLE_DEVICES=0\0"})
    out = tmp_path / "out"
    out.mkdir()
    (out / "vllm-pod.txt").write_text(capture(tmp_path, "vllm-pod", pod))
    (out / "h100-node.txt").write_text(capture(tmp_path, "h100-node", healthy_h100()))
    app = build_app(build_parser().parse_args(["--ingest", str(out)]))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot, lambda: all_probed(pilot.app))
        titles = {}
        for name in ("vllm-pod", "h100-node"):
            app.open_host(name)
            await settle(pilot, lambda n=name: getattr(app.screen, "host_name", None) == n)
            assert isinstance(app.screen, HostScreen)
            titles[name] = str(app.screen.query_one("#host-title", Static).render())
            app.pop_screen()
            await pilot.pause()
    assert "pod's GPUs: 4× H100 80GB HBM3 (SM 9.0)" in titles["vllm-pod"]
    assert (
        "4× H100 80GB HBM3 (SM 9.0)" in titles["h100-node"] and "GPUs:" not in titles["h100-node"]
    )
