# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""``torch-cpu-build`` and ``install-cuda-torch``: a CPU-only torch where a GPU server runs.

Rule rows, the CUDA variant chosen for the driver and GPUs, the what-if, the exact dry-run of
the pip plan and its undo, and the real probe on fake hosts (the real ``torch/version.py`` of
the 2.13.0+cpu wheel) locally and over a real sshd.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from factsmaker import make_facts

from tui.cli import main
from tui.core import exitcodes
from tui.core.fixes import FixError, build_plan
from tui.core.fixes.pipplan import SNAPSHOT, WAIT
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.rules.evaluate import evaluate
from tui.core.tables.torch_variants import cuda_variant_for, is_cpu_build
from tui.demo.fakehost import build_fake_host
from tui.demo.neighbours import cpu_torch_on_gpus

ID = "torch-cpu-build"
CPU = dict(
    gpus=("9.0",) * 4,
    driver="570.148.08",
    torch_cuda=None,
    torch_version="2.9.1+cpu",
    flashinfer=None,
    packages={"vllm": "0.11.0"},
)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        (CPU, {ID: "critical"}),
        ({**CPU, "torch_cuda": "12.8", "torch_version": "2.9.1+cu128"}, {}),  # near miss
        ({**CPU, "packages": {}}, {}),  # a CPU torch with no GPU server: a notebook env
        ({**CPU, "torch_version": "2.9.1+rocm6.4"}, {}),  # not a CPU build
        # no GPU visible: the CPU build does not matter; the empty variable is its own finding
        (
            {**CPU, "env": {"CUDA_VISIBLE_DEVICES": ""}},
            {"cuda-visible-devices-selects-no-gpu": "warning"},
        ),
    ],
    ids=["cpu torch + vllm", "cuda torch", "no server", "rocm build", "no GPU visible"],
)
def test_rule(kwargs: dict[str, Any], expected: dict[str, str]) -> None:
    findings, _ = evaluate(make_facts(**kwargs))
    assert {f.id: f.severity for f in findings} == expected


@pytest.mark.parametrize(
    ("torch", "driver", "driver_cuda", "gpus", "cuda"),
    [
        ("2.9.1+cpu", "570.148.08", "12.8", [(9, 0)], "12.8"),
        ("2.9.1+cpu", "580.95.05", "13.0", [(12, 0)], "13.0"),
        ("2.13.0+cpu", "570.148.08", "12.8", [(9, 0)], "12.6"),
        ("2.13.0+cpu", "570.148.08", "12.8", [(12, 0)], None),  # cu126 has no sm_120
        ("2.6.0+cpu", "550.127.05", "12.4", [(8, 0)], "12.6"),  # minor-version compatibility
        ("1.13.1+cpu", "550.127.05", "12.4", [(8, 0)], None),  # not recorded
    ],
)
def test_variant_for_driver_and_gpus(torch, driver, driver_cuda, gpus, cuda) -> None:
    assert cuda_variant_for(torch, driver, driver_cuda, gpus, "x86_64") == cuda


def test_cpu_build_detection() -> None:
    assert is_cpu_build("2.10.0+cpu", None) and is_cpu_build("2.10.0", None)
    assert not is_cpu_build("2.10.0+cu128", "12.8") and not is_cpu_build(None, None)


def test_whatif_installs_the_variant_the_driver_runs() -> None:
    (f,) = diagnose(make_facts(**CPU)).findings
    (fix,) = f.fixes
    assert (fix.id, dict(fix.params), fix.resolves) == (
        "install-cuda-torch",
        {"cuda": "12.8"},
        (ID,),
    )
    assert "torch 2.9.1+cu128" in f.explanation


DRY_RUN = r"""
set -e
f=/venv/.detective-tui/pip-freeze-20261129-120000.txt
mkdir -p "$(dirname "$f")"
exec 9>>"$f".lock
/venv/bin/python3 -I -c WAIT
[ -s "$f" ] || { /venv/bin/python3 -I -c SNAPSHOT /venv "$f".paths; /venv/bin/python3 -m pip freeze --all > "$f".tmp; mv -f "$f".tmp "$f"; }
/venv/bin/python3 -m pip install --disable-pip-version-check --extra-index-url https://download.pytorch.org/whl/cu128 --extra-index-url https://download.pytorch.org/whl/cpu torch==2.9.1+cu128
echo '@@dt changed pip installed torch==2.9.1+cu128 (the packages before: /venv/.detective-tui/pip-freeze-20261129-120000.txt)'
"""


def test_dry_run_is_exact_and_undo_restores_the_cpu_build() -> None:
    plan = build_plan(
        make_facts(**CPU),
        Host(name="h", ssh="h"),
        "install-cuda-torch",
        {"cuda": "12.8"},
        stamp="20261129-120000",
    )
    expected = (
        DRY_RUN.strip("\n")
        .replace("SNAPSHOT", shlex.quote(SNAPSHOT))
        .replace("WAIT", shlex.quote(WAIT))
    )
    assert "\n-----\n".join(plan.preview_commands()) == expected
    undo = plan.steps[0].undo or ""
    assert "pip uninstall -y $added" in undo
    assert '--extra-index-url https://download.pytorch.org/whl/cpu -r "$f".pins' in undo
    assert plan.verify_gone == (ID,)


def test_a_variant_that_torch_release_lacks_is_refused() -> None:
    with pytest.raises(FixError, match=r"published for CUDA 12\.6, 12\.8, 13\.0"):
        build_plan(
            make_facts(**CPU), Host(name="h", ssh="h"), "install-cuda-torch", {"cuda": "12.4"}
        )


def _inventory(tmp_path: Path, ssh: str | None = None) -> str:
    hosts = []
    for name, spec in (("cpu", cpu_torch_on_gpus()), ("cuda", cpu_torch_on_gpus(cuda_torch=True))):
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
    (f,) = hosts["cpu"]["findings"]
    assert (f["id"], f["severity"]) == (ID, "critical")
    assert "torch 2.13.0+cpu (torch.version.cuda None)" in f["evidence"]
    assert [(x["id"], x["params"]) for x in f["fixes"]] == [
        ("install-cuda-torch", {"cuda": "12.6"})
    ]
    assert hosts["cuda"]["findings"] == []


def test_fake_hosts_locally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(capsys, _inventory(tmp_path))


def test_fake_hosts_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(capsys, _inventory(tmp_path, ssh=ssh_env.alias))
