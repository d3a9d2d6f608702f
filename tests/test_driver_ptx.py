"""driver-too-old-for-torch at warning: the driver runs torch's cubins but not its newer PTX
(error 222); critical when a GPU gets torch only through PTX. On facts, and on a fake host from
a real nvidia-smi capture, locally and over a real sshd."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from factsmaker import make_facts
from fakehost_runs import diagnose_json, entry

from tui.core import exitcodes
from tui.core.judge.diagnosis import diagnose
from tui.core.rules.evaluate import evaluate
from tui.demo import fakehost

ID = "driver-too-old-for-torch"
CU128_X86 = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")


@pytest.mark.parametrize(
    ("name", "kw", "expected"),
    [
        (
            "R570 (12.8) with cu129: cubins run, PTX does not",
            dict(driver="570.148.08", torch_cuda="12.9"),
            "warning",
        ),
        ("R570 (12.8) with cu128", dict(driver="570.148.08", torch_cuda="12.8"), None),
        ("R525 (12.0) with cu128", dict(driver="525.60.13", torch_cuda="12.8"), "warning"),
        (
            "R575 (12.9) with cu130: another major",
            dict(driver="575.57.08", torch_cuda="13.0"),
            "critical",
        ),
        (
            "R580 (13.0) with cu128: older CUDA runs",
            dict(driver="580.95.05", torch_cuda="12.8"),
            None,
        ),
        (
            "SM 12.0 reached only through compute_90 PTX",
            dict(
                driver="570.148.08",
                torch_cuda="12.9",
                gpus=("12.0",),
                torch_arch_list=("sm_80", "sm_86", "sm_90", "compute_90"),
            ),
            "critical",
        ),
        (
            "SM 12.0 with its own cubin",
            dict(driver="570.148.08", torch_cuda="12.9", gpus=("12.0",), torch_arch_list=CU128_X86),
            "warning",
        ),
    ],
)
def test_rows(name: str, kw: dict, expected: str | None) -> None:
    f = make_facts(flashinfer=None, toolkits=(), env={}, **{"gpus": ("9.0",), **kw})
    found = [x.severity for x in evaluate(f)[0] if x.id == ID]
    assert found == ([expected] if expected else [])


def test_the_explanation_says_which_kernels_break_and_which_driver_fixes_it() -> None:
    f = make_facts(
        flashinfer=None, toolkits=(), env={}, gpus=("9.0",), driver="570.148.08", torch_cuda="12.9"
    )
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    assert finding.title == "Driver 570.148.08 (CUDA 12.8) cannot JIT-compile torch's CUDA 12.9 PTX"
    text = finding.explanation
    assert "the provided PTX was compiled with an unsupported toolchain' (error 222)" in text
    assert "vLLM's and FlashInfer's AOT wheels" in text
    assert "a driver ≥ 575.51.03 (the CUDA 12.9 branch)" in text
    assert finding.fixes == ()  # no fix id changes a driver


def test_fake_hosts_locally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "r550", fakehost.h200_driver_550_cu128()),
        entry(tmp_path, "r570", fakehost.healthy_h100()),
    )
    assert code == exitcodes.OK  # a warning is not critical
    assert {f["id"]: f["severity"] for f in hosts[0]["findings"]} == {ID: "warning"}
    assert hosts[1]["findings"] == []


@pytest.mark.sshd
def test_fake_hosts_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "r550", fakehost.h200_driver_550_cu128(), ssh=ssh_env.alias),
        entry(tmp_path, "r570", fakehost.healthy_h100(), ssh=ssh_env.alias),
    )
    assert code == exitcodes.OK
    assert {f["id"]: f["severity"] for f in hosts[0]["findings"]} == {ID: "warning"}
    assert hosts[1]["findings"] == []


def test_no_warning_when_nothing_needs_the_newer_ptx(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22 item 1. The real 8× H200 capture on driver 550.163.01 (CUDA 12.4), the real
    torch 2.8.0+cu128 (version.py and libtorch_python.so's arch flags from the PyPI wheel:
    sm_90 is a cubin), and the real nvcc 12.4.131 as the JIT toolkit: no PTX of CUDA 12.8
    reaches the driver, so no warning. Installing vLLM (its wheels carry PTX) or a CUDA 12.8
    JIT toolkit brings it back."""
    base = fakehost.h200_driver_550_cu128()
    (venv,) = base.venvs
    bare = replace(venv, dists=(("torch", "2.8.0"),))
    toolkit = {
        "toolkits": (fakehost.CUDA_124,),
        "usr_local_cuda": fakehost.CUDA_124.home,
        "env": fakehost.ssh_env(
            f"{venv.path}/bin:/usr/local/cuda/bin", CUDA_HOME="/usr/local/cuda"
        ),
    }
    quiet = replace(base, venvs=(bare,), **toolkit)
    with_vllm = replace(base, **toolkit)
    newer_jit = replace(
        quiet,
        toolkits=(fakehost.CUDA_128,),
        usr_local_cuda=fakehost.CUDA_128.home,
    )
    code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "quiet", quiet),
        entry(tmp_path, "vllm", with_vllm),
        entry(tmp_path, "jit128", newer_jit),
    )
    found = {h["host"]: {f["id"]: f["severity"] for f in h["findings"]} for h in hosts}
    assert found["quiet"] == {}, hosts[0]["findings"]
    assert found["vllm"] == {ID: "warning"}
    (warning,) = [f for f in hosts[1]["findings"] if f["id"] == ID]
    assert "vllm installed (its kernels may reach the driver as PTX)" in warning["evidence"]
    assert found["jit128"][ID] == "warning" and "driver-too-old-for-nvcc" in found["jit128"]
    assert code == exitcodes.OK  # warnings only
