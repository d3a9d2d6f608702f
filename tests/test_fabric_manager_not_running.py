"""``fabric-manager-not-running``: the real probe on a fake 8× H200 HGX node (the real
550.163.01 table) whose nvidia-smi reports each GPU's fabric state as the HGX node of
NVIDIA/gpu-operator#2511 did (``In Progress``, ``N/A``) — the fabric manager stopped, or its
package left at another driver's version — with the near misses (registered and running at
the driver's version; GPUs in no fabric), through ``diagnose --json`` locally and over a real
sshd; ``explain`` traces the threads' error 802 texts to it, and the unit's journal line is
the host's symptom."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakehost_runs import diagnose_json, entry, judged, probe_tree

from tui.core import exitcodes
from tui.core.facts import GpuFabric
from tui.core.facts.build import facts_from_output
from tui.core.facts.fabric import parse_fabric
from tui.core.findings.fabric_manager_not_running import upstream_version
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.judge.explain import explain
from tui.core.judge.judged import Judged
from tui.core.records.report import host_json
from tui.core.run.runner import ProbeResult
from tui.demo import fakehost
from tui.demo.neighbours import fabric_manager_stopped

ID = "fabric-manager-not-running"
# pytorch/pytorch#35710's error (DGX; the answer installs nvidia-fabricmanager)
THREAD_802 = (
    "RuntimeError: cuda runtime error (802) : system not yet initialized at "
    "/opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp:50"
)
# hiyouga/LlamaFactory#8968 (8× B200; fabric manager and driver at different versions)
THREAD_B200 = "[rank3]: Cuda failure 802 'system not yet initialized'"


def _judged(tmp_path: Path, case: str) -> Judged:
    return judged(tmp_path, case, fabric_manager_stopped(case=case))


def test_the_query_lines() -> None:
    # the values of gpu-operator#2511's Fabric section; nvidia-smi's brackets for fields it
    # cannot read; a line that is not three cells is no GPU
    lines = ["0, In Progress, N/A", "1, Completed, Success", "2, [N/A], [N/A]", "garbage"]
    assert parse_fabric(lines) == (
        GpuFabric(0, "In Progress", "N/A"),
        GpuFabric(1, "Completed", "Success"),
        GpuFabric(2, "N/A", "N/A"),
    )
    assert upstream_version("550.163.01-1") == "550.163.01"
    assert upstream_version("1:575.57.08-0ubuntu1") == "575.57.08"


CASES = {
    "old package, not running": ("old-package", {ID: "critical"}),
    "at the driver's version, not running": ("stopped", {ID: "critical"}),
    "registered, package behind the driver": ("stale-registered", {ID: "warning"}),
    "registered, running at the driver's version": ("running", {}),
    "GPUs in no fabric": ("pcie", {}),
}


@pytest.mark.parametrize(("case", "expected"), list(CASES.values()), ids=list(CASES))
def test_the_fake_hgx_node(tmp_path: Path, case: str, expected: dict[str, str]) -> None:
    judged = _judged(tmp_path, case)
    assert judged.facts is not None and judged.diagnosis is not None
    assert len(judged.facts.fabric.gpus) == 8
    assert {f.id: f.severity for f in judged.diagnosis.findings} == expected


def test_what_it_says(tmp_path: Path) -> None:
    judged = _judged(tmp_path, "old-package")
    assert judged.diagnosis is not None
    (f,) = judged.diagnosis.findings
    assert f.title.endswith("the fabric manager is not running")
    assert "apt install nvidia-fabricmanager-550=550.163.01-1" in f.explanation
    assert "error 802" in f.explanation
    assert list(f.evidence[:3]) == [
        "GPU 0, 1, 2, 3, 4, 5, 6, 7: fabric.state In Progress, fabric.status N/A",
        "no nv-fabricmanager process",
        "package nvidia-fabricmanager-550 550.127.05-1",
    ]
    stopped = _judged(tmp_path, "stopped").diagnosis
    assert stopped is not None
    (g,) = stopped.findings
    assert "apt install" not in g.explanation  # the package is right: only start it
    assert "systemctl enable --now nvidia-fabricmanager" in g.explanation


def test_explain_and_the_symptom(tmp_path: Path) -> None:
    bad, good = _judged(tmp_path, "old-package"), _judged(tmp_path, "running")
    for text in (THREAD_802, THREAD_B200):
        assert explain(text, bad, source="t").explained_by == (ID,)
        causes = {c.finding: c.status for c in explain(text, good, source="t").errors[0].causes}
        assert causes == {ID: "ruled-out"}
    assert bad.result.facts is not None and bad.diagnosis is not None
    data = host_json(bad.result, bad.diagnosis)
    (symptom,) = data["symptoms"]
    assert symptom["signature"] == "system-not-ready"
    assert symptom["explained_by"] == [ID]
    assert "Error 802: system not yet initialized" in symptom["line"]


def test_a_single_gpu_host_runs_no_fabric_query(tmp_path: Path) -> None:
    out = probe_tree(fakehost.build_fake_host(tmp_path / "one", fakehost.rtx5090_cu124_torch()))
    assert "\tsmi\tfabric\t" not in out and "\tend\t" in out
    facts = facts_from_output(out)
    assert len(facts.gpus) == 1 and facts.fabric.query_rc is None
    # one GPU joins no fabric: the cause is ruled out, not left possible
    judged = Judged(ProbeResult(Host(name="one", local=True), facts), diagnose(facts))
    causes = {c.finding: c.status for c in explain(THREAD_802, judged, source="t").errors[0].causes}
    assert causes == {ID: "ruled-out"}


def _entry(tmp_path: Path, case: str, **extra: Any) -> dict:
    return entry(tmp_path, case, fabric_manager_stopped(case=case), **extra)


def test_diagnose_json_locally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, hosts = diagnose_json(
        tmp_path, capsys, _entry(tmp_path, "old-package"), _entry(tmp_path, "running")
    )
    assert code == exitcodes.CRITICAL
    assert [[f["id"] for f in h["findings"]] for h in hosts] == [[ID], []]
    fabric = hosts[1]["facts"]["fabric"]
    assert fabric["manager_pids"] == [2210]
    assert fabric["packages"] == [["nvidia-fabricmanager-550", "550.163.01-1"]]
    assert fabric["gpus"][0] == {"index": 0, "state": "Completed", "status": "Success"}


@pytest.mark.sshd
def test_diagnose_json_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = diagnose_json(
        tmp_path,
        capsys,
        _entry(tmp_path, "old-package", ssh=ssh_env.alias),
        _entry(tmp_path, "running", ssh=ssh_env.alias),
    )
    assert code == exitcodes.CRITICAL
    assert [[f["id"] for f in h["findings"]] for h in hosts] == [[ID], []]
