"""``cuda-visible-devices-selects-no-gpu`` and ``container-lost-gpu-access``: the real probe
on fake hosts built from real outputs (the H100 node's 4-GPU capture; nvidia-smi's line from
NVIDIA/nvidia-docker#1671), each with its near misses; both stay silent on every demo host, and
``explain`` traces the threads' error texts to them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakehost_runs import judged as _judged

from tui.cli import main
from tui.core import exitcodes
from tui.core.judge.explain import explain
from tui.demo.neighbours import container_lost_gpus, stub_on_library_path, visible_devices_server

VISIBLE = "cuda-visible-devices-selects-no-gpu"
LOST = "container-lost-gpu-access"
STUB = "libcuda-stub-on-library-path"
FABRIC = "fabric-manager-not-running"
STALE_UUID = "GPU-5d9b5a0c-0000-4000-8000-000000000000"  # a GPU this host does not have


CASES = {
    "index past the last GPU": ("4", {VISIBLE: "critical"}),
    "minus one": ("-1", {VISIBLE: "critical"}),
    "all": ("all", {VISIBLE: "critical"}),
    "stale uuid": (STALE_UUID, {VISIBLE: "critical"}),
    "empty": ("", {VISIBLE: "critical"}),
    "the last GPU": ("3", {}),
    "two GPUs out of order": ("1,0", {}),
    "a valid GPU before an invalid one": ("2,7", {}),
}


@pytest.mark.parametrize(("visible", "expected"), list(CASES.values()), ids=list(CASES))
def test_cuda_visible_devices(tmp_path: Path, visible: str, expected: dict[str, str]) -> None:
    judged = _judged(tmp_path, "h100-cvd", visible_devices_server(visible))
    assert judged.diagnosis is not None
    got = {f.id: f.severity for f in judged.diagnosis.findings if f.severity != "info"}
    assert got == expected
    if expected:
        (f,) = [f for f in judged.diagnosis.findings if f.id == VISIBLE]
        assert f"CUDA_VISIBLE_DEVICES={visible} (pid 5151" in f.evidence[0]
        assert "GPU-971f81bb-82d7-b29a-9729-ccbaccd4bb64" in f.explanation  # what to set


def test_the_uuid_of_a_gpu_here_selects_it(tmp_path: Path) -> None:
    first = _judged(tmp_path, "probe", visible_devices_server("0")).facts
    assert first is not None and first.gpus[0].uuid
    judged = _judged(tmp_path, "by-uuid", visible_devices_server(first.gpus[0].uuid[:12]))
    assert judged.diagnosis is not None
    assert VISIBLE not in {f.id for f in judged.diagnosis.findings}


def test_container_lost_gpu_access(tmp_path: Path) -> None:
    judged = _judged(tmp_path, "ctr-lost", container_lost_gpus())
    assert judged.facts is not None and judged.diagnosis is not None
    assert judged.facts.driver.state == "error" and judged.facts.driver.smi_exit == 255
    assert {f.id: f.severity for f in judged.diagnosis.findings} == {LOST: "critical"}
    (f,) = judged.diagnosis.findings
    assert "nvidia-ctk system create-dev-char-symlinks" in f.explanation
    assert "Recreate the container" in f.explanation
    assert "device node: /dev/nvidia0" in f.evidence
    # the thread's text is traced to it on this host
    text = "root@098b49afe624:/# nvidia-smi\nFailed to initialize NVML: Unknown Error"
    result = explain(text, judged, source="test")
    assert result.explained_by == (LOST,)
    causes = {c.finding: c.status for c in result.errors[0].causes}
    assert causes == {LOST: "confirmed", "container-without-gpu-runtime": "ruled-out"}


def test_the_working_container_is_silent(tmp_path: Path) -> None:
    judged = _judged(tmp_path, "ctr-ok", container_lost_gpus(lost=False))
    assert judged.diagnosis is not None
    assert [f.id for f in judged.diagnosis.findings if f.severity != "info"] == []


def test_explain_traces_an_invalid_ordinal_to_the_variable(tmp_path: Path) -> None:
    text = "RuntimeError: CUDA error: invalid device ordinal"
    bad = explain(text, _judged(tmp_path, "bad", visible_devices_server("4")), source="t")
    good = explain(text, _judged(tmp_path, "good", visible_devices_server("3")), source="t")
    assert bad.explained_by == (VISIBLE,)
    assert {c.status for c in good.errors[0].causes} == {"ruled-out"}


# each finding's own demo host (tui/demo/fleet.py), with the symptom its log shows
DEMO = {
    VISIBLE: ("h100-visible", "no-cuda-gpus-available"),
    LOST: ("vllm-ctr-lost", "nvml-unknown-error"),
    STUB: ("h100-stub", "stub-library"),
    FABRIC: ("h200-hgx", "system-not-ready"),
}


@pytest.mark.slow  # builds and probes the whole demo fleet (~14 s here)
def test_silent_on_every_demo_host_but_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--demo", "diagnose", "--all", "--json"])
    hosts = json.loads(capsys.readouterr().out)
    assert {h["host"] for h in hosts} >= {name for name, _sig in DEMO.values()}
    for host in hosts:
        ids = {f["id"] for f in host["findings"]}
        for finding, (name, signature) in DEMO.items():
            assert (finding in ids) is (host["host"] == name), (host["host"], finding)
            if host["host"] == name:
                primary = [s for s in host["symptoms"] if s["primary"]]
                assert [(s["signature"], s["explained_by"]) for s in primary] == [
                    (signature, [finding])
                ]


def test_findings_lists_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "--json"]) == exitcodes.OK
    ids = {f["id"] for f in json.loads(capsys.readouterr().out)}
    assert {VISIBLE, LOST, STUB} <= ids


STUB_CASES = {
    "lib64/stubs first": ("/usr/local/cuda-12.8/lib64/stubs:/usr/local/cuda-12.8/lib64", True),
    "targets/…/lib/stubs": ("/usr/local/cuda-12.8/targets/x86_64-linux/lib/stubs/", True),
    "lib64 only": ("/usr/local/cuda-12.8/lib64", False),
    "a directory named stubs elsewhere": ("/opt/app/stubs", False),
}


@pytest.mark.parametrize(("ld_path", "fires"), list(STUB_CASES.values()), ids=list(STUB_CASES))
def test_stub_libcuda_on_the_library_path(tmp_path: Path, ld_path: str, fires: bool) -> None:
    judged = _judged(tmp_path, "stub", stub_on_library_path(ld_path))
    assert judged.diagnosis is not None
    got = {f.id: f.severity for f in judged.diagnosis.findings if f.id == STUB}
    assert got == ({STUB: "critical"} if fires else {})
    if fires:
        text = "numba.cuda.cudadrv.driver.CudaAPIError: [34] CUDA_ERROR_STUB_LIBRARY"
        assert explain(text, judged, source="t").explained_by == (STUB,)
