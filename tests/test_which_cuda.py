"""Which CUDA: one ``DriverInfo.max_cuda`` for the rules and the screens, and the facts JSON's
driver keys (``driver_version``/``driver_cuda`` beside the older ``smi_version``/
``cuda_version`` that CONTRACT.md keeps)."""

from __future__ import annotations

import dataclasses

from tui.core.facts import DriverInfo, Facts, Gpu, PythonEnv
from tui.core.findings import FlashInferReplay
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.run.runner import ProbeResult
from tui.ui.cuda_boxes import cuda_boxes
from tui.ui.fleet_state import HostState, host_row

PY = "/srv/venv/bin/python3"
# nvidia-smi printed no CUDA version; the driver number says 12.2 at most (R535)
OLD_DRIVER = DriverInfo(state="ok", driver_version="535.104.05", driver_cuda=None)


def _facts(driver: DriverInfo = OLD_DRIVER) -> Facts:
    return Facts(
        driver=driver,
        gpus=(Gpu(0, "NVIDIA H100 80GB HBM3", "9.0"),),
        pythons=(PythonEnv(path=PY, torch_version="2.9.1+cu130", torch_cuda="13.0"),),
    )


def test_the_screens_show_the_driver_cuda_the_rules_cite() -> None:
    facts = _facts()
    most = facts.driver.max_cuda
    assert most == "12.2"
    finding = next(f for f in diagnose(facts).findings if f.id == "driver-too-old-for-torch")
    assert f"CUDA {most}" in finding.explanation + " ".join(finding.evidence)
    assert cuda_boxes(facts, None)[0].value == most  # the host screen's comparison
    state = HostState(Host("h"), status="done", result=ProbeResult(Host("h"), facts))
    assert host_row(state).driver_cuda == most  # the hosts table


def test_nvidia_smis_own_cuda_wins() -> None:
    facts = _facts(dataclasses.replace(OLD_DRIVER, driver_cuda="12.4"))
    assert facts.driver.max_cuda == "12.4"


def test_driver_json_keys_and_old_documents() -> None:
    driver = DriverInfo(state="ok", driver_version="580.95.05", driver_cuda="13.0")
    data = _facts(driver).to_json()["driver"]
    assert (data["driver_version"], data["smi_version"]) == ("580.95.05", "580.95.05")
    assert (data["driver_cuda"], data["cuda_version"]) == ("13.0", "13.0")
    old = _facts(driver).to_json()
    for key in ("driver_version", "driver_cuda"):
        del old["driver"][key]  # a document written before the rename
    assert Facts.from_json(old).driver == driver


def test_replay_json_keeps_the_contracts_keys() -> None:
    replay = FlashInferReplay(PY, "0.6.8", "/usr/local/cuda-12.8", "12.8", "nvcc", (), "pass")
    data = replay.to_json()
    assert (data["cuda_version"], data["cuda_version_source"]) == ("12.8", "nvcc")
    assert "jit_cuda" not in data
