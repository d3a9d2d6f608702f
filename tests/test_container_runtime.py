"""``container-without-gpu-runtime``: a container started without the NVIDIA runtime is said
to be one — not ``no-nvidia-driver`` with advice to install a driver — and a container given
its GPUs stays silent. Facts-level rows, then the real probe on fake hosts (container markers,
``/dev/nvidia*`` nodes and injected libraries as files of the tree), locally and over sshd."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from factsmaker import make_facts

from tui.cli import main
from tui.core import exitcodes
from tui.core.facts import ContainerInfo, DriverInfo
from tui.core.rules.evaluate import evaluate
from tui.demo.fakehost import build_fake_host
from tui.demo.neighbours import container_without_gpus

ID = "container-without-gpu-runtime"
NO_GPU = dict(driver_state="no-driver", flashinfer=None, torch_cuda="12.8")


def _facts(container: ContainerInfo, **kw: Any):
    return replace(make_facts(**{**NO_GPU, **kw}), container=container)


DOCKER = ContainerInfo(markers=("/.dockerenv",))
ROWS = {
    "docker without --gpus, CUDA torch": (DOCKER, {}, {ID: "critical"}),
    "docker without --gpus, nothing needs a GPU": (
        DOCKER,
        {"python": False},
        {ID: "info"},
    ),
    "not a container: the driver": (ContainerInfo(), {}, {"no-nvidia-driver": "critical"}),
    "a container given device nodes, driver broken": (
        replace(DOCKER, devices=("/dev/nvidia0",)),
        {},
        {"no-nvidia-driver": "critical"},
    ),
    "a container given the driver libraries only": (
        replace(DOCKER, driver_libs=("/usr/lib/x86_64-linux-gnu/libcuda.so.1",)),
        {},
        {"no-nvidia-driver": "critical"},
    ),
}


@pytest.mark.parametrize(("container", "kw", "expected"), list(ROWS.values()), ids=list(ROWS))
def test_rule(container: ContainerInfo, kw: dict[str, Any], expected: dict[str, str]) -> None:
    findings, _ = evaluate(_facts(container, **kw))
    got = {f.id: f.severity for f in findings if f.id != "nvcc-torch-major-mismatch"}
    assert got == expected


def test_a_working_driver_in_a_container_is_not_a_runtime_problem() -> None:
    facts = replace(make_facts(), container=DOCKER)
    assert ID not in {f.id for f in evaluate(facts)[0]}


def test_pod_advice_names_the_gpu_limit() -> None:
    (f,) = [x for x in evaluate(_facts(ContainerInfo(markers=("kubernetes",))))[0] if x.id == ID]
    assert "nvidia.com/gpu" in f.explanation and "device plugin" in f.explanation


def test_host_module_is_the_proof() -> None:
    facts = _facts(DOCKER)
    facts = replace(facts, driver=DriverInfo(state="no-nvidia-smi", proc_version="580.95.05"))
    (f,) = [x for x in evaluate(facts)[0] if x.id == ID]
    assert "kernel module 580.95.05 is loaded" in f.explanation
    assert "--gpus all" in f.explanation


SPECS = {
    "no-gpus": (container_without_gpus(), {ID: "critical"}),
    "no-gpus-no-proc": (container_without_gpus(host_module_visible=False), {ID: "critical"}),
    "pod": (container_without_gpus(kubernetes=True), {ID: "critical"}),
    "with-runtime": (container_without_gpus(runtime=True), {}),
}


def _inventory(tmp_path: Path, ssh: str | None = None) -> str:
    hosts = []
    for name, (spec, _e) in SPECS.items():
        fake = build_fake_host(tmp_path / f"{name} root", spec)
        entry: dict[str, Any] = {
            "name": name,
            "root": str(fake.root),
            "simulate": "tree",
            "env": fake.env,
            "python": list(fake.pythons),
        }
        entry.update({"ssh": ssh} if ssh else {"local": True})
        hosts.append(entry)
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump({"hosts": hosts}))
    return str(path)


def _check(capsys: pytest.CaptureFixture[str], inv: str) -> None:
    code = main(["--hosts", inv, "diagnose", "--json"])
    hosts = {h["host"]: h for h in json.loads(capsys.readouterr().out)}
    assert code == exitcodes.CRITICAL
    for name, (_spec, expected) in SPECS.items():
        assert {f["id"]: f["severity"] for f in hosts[name]["findings"]} == expected, name
    assert hosts["no-gpus"]["facts"]["container"] == {
        "markers": ["/.dockerenv"],
        "devices": [],
        "driver_libs": [],
        "scope": "container",
        "runtime_env": {},
        "allocated": [],
    }
    assert hosts["with-runtime"]["facts"]["container"]["devices"] == [
        "/dev/nvidia-uvm",
        "/dev/nvidia0",
        "/dev/nvidiactl",
    ]


def test_fake_hosts_locally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(capsys, _inventory(tmp_path))


def test_fake_hosts_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(capsys, _inventory(tmp_path, ssh=ssh_env.alias))
