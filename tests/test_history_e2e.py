"""The issue's done-when: a host reached over the real loopback sshd, probed; then changed —
torch upgraded by the real pip in its real venv, ``CUDA_HOME`` pointed at another toolkit —
and probed again. ``history`` lists both probes newest first with their verdicts; ``diff``
shows torch and the toolkit before → after, the findings that went away, and a likely cause
naming the pip install (its dist-info ``INSTALLER`` and time, read by the probe)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pip_standins as si
import pytest
from test_fix_pip_real import CU130_FLAGS, Box

from tui.cli import main
from tui.core import exitcodes
from tui.demo import fakehost

pytestmark = [pytest.mark.sshd, pytest.mark.slow]  # a real venv and two pip runs: ~15 s

PY = "/opt/venv/bin/python3"


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_probe_change_probe_then_history_and_diff(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = si.LocalIndex(tmp_path / "index")
    index.add(
        "pypi",
        si.torch("2.9.1+cu130", cuda="13.0", arch_flags=CU130_FLAGS),
        si.torch("2.10.0+cu130", cuda="13.0", arch_flags=CU130_FLAGS),
        si.flashinfer("0.6.8"),
    )
    box = Box(tmp_path, fakehost.reference_ct200(with_cuda13=True, service=False), index)
    box.install("torch==2.9.1+cu130", "flashinfer-python==0.6.8")
    inv = box.inventory(ssh_env.alias)

    assert _json(capsys, "--hosts", inv, "history", "box") == (exitcodes.OK, [])
    code, (first,) = _json(capsys, "--hosts", inv, "diagnose", "box")
    assert code == exitcodes.CRITICAL
    before_ids = {f["id"] for f in first["findings"]}
    assert {"nvcc-torch-major-mismatch", "flashinfer-arch-rejected"} <= before_ids

    box.install("-U", "torch==2.10.0+cu130")
    cuda13 = "/usr/local/cuda-13.0"
    env = dict(box.fake.env)
    env["CUDA_HOME"] = cuda13
    env["PATH"] = env["PATH"].replace("/usr/local/cuda-12.8", cuda13)
    box.fake = replace(box.fake, env=env)
    bashrc = box.fake.root / "root" / ".bashrc"  # and where a login shell gets it
    bashrc.write_text(bashrc.read_text().replace("/usr/local/cuda-12.8", cuda13))
    inv = box.inventory(ssh_env.alias)
    code, (second,) = _json(capsys, "--hosts", inv, "diagnose", "box")
    assert {f["id"] for f in second["findings"]} < before_ids, second["findings"]

    code, listed = _json(capsys, "--hosts", inv, "history", "box")
    assert code == exitcodes.OK
    assert [e["verdict"] for e in listed][1:] == ["critical"] and len(listed) == 2
    assert listed[0]["at"] >= listed[1]["at"]
    assert listed[0]["verdict"] != "critical"
    assert listed[0]["stack"]["torch"] == "2.10.0+cu130"
    assert listed[1]["stack"]["torch"] == "2.9.1+cu130"
    assert (listed[1]["stack"]["jit_cuda"], listed[0]["stack"]["jit_cuda"]) == ("12.8", "13.0")

    code, diff = _json(capsys, "--hosts", inv, "diff", "box")
    assert code == exitcodes.OK
    assert diff["host"] == "box" and diff["other"] is None
    assert diff["from"]["at"] == listed[1]["at"] and diff["to"]["at"] == listed[0]["at"]
    by_fact = {(c["fact"], c["python"]): (c["before"], c["after"]) for c in diff["changes"]}
    assert by_fact["torch", PY] == ("2.9.1+cu130", "2.10.0+cu130")
    assert by_fact["CUDA_HOME", None] == ("/usr/local/cuda-12.8", cuda13)
    assert by_fact["JIT toolkit", PY] == (
        "12.8 at /usr/local/cuda-12.8",
        f"13.0 at {cuda13}",
    )
    assert "nvcc-torch-major-mismatch" in diff["findings"]["gone"]
    assert "flashinfer-arch-rejected" in diff["findings"]["gone"]
    assert diff["findings"]["appeared"] == []
    (torch_cause,) = [c for c in diff["likely_causes"] if c["change"].startswith("torch ")]
    assert torch_cause["change"] == "torch 2.9.1+cu130 → 2.10.0+cu130"
    assert torch_cause["evidence"].startswith("pip, ")
    assert "torch 2.10.0+cu130: dist-info INSTALLER" in torch_cause["evidence"]
