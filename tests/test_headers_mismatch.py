# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""toolkit-headers-mismatch and align-cuda-wheels: the CUDART_VERSION parser, the rule on facts,
the what-if, the plan and its undo, and the real probe on fake hosts (local and over sshd)."""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from factsmaker import make_facts

from probes import probe_env, probe_script
from tui.cli import main
from tui.core import exitcodes
from tui.core.facts import Facts, Toolkit
from tui.core.facts.build import facts_from_output
from tui.core.facts.parsers import parse_cudart_define
from tui.core.fixes import FixError, build_plan
from tui.core.fixes.pipplan import SNAPSHOT, WAIT
from tui.core.fixes.wheels import _check
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.judge.whatif import apply_fix
from tui.core.rules.evaluate import evaluate
from tui.demo import fakehost

ID = "toolkit-headers-mismatch"
FIX = "align-cuda-wheels"
SITE = "/venv/lib/python3.12/site-packages"
PIP_HOME = f"{SITE}/nvidia/cu13"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (fakehost.fixture_text(fakehost.CUDART_130_HEADER), "13.0"),
        (fakehost.fixture_text(fakehost.CUDART_128_HEADER), "12.8"),
        ("#define CUDART_VERSION 12090\n", "12.9"),
        ("#define CUDART_VERSION_X 12090\n", None),
        ("", None),
    ],
)
def test_cudart_define(text: str, expected: str | None) -> None:
    assert parse_cudart_define(text) == expected


def pip_facts(nvcc: str, runtime: str = "13.0.96", **extra: str) -> Facts:
    f = make_facts(
        toolkits=(),
        env={"CUDA_HOME": PIP_HOME},
        which=(f"{PIP_HOME}/bin/nvcc",),
        packages={
            "nvidia-cuda-nvcc": nvcc,
            "nvidia-cuda-runtime": runtime,
            "nvidia-cuda-crt": nvcc,
            **extra,
        },
    )
    tk = Toolkit(
        home=PIP_HOME,
        nvcc=f"{PIP_HOME}/bin/nvcc",
        version=".".join(nvcc.split(".")[:2]),
        full_version=nvcc,
        headers_version=".".join(runtime.split(".")[:2]),
    )
    return dataclasses.replace(f, toolkits=(tk,))


def ids(f: Facts) -> dict[str, str]:
    return {x.id: x.severity for x in evaluate(f)[0] if x.id == ID}


@pytest.mark.parametrize(
    ("name", "f", "expected"),
    [
        (
            "pip nvcc 13.3 with the 13.0 runtime (flashinfer#3493)",
            pip_facts("13.3.73"),
            {ID: "critical"},
        ),
        ("pip nvcc 13.0 with the 13.0 runtime", pip_facts("13.0.88"), {}),
        (
            "pip nvcc 13.0, CCCL 13.3",
            pip_facts("13.0.88", **{"nvidia-cuda-cccl": "13.3.73"}),
            {ID: "critical"},
        ),
        (
            "a system toolkit: nvcc 12.9 with 12.8 headers",
            dataclasses.replace(
                make_facts(toolkits=(), env={"CUDA_HOME": "/usr/local/cuda-12.9"}),
                toolkits=(
                    Toolkit(
                        home="/usr/local/cuda-12.9",
                        nvcc="/usr/local/cuda-12.9/bin/nvcc",
                        version="12.9",
                        headers_version="12.8",
                    ),
                ),
            ),
            {ID: "critical"},
        ),
        (
            "a system toolkit without FlashInfer: a warning",
            dataclasses.replace(
                make_facts(toolkits=(), env={"CUDA_HOME": "/usr/local/cuda-12.9"}, flashinfer=None),
                toolkits=(
                    Toolkit(
                        home="/usr/local/cuda-12.9",
                        nvcc="/usr/local/cuda-12.9/bin/nvcc",
                        version="12.9",
                        headers_version="12.8",
                    ),
                ),
            ),
            {ID: "warning"},
        ),
        ("the reference host (no header read): silent", make_facts(), {}),
    ],
)
def test_rule_rows(name: str, f: Facts, expected: dict) -> None:
    assert ids(f) == expected


def test_the_chain_quotes_cccl_and_lists_the_parts() -> None:
    (finding,) = [x for x in evaluate(pip_facts("13.3.73"))[0] if x.id == ID]
    assert finding.title == f"The JIT toolkit {PIP_HOME} mixes CUDA 13.0 and 13.3"
    assert "CUDA compiler and CUDA toolkit headers are incompatible" in finding.explanation
    assert f"CUDART_VERSION 13.0 in {PIP_HOME}/include/cuda_runtime_api.h" in finding.evidence
    assert "nvidia-cuda-nvcc 13.3.73 in /venv/bin/python3" in finding.evidence


def test_align_resolves_and_a_coherent_toolkit_on_disk_is_offered_first() -> None:
    f = pip_facts("13.3.73")
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    assert [(x.id, dict(x.params)) for x in finding.fixes] == [(FIX, {"version": "13.0.2"})]
    assert ID in finding.fixes[0].resolves
    after = apply_fix(f, FIX, {"version": "13.0.2"}, "/venv/bin/python3")
    assert ids(after) == {}
    coherent = Toolkit(
        home="/usr/local/cuda-13.0",
        nvcc="/usr/local/cuda-13.0/bin/nvcc",
        version="13.0",
        headers_version="13.0",
    )
    g = dataclasses.replace(f, toolkits=(*f.toolkits, coherent))
    (finding,) = [x for x in diagnose(g).findings if x.id == ID]
    assert [x.id for x in finding.fixes] == ["use-installed-toolkit", FIX]


ALIGN = r"""
if CHECK; then
  echo '@@dt unchanged every CUDA wheel is already CUDA 13.0'
else
  f=/venv/.detective-tui/pip-freeze-20261129-120000.txt
  mkdir -p "$(dirname "$f")"
  exec 9>>"$f".lock
  /venv/bin/python3 -I -c WAIT
  [ -s "$f" ] || { /venv/bin/python3 -I -c SNAPSHOT /venv "$f".paths; /venv/bin/python3 -m pip freeze --all > "$f".tmp; mv -f "$f".tmp "$f"; }
  /venv/bin/python3 -m pip install --disable-pip-version-check 'cuda-toolkit[nvcc,crt,nvvm,cccl]==13.0.2'
  CHECK
  echo '@@dt changed pip installed cuda-toolkit[nvcc,crt,nvvm,cccl]==13.0.2 (the packages before: /venv/.detective-tui/pip-freeze-20261129-120000.txt)'
fi
"""


def test_the_plan_pins_with_the_metapackage_and_undo_restores_the_freeze_record() -> None:
    f = pip_facts("13.3.73")
    plan = build_plan(f, Host(name="h", ssh="h"), FIX, {}, stamp="20261129-120000")
    (step,) = plan.steps
    check = _check("/venv/bin/python3", "13.0")
    expected = (
        ALIGN.strip("\n")
        .replace("SNAPSHOT", shlex.quote(SNAPSHOT))
        .replace("WAIT", shlex.quote(WAIT))
    )
    assert step.command == expected.replace("CHECK", check)
    assert step.undo is not None
    assert "/venv/bin/python3 -m pip install --disable-pip-version-check --no-deps -r" in step.undo
    assert "restored the packages recorded in /venv/.detective-tui/pip-freeze-2026" in step.undo
    assert plan.verify_gone == (ID,) and not plan.needs_root


@pytest.mark.parametrize("version", ["12.8.1", "x"])
def test_only_cuda_13_releases_are_accepted(version: str) -> None:
    with pytest.raises(FixError, match="cuda-toolkit release"):
        build_plan(pip_facts("13.3.73"), Host(name="h", ssh="h"), FIX, {"version": version})


def test_the_guard_runs_in_a_real_interpreter(tmp_path: Path) -> None:
    """The step, run with this machine's interpreter (no NVIDIA CUDA wheels in it): its check
    finds nothing of another minor, so nothing is installed."""
    plan = build_plan(pip_facts("13.3.73"), Host(name="h", ssh="h"), FIX, {}, stamp="s")
    py = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "python"
    command = plan.steps[0].command.replace("/venv/bin/python3", str(py))
    out = subprocess.run(["sh", "-c", command], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "@@dt unchanged every CUDA wheel is already CUDA 13.0\n"


# --- the real probe on fake hosts ----------------------------------------------------------


def _entry(tmp_path: Path, name: str, spec: fakehost.FakeHostSpec, **extra: Any) -> dict:
    fake = fakehost.build_fake_host(tmp_path / f"{name} root", spec)
    entry = {
        "name": name,
        "root": str(fake.root),
        "simulate": "tree",
        "env": fake.env,
        "python": list(fake.pythons),
    }
    return {**entry, **extra} if extra else {**entry, "local": True}


def _diagnose(tmp_path: Path, capsys: pytest.CaptureFixture[str], *entries: dict) -> tuple:
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": list(entries)}))
    code = main(["--hosts", str(inv), "diagnose", "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_probe_reads_the_header(tmp_path: Path) -> None:
    fake = fakehost.build_fake_host(tmp_path / "h", fakehost.pip_toolkit_mixed())
    env = {"SHELL": "/bin/sh", "LANG": "C", **fake.env}
    env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True, step_timeout_s=5))
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), env=env, capture_output=True, text=True, timeout=120
    ).stdout
    (tk,) = facts_from_output(out).toolkits
    assert (tk.version, tk.headers_version) == ("13.3", "13.0")


def test_diagnose_locally_and_the_near_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = _diagnose(
        tmp_path,
        capsys,
        _entry(tmp_path, "mixed", fakehost.pip_toolkit_mixed()),
        _entry(tmp_path, "coherent", fakehost.pip_toolkit_mixed("13.0.88")),
    )
    assert code == exitcodes.CRITICAL
    assert {f["id"]: f["severity"] for f in hosts[0]["findings"]}[ID] == "critical"
    assert hosts[1]["findings"] == []


@pytest.mark.sshd
def test_diagnose_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = _diagnose(
        tmp_path,
        capsys,
        _entry(tmp_path, "mixed", fakehost.pip_toolkit_mixed(), ssh=ssh_env.alias),
        _entry(tmp_path, "coherent", fakehost.pip_toolkit_mixed("13.0.88"), ssh=ssh_env.alias),
    )
    assert code == exitcodes.CRITICAL
    assert ID in {f["id"] for f in hosts[0]["findings"]}
    assert hosts[1]["findings"] == []
