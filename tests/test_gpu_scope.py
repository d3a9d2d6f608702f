"""Inside a pod or container the facts say that the GPUs are the ones given to it: the real
probe on fake pods (a service-account token, the device nodes and driver libraries the NVIDIA
runtime injects, PID 1's environment as the device plugin sets it, its volume-mounts list)
records ``container.scope``, ``runtime_env`` and ``allocated``, and the reports say it."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from tui.commands.diagnose import print_host
from tui.commands.probe import summary_table
from tui.core.facts import Facts
from tui.core.facts.gpu_scope import container_scope, scope_note
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.records.report import host_json, markdown_report
from tui.core.run.runner import ProbeResult, Session
from tui.demo.fakehost import FakeHostSpec, build_fake_host, healthy_h100
from tui.demo.neighbours import container_without_gpus

PLUGIN_DIR = "/var/run/nvidia-container-devices"


def environ(**variables: str) -> str:
    """``/proc/1/environ``: NUL-terminated ``NAME=value`` items."""
    items = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", **variables}
    return "".join(f"{k}={v}\0" for k, v in items.items())


def given(spec: FakeHostSpec, files: dict[str, str]) -> FakeHostSpec:
    return replace(spec, files={**spec.files, **files})


POD = container_without_gpus(runtime=True, kubernetes=True)  # /dev/nvidia0 and the libraries
CASES = {
    "pod, device plugin envvar strategy": (
        given(POD, {"/proc/1/environ": environ(NVIDIA_VISIBLE_DEVICES="0",
                                               NVIDIA_DRIVER_CAPABILITIES="compute,utility")}),
        "pod",
        {"NVIDIA_VISIBLE_DEVICES": "0", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility"},
        [],
    ),
    "pod, device plugin volume-mounts strategy": (
        given(POD, {"/proc/1/environ": environ(NVIDIA_VISIBLE_DEVICES=PLUGIN_DIR),
                    f"{PLUGIN_DIR}/0": "", f"{PLUGIN_DIR}/1": ""}),
        "pod",
        {"NVIDIA_VISIBLE_DEVICES": PLUGIN_DIR},
        ["0", "1"],
    ),
    "pod, CDI volume mounts": (
        given(POD, {f"{PLUGIN_DIR}/cdi/nvidia.com/gpu/0": ""}),
        "pod",
        {},
        ["cdi/nvidia.com/gpu/0"],
    ),
    "docker --gpus all": (
        given(container_without_gpus(runtime=True),
              {"/proc/1/environ": environ(NVIDIA_VISIBLE_DEVICES="all", CUDA_VISIBLE_DEVICES="1")}),
        "container",
        {"NVIDIA_VISIBLE_DEVICES": "all", "CUDA_VISIBLE_DEVICES": "1"},
        [],
    ),
    "a node, not a container (PID 1's environment is not read)": (
        given(healthy_h100(), {"/proc/1/environ": environ(NVIDIA_VISIBLE_DEVICES="all"),
                               f"{PLUGIN_DIR}/0": ""}),
        None,
        {},
        [],
    ),
}  # fmt: skip


async def probe(tmp_path: Path, spec: FakeHostSpec) -> ProbeResult:
    tree = build_fake_host(tmp_path / "tree", spec)
    host = Host(
        name="p",
        local=True,
        root=str(tree.root),
        simulate="tree",
        env=tree.env,
        python=tree.pythons,
    )
    async with Session() as s:
        return await s.probe(host)


@pytest.mark.parametrize(("spec", "scope", "env", "allocated"), CASES.values(), ids=list(CASES))
async def test_the_probe_records_what_the_container_was_given(
    tmp_path: Path, spec: FakeHostSpec, scope: str | None, env: dict, allocated: list
) -> None:
    result = await probe(tmp_path, spec)
    assert result.ok and result.facts is not None, result.error
    c = result.facts.to_json()["container"]
    assert (c["scope"], c["runtime_env"], c["allocated"]) == (scope, env, allocated)
    assert Facts.from_json(result.facts.to_json()).container == result.facts.container
    note = scope_note(c)
    if scope is None:
        assert note is None
    else:
        assert note is not None and note.startswith(f"GPU visibility is this {scope}'s")
        assert "1 GPU device node (/dev/nvidia0)" in note
        assert all(f"{k}={v}" in note for k, v in env.items() if "VISIBLE" in k)
        whose = (
            "all of the node's GPUs"
            if env.get("NVIDIA_VISIBLE_DEVICES") == "all"
            else ("not necessarily all of the node's")
        )
        assert note.endswith(f"{whose}.")


async def test_the_reports_say_it(tmp_path: Path) -> None:
    spec = CASES["pod, device plugin volume-mounts strategy"][0]
    result = await probe(tmp_path, spec)
    assert result.facts is not None
    diagnosis = diagnose(result.facts, result.host)
    note = scope_note(result.facts.to_json()["container"])
    assert note and "allocated by the device plugin: 0, 1" in note
    assert f"> {note}" in markdown_report([(result, diagnosis)]).splitlines()
    out = io.StringIO()
    print_host(Console(file=out, width=400, no_color=True), host_json(result, diagnosis))
    assert note in out.getvalue()
    table = io.StringIO()
    Console(file=table, width=400).print(summary_table([result]))
    assert "(the pod's)" in table.getvalue()


@pytest.mark.parametrize(
    ("markers", "scope"),
    [
        ((), None),
        (("/.dockerenv",), "container"),
        (("/run/.containerenv",), "container"),
        (("kubernetes",), "pod"),
        (("KUBERNETES_SERVICE_HOST",), "pod"),
        (("cgroup 0::/kubepods.slice/kubepods-burstable.slice/x",), "pod"),
        (("cgroup 12:devices:/docker/0123abcd",), "container"),
    ],
)
def test_container_scope(markers: tuple[str, ...], scope: str | None) -> None:
    assert container_scope(markers) == scope


async def test_a_container_given_no_gpus_says_so(tmp_path: Path) -> None:
    spec = given(
        container_without_gpus(), {"/proc/1/environ": environ(NVIDIA_VISIBLE_DEVICES="void")}
    )
    result = await probe(tmp_path, spec)
    assert result.facts is not None
    assert scope_note(result.facts.to_json()["container"]) == (
        "GPU visibility is this container's: the runtime put no GPU device node and no driver "
        "library into it (NVIDIA_VISIBLE_DEVICES=void)."
    )
