"""A CUDA forward-compatibility libcuda raises the driver's highest CUDA (issue 22, item 9).

nvidia-smi prints the kernel driver's CUDA (the real 8× H200 capture on 550.163.01: 12.4);
processes whose loader takes 12.9's compat libcuda 575.57.08 first (``cuda-facts`` §3.1: 12.9
U1's driver) through ``/etc/ld.so.conf.d/00-cuda-compat.conf`` run CUDA 12.9. The host is
``h200_driver_550_cu128`` (the real capture, torch 2.8.0+cu128's PyPI version.py and arch
flags, vLLM whose wheels carry CUDA 12.8 PTX): without the compat entry the driver cannot
JIT-compile that PTX (warning); with it, nothing fires — neither that nor
``cuda-compat-shadows-driver`` (forward compatibility as designed on a data-center GPU).
A compat libcuda older than the kernel module raises nothing (and is that finding's 803).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakehost_runs import diagnose_json, entry

from tui.core import exitcodes
from tui.demo import fakehost

PTX = "driver-too-old-for-torch"
COMPAT = "cuda-compat-shadows-driver"
LIB = "/usr/lib/x86_64-linux-gnu"


def with_compat(directory: str | None, version: str = "575.57.08") -> fakehost.FakeHostSpec:
    base = fakehost.h200_driver_550_cu128()
    files = {
        f"{LIB}/libcuda.so.550.163.01": "",
        "/etc/ld.so.conf.d/x86_64-linux-gnu.conf": f"# Multiarch support\n{LIB}\n",
    }
    if directory:
        files[f"{directory}/libcuda.so.{version}"] = ""
        files[f"{directory}/libcuda.so.1"] = ""
        files["/etc/ld.so.conf.d/00-cuda-compat.conf"] = f"{directory}\n"
    return replace(base, files={**base.files, **files})


CASES = {
    "plain": (with_compat(None), {PTX: "warning"}),
    "forward": (with_compat("/usr/local/cuda-12.9/compat"), {}),
    "older": (
        with_compat("/usr/local/cuda-12.2/compat", "535.54.03"),
        {PTX: "warning", COMPAT: "critical"},
    ),
}


def _check(code: int, hosts: list[dict]) -> None:
    assert code == exitcodes.CRITICAL  # the older compat's 803
    for (name, (_spec, expected)), host in zip(CASES.items(), hosts, strict=True):
        assert {f["id"]: f["severity"] for f in host["findings"]} == expected, name
    plain = next(f for f in hosts[0]["findings"] if f["id"] == PTX)
    assert "Driver 550.163.01 (CUDA 12.4)" in plain["title"]


def test_forward_compat_libcuda_raises_the_drivers_cuda(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [entry(tmp_path, name, spec) for name, (spec, _e) in CASES.items()]
    _check(*diagnose_json(tmp_path, capsys, *entries))


@pytest.mark.sshd
def test_over_real_sshd(ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries = [entry(tmp_path, n, spec, ssh=ssh_env.alias) for n, (spec, _e) in CASES.items()]
    _check(*diagnose_json(tmp_path, capsys, *entries))
