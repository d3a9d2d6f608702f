"""``detective-tui diagnose`` end to end: fake hosts → the real probe (over a real sshd or the
local transport) → facts → replay + rules + what-if → JSON / Markdown / text and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from shared_fixtures import shared_fixture

from tui.cli import main
from tui.core import exitcodes
from tui.demo.fakehost import (
    FakeHostSpec,
    b200_old_driver,
    build_fake_host,
    healthy_h100,
    no_driver,
    reference_ct200,
    rtx5090_cu124_torch,
)

VENV_PY = "/root/venv_sglang211/bin/python3"


def _entry(tmp_path: Path, name: str, spec: FakeHostSpec, **extra: Any) -> dict[str, Any]:
    fake = build_fake_host(tmp_path / f"{name} root", spec)
    return {
        "name": name,
        "local": True,
        "root": str(fake.root),
        "simulate": "tree",
        "env": fake.env,
        "python": list(fake.pythons),
        **extra,
    }


def _inventory(tmp_path: Path, *entries: dict[str, Any]) -> str:
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump({"hosts": list(entries)}))
    return str(path)


def _diagnose_json(capsys: pytest.CaptureFixture[str], inv: str, *targets: str) -> tuple[int, list]:
    code = main(["--hosts", inv, "diagnose", *targets, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def _ids(host: dict[str, Any]) -> dict[str, str]:
    return {f["id"]: f["severity"] for f in host["findings"]}


def test_reference_host_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = _entry(tmp_path, "ct200", reference_ct200(), ssh=ssh_env.alias)
    del entry["local"]
    code, (host,) = _diagnose_json(capsys, _inventory(tmp_path, entry), "ct200")
    assert code == exitcodes.CRITICAL
    assert host["reachable"] is True and host["error"] is None
    assert _ids(host) == {
        "flashinfer-arch-rejected": "critical",
        "nvcc-torch-major-mismatch": "warning",
    }
    arch = host["findings"][0]
    assert arch["python"] == VENV_PY
    assert "CUDA_HOME=/usr/local/cuda-12.8" in arch["evidence"]
    assert "sglang.launch_server" in arch["explanation"]  # judged in the service's environment
    # only CUDA 12.8 on disk: no installed toolkit to switch to
    assert "use-installed-toolkit" not in [f["id"] for f in arch["fixes"]]
    assert arch["fixes"][0]["id"] == "set-flashinfer-arch-list"
    assert arch["fixes"][0]["params"] == {"value": "12.0a"}
    (fi,) = host["flashinfer"]
    assert fi == fi | {
        "python": VENV_PY,
        "version": "0.6.8",
        "cuda_home": "/usr/local/cuda-12.8",
        "cuda_version": "12.8",
        "cuda_version_source": "nvcc",
        "target_cuda_archs": [],
        "check_cuda_arch": "fail",
        "import_error": None,
        "warnings": ["Failed to get device capability: SM 12.x requires CUDA >= 12.9."],
        "compiles": False,
    }


def test_reference_with_cuda13_first_fix_resolves_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = _inventory(tmp_path, _entry(tmp_path, "ct200", reference_ct200(with_cuda13=True)))
    code, (host,) = _diagnose_json(capsys, inv, "ct200")
    assert code == exitcodes.CRITICAL
    assert _ids(host) == {
        "flashinfer-arch-rejected": "critical",
        "nvcc-torch-major-mismatch": "warning",
    }
    for finding in host["findings"]:
        first = finding["fixes"][0]
        assert first["id"] == "use-installed-toolkit"
        assert first["params"] == {"path": "/usr/local/cuda-13.0"}
        assert set(first["resolves"]) == {"flashinfer-arch-rejected", "nvcc-torch-major-mismatch"}
        assert first["commands"] and "CUDA_HOME=/usr/local/cuda-13.0" in "\n".join(
            first["commands"]
        )


def test_healthy_h100_has_nothing_to_say(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = _inventory(tmp_path, _entry(tmp_path, "h100", healthy_h100()))
    code, (host,) = _diagnose_json(capsys, inv, "h100")
    assert code == exitcodes.OK
    assert [f for f in host["findings"] if f["severity"] != "info"] == []
    assert host["flashinfer"][0]["target_cuda_archs"] == ["9.0a"]
    assert host["flashinfer"][0]["compiles"] is True


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (no_driver(), {"no-nvidia-driver": "critical"}),
        (
            b200_old_driver(),
            {"driver-too-old-for-torch": "critical", "driver-too-old-for-nvcc": "critical"},
        ),
        (
            rtx5090_cu124_torch(),
            # triton 3.2.0 (torch 2.6's) bundles ptxas 12.4, which knows no sm_120
            {"torch-lacks-gpu-arch": "critical", "triton-ptxas-too-old": "critical"},
        ),
    ],
    ids=["no-driver", "b200-old-driver", "rtx5090-cu124"],
)
def test_preset_hosts(
    spec: FakeHostSpec, expected: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = _inventory(tmp_path, _entry(tmp_path, "h", spec))
    code, (host,) = _diagnose_json(capsys, inv, "h")
    assert _ids(host) == expected
    assert code == exitcodes.CRITICAL


def test_unreachable_host_is_reported_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = _inventory(
        tmp_path,
        {"name": "ghost", "ssh": "root@127.0.0.1:1"},
        _entry(tmp_path, "h100", healthy_h100()),
    )
    code, hosts = _diagnose_json(capsys, inv, "ghost", "h100")
    assert code == exitcodes.UNREACHABLE
    assert [h["host"] for h in hosts] == ["ghost", "h100"]
    assert hosts[0]["reachable"] is False and hosts[0]["findings"] == []
    assert hosts[0]["error"] and hosts[1]["reachable"] is True


def test_critical_wins_over_unreachable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inv = _inventory(
        tmp_path,
        {"name": "ghost", "ssh": "root@127.0.0.1:1"},
        _entry(tmp_path, "ct200", reference_ct200()),
    )
    code, _ = _diagnose_json(capsys, inv)
    assert code == exitcodes.CRITICAL


def test_markdown_report_is_pasteable_and_redacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = reference_ct200(with_cuda13=True)
    entry = _entry(tmp_path, "ct200", spec, env={"HF_TOKEN": "hf_demo_secret_value"})
    code = main(["--hosts", _inventory(tmp_path, entry), "diagnose", "ct200", "--markdown"])
    out = capsys.readouterr().out
    assert code == exitcodes.CRITICAL
    assert out.startswith("# detective-tui report\n")
    findings_at = out.index("`flashinfer-arch-rejected`")
    assert findings_at < out.index("<details>")  # findings first, facts after
    assert "<summary>Facts: ct200</summary>" in out
    assert "driver: ok · 580.95.05 · CUDA 13.0" in out
    assert "`use-installed-toolkit` path=/usr/local/cuda-13.0" in out
    assert "hf_demo_secret_value" not in out


def test_text_report_shows_fix_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inv = _inventory(tmp_path, _entry(tmp_path, "ct200", reference_ct200(with_cuda13=True)))
    code = main(["--hosts", inv, "diagnose", "ct200"])
    out = capsys.readouterr().out
    assert code == exitcodes.CRITICAL
    assert "detective-tui fix ct200 use-installed-toolkit path=/usr/local/cuda-13.0" in out
    assert "TARGET_CUDA_ARCHS is empty" in " ".join(out.split())


def test_json_and_markdown_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["diagnose", "local", "--json", "--markdown"])
    assert exc.value.code == exitcodes.USAGE


def test_bad_inventory_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text("hosts:\n  - name: a\n    local: true\n    colour: blue\n")
    assert main(["--hosts", str(inv), "diagnose"]) == exitcodes.USAGE
    assert f"{inv}:4" in capsys.readouterr().err


# -- --deep: the host's own FlashInfer, for real ---------------------------------------------

CACHE = Path.home() / ".cache" / "detective-tui-tests"


@pytest.mark.slow
def test_deep_runs_the_real_flashinfer_and_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], oracle_python: str, flashinfer_dirs: dict
) -> None:
    """This machine (no GPU, CPU torch) with FlashInfer 0.7.0 and CUDA_HOME at a fake nvcc 12.8:
    the replay must say what the real FlashInfer says there."""
    site = subprocess.run(
        [oracle_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    own_site = next((venv / "lib").glob("python3*/site-packages"))
    (own_site / "detective_oracle.pth").write_text(f"{site}\n{flashinfer_dirs['0.7.0']}\n")
    dist = own_site / "flashinfer_python-0.7.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: flashinfer-python\nVersion: 0.7.0\n"
    )
    cuda = tmp_path / "cuda-12.8"
    (cuda / "bin").mkdir(parents=True)
    nvcc = cuda / "bin" / "nvcc"
    banner = shared_fixture("nvcc/nvcc-12.8.93.txt")
    nvcc.write_text(f"#!/bin/sh\ncat '{banner}'\n")
    nvcc.chmod(0o755)
    entry = {
        "name": "here",
        "local": True,
        "python": [str(venv / "bin" / "python")],
        "env": {"CUDA_HOME": str(cuda), "HOME": str(tmp_path)},
    }
    code = main(["--hosts", _inventory(tmp_path, entry), "diagnose", "here", "--deep", "--json"])
    (host,) = json.loads(capsys.readouterr().out)
    assert code in (exitcodes.OK, exitcodes.CRITICAL)
    (fi,) = host["flashinfer"]
    assert fi["deep"]["version"] == "0.7.0", fi["deep"]
    assert fi["deep"]["cuda_home"] == str(cuda) == fi["cuda_home"]
    assert fi["agrees"] is True, (fi, fi["deep"])
    assert "flashinfer-replay-disagrees" not in _ids(host)


@pytest.fixture
def oracle_python() -> str:
    from test_oracle_flashinfer import ensure_oracle_python

    return ensure_oracle_python()


@pytest.fixture
def flashinfer_dirs() -> dict:
    from test_oracle_flashinfer import ensure_flashinfer_dirs

    return ensure_flashinfer_dirs()


def test_deep_script_is_python38_compatible() -> None:
    """The remote side must not use syntax newer than the oldest host Python we support."""
    import ast

    source = (Path(__file__).resolve().parents[1] / "probes" / "deep_flashinfer.py").read_text()
    ast.parse(source, feature_version=(3, 8))
