"""The one-command GPU check (``bench/gpu_sampling_check.sh``) as far as it runs without a GPU:
its shell syntax, its refusals before any download, and the summary it prints from a run's
records (``bench/gpu_sampling_summary.py``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "bench" / "gpu_sampling_check.sh"
SUMMARY = REPO / "bench" / "gpu_sampling_summary.py"


def record(kind: str, **data: object) -> str:
    return f"@@validate\t{kind}\t{json.dumps(data)}"


def test_the_script_is_valid_sh() -> None:
    subprocess.run(["sh", "-n", str(SCRIPT)], check=True)


def _bin_with(tmp_path: Path, fakes: dict[str, str]) -> dict[str, str]:
    """A PATH of this machine's basic tools plus ``fakes`` (name → sh body), and nothing else
    (so what the host has installed, nvidia-smi or a compiler, does not matter)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("date", "dirname", "mkdir", "cat"):
        found = shutil.which(tool)
        assert found, tool
        (bindir / tool).symlink_to(found)
    for name, body in fakes.items():
        (bindir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bindir / name).chmod(0o755)
    return {"PATH": str(bindir), "HOME": str(tmp_path), "WORKDIR": str(tmp_path / "work")}


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_without_a_gpu_driver_it_stops_before_installing_anything(tmp_path: Path) -> None:
    proc = _run(_bin_with(tmp_path, {}))
    assert proc.returncode == 2
    assert "no nvidia-smi: this check needs an NVIDIA GPU and its driver" in proc.stderr
    assert not (tmp_path / "work").exists()


def test_without_a_compiler_it_says_so_before_installing_anything(tmp_path: Path) -> None:
    env = _bin_with(tmp_path, {"nvidia-smi": "echo 'NVIDIA H200, 580.95.05, 9.0'"})
    env["CXX"] = "no-such-c++"
    proc = _run(env)
    assert proc.returncode == 2, proc.stderr
    assert "NVIDIA H200, 580.95.05, 9.0" in proc.stdout
    assert "no C++ compiler (no-such-c++)" in proc.stderr
    assert not (tmp_path / "work").exists()


def _summary(tmp_path: Path, lines: list[str]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "records.txt"
    path.write_text("\n".join(lines) + "\n")
    return subprocess.run(
        [sys.executable, str(SUMMARY), str(path)], capture_output=True, text=True, check=False
    )


GPU_RUN = [
    record("start", python="/w/venv/bin/python", python_version="3.12.3"),
    record("env", flashinfer_version="0.7.2.post1", torch_version="2.13.0"),
    record("env", torch="2.13.0+cu130", torch_cuda="13.0", device_name="NVIDIA H200",
           capability="9.0"),
    record("toolkit", cuda_home="/w/venv/lib/python3.12/site-packages/nvidia/cu13",
           cuda_version="13.0", target_cuda_archs=["9.0a"], sampling_so_cached=False),
    record("jit", ok=True, stage="build", seconds=71.25, log_tail=[]),
    record("kernel", name="sampling_from_probs", kernel="sampling_from_probs", verdict="pass",
           api_era="return-valid"),
    record("kernel", name="min_p_sampling_from_probs", kernel="min_p_sampling_from_probs",
           verdict="skipped", message="not in this FlashInfer version"),
    record("speed", kernel="sampling_from_probs", baseline="torch.multinomial", batch=64,
           vocab=128256, flashinfer_ms=0.05, torch_ms=0.2, ratio=4.0),
    record("end", verdict="partial", reason="1 of 2 kernel checks passed; not checked: min_p"),
]  # fmt: skip


def test_the_summary_prints_compile_time_kernels_and_speed_ratio(tmp_path: Path) -> None:
    proc = _summary(tmp_path, ["pip noise", *GPU_RUN])
    assert proc.returncode == 1  # partial is not a pass
    out = proc.stdout
    assert "FlashInfer 0.7.2.post1 | torch 2.13.0+cu130 (CUDA 13.0) | NVIDIA H200 (SM 9.0)" in out
    assert "targets 9.0a" in out
    assert "compile time: 71.2 s to build and load the sampling module" in out
    assert any(
        line.split() == ["sampling_from_probs", "return-valid", "pass"] for line in out.splitlines()
    )
    assert "min_p_sampling_from_probs" in out and "not in this FlashInfer version" in out
    assert "sampling_from_probs 0.0500 ms vs torch.multinomial 0.2000 ms -> 4.00x" in out
    assert out.rstrip().endswith(
        "verdict: partial - 1 of 2 kernel checks passed; not checked: min_p"
    )


@pytest.mark.parametrize(
    ("verdict", "code"), [("pass", 0), ("fail", 1), ("skipped", 1), ("error", 2), (None, 2)]
)
def test_the_summary_exits_0_only_for_pass(tmp_path: Path, verdict: str | None, code: int) -> None:
    end = [] if verdict is None else [record("end", verdict=verdict, reason="r")]
    assert _summary(tmp_path, [*GPU_RUN[:5], *end]).returncode == code


def test_the_summary_of_a_real_run_without_a_gpu(tmp_path: Path) -> None:
    """The records ``validate_sampling.py`` really prints here (no torch: skipped)."""
    run = subprocess.run(
        [sys.executable, str(REPO / "probes" / "validate_sampling.py")],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    proc = _summary(tmp_path, run.stdout.splitlines())
    assert proc.returncode == 1
    assert "verdict: skipped - cannot validate here" in proc.stdout
