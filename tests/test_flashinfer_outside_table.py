"""FlashInfer outside the replay table: prebuilt releases before 0.2 judged by their wheels'
arch list, releases newer than the newest one read reported as info (under their own id), and
no invented import error. On facts and on fake hosts (local and over a real sshd)."""

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
from tui.core.judge.diagnosis import diagnose
from tui.core.tables.flashinfer_pre02 import prebuilt_for
from tui.demo import fakehost

ID = "flashinfer-arch-rejected"
UNVERIFIED = "flashinfer-replay-unverified"  # its own id since one id has one meaning


@pytest.mark.parametrize(
    ("version", "targets"),
    [
        ("0.1.5+cu121torch2.3", ("sm_80", "sm_89", "sm_90", "compute_90")),
        ("0.1.6+cu124torch2.4", ("sm_75", "sm_80", "sm_89", "sm_90", "compute_90")),
        ("0.2.0", None),
        ("0.0.9", None),
    ],
)
def test_the_prebuilt_table(version: str, targets: tuple[str, ...] | None) -> None:
    row = prebuilt_for(version)
    assert (row.targets if row else None) == targets


@pytest.mark.parametrize(
    ("version", "gpus", "expected"),
    [
        ("0.1.5+cu121torch2.3", ("7.5",), {ID: "critical"}),  # T4: not in 8.0 8.9 9.0+PTX
        ("0.1.6+cu121torch2.3", ("7.5",), {}),  # 0.1.6 added 7.5
        ("0.1.5+cu121torch2.3", ("8.6",), {}),  # sm_80 cubins run on 8.6
        ("0.1.5+cu121torch2.3", ("7.0",), {ID: "info"}),  # below what FlashInfer ever ran on
        ("0.8.0", ("9.0",), {UNVERIFIED: "info"}),
        ("0.7.2.post1", ("9.0",), {}),
    ],
)
def test_rows(version: str, gpus: tuple[str, ...], expected: dict) -> None:
    f = make_facts(
        gpus=gpus,
        driver="570.148.08",
        torch_cuda="12.1",
        torch_version="2.3.1+cu121",
        flashinfer=version,
        toolkits=(("/usr/local/cuda-12.8", "12.8"),),
        torch_arch_list=("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"),
    )
    d = diagnose(f)
    assert {x.id: x.severity for x in d.findings if x.id in (ID, UNVERIFIED)} == expected
    assert all(r.import_error is None for r in d.flashinfer)


def test_the_prebuilt_chain_says_why_no_toolkit_helps() -> None:
    f = make_facts(gpus=("7.5",), torch_cuda="12.1", flashinfer="0.1.5+cu121torch2.3")
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    assert "compiled for 8.0 8.9 9.0+PTX only" in finding.explanation
    assert "No toolkit or environment change helps" in finding.explanation
    assert finding.fixes == ()
    (replayed,) = diagnose(f).flashinfer
    assert replayed.target_cuda_archs == ("8.0", "8.9", "9.0+PTX")
    assert replayed.check_cuda_arch == "fail"


def t4_flashinfer_015(version: str = "0.1.5+cu121torch2.3") -> fakehost.FakeHostSpec:
    spec = fakehost.healthy_h100()
    venv = replace(
        spec.venvs[0], flashinfer=None, dists=(*spec.venvs[0].dists, ("flashinfer", version))
    )
    return replace(
        spec,
        hostname="t4-node",
        gpus=(fakehost.GpuSpec("Tesla T4", "7.5", 15360),) * 4,
        venvs=(venv,),
    )


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


def test_fake_hosts_locally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, hosts = _diagnose(
        tmp_path,
        capsys,
        _entry(tmp_path, "old", t4_flashinfer_015()),
        _entry(tmp_path, "new", t4_flashinfer_015("0.1.6+cu121torch2.3")),
    )
    assert code == exitcodes.CRITICAL
    assert [[f["id"] for f in h["findings"]] for h in hosts] == [[ID], []]
    assert hosts[0]["flashinfer"][0]["import_error"] is None


@pytest.mark.sshd
def test_fake_hosts_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = _diagnose(
        tmp_path,
        capsys,
        _entry(tmp_path, "old", t4_flashinfer_015(), ssh=ssh_env.alias),
        _entry(tmp_path, "new", t4_flashinfer_015("0.1.6+cu121torch2.3"), ssh=ssh_env.alias),
    )
    assert code == exitcodes.CRITICAL
    assert [[f["id"] for f in h["findings"]] for h in hosts] == [[ID], []]
