"""``mig-device-not-selected``: MIG mode read from nvidia-smi (the real R610 table, and the
real ``nvidia-smi -L`` MIG listing published in DataDog/datadog-agent#33120), the rule's
verdicts, and the real probe on fake hosts, locally and over a real sshd."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from factsmaker import make_facts
from shared_fixtures import shared_fixture
from step_shims import tree_standins

from tui.cli import main
from tui.core import exitcodes
from tui.core.facts import MigDevice
from tui.core.facts.mig import parse_mig_devices, parse_mig_modes
from tui.core.rules.evaluate import evaluate
from tui.demo.fakehost import build_fake_host, mig_uuid
from tui.demo.neighbours import mig_without_selection

ID = "mig-device-not-selected"

# nvidia-smi -L on an A100-SXM4-80GB in MIG mode (535.216.01), verbatim from the description of
# DataDog/datadog-agent#33120
DATADOG_L = """\
GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16)
  MIG 1g.10gb     Device  0: (UUID: MIG-feb88891-0321-5fef-9c87-d4af3b54259e)
  MIG 1g.10gb     Device  1: (UUID: MIG-a25704ba-3a06-5299-a795-fd7cf4d13973)
  MIG 1g.10gb     Device  2: (UUID: MIG-50f1c4c9-1508-5e8d-bb06-d08145b22e01)
  MIG 1g.10gb     Device  3: (UUID: MIG-36c795f2-5cf7-55d6-af30-e535e79b7bb6)
  MIG 1g.10gb     Device  4: (UUID: MIG-3f45d38c-8cee-503e-b806-a1f1bdceedeb)
  MIG 1g.10gb     Device  5: (UUID: MIG-96655de9-9525-58f9-a62b-0e4c1cc1c265)
  MIG 1g.10gb     Device  6: (UUID: MIG-1aae4990-b962-574e-8375-119d6d9b9687)
"""


def test_real_mig_listing_is_parsed() -> None:
    devices = parse_mig_devices(DATADOG_L)
    assert len(devices) == 7
    assert devices[0] == MigDevice(0, 0, "1g.10gb", "MIG-feb88891-0321-5fef-9c87-d4af3b54259e")
    assert devices[6].uuid == "MIG-1aae4990-b962-574e-8375-119d6d9b9687"


def test_real_r610_table_says_mig_enabled() -> None:
    table = shared_fixture(
        "nvidia-smi/nvidia-smi-rtxpro6000-server-610.43.02-mig-kmd-umd-header.txt"
    )
    assert parse_mig_modes(table.read_text()) == {0: "Enabled"}
    h100 = shared_fixture("nvidia-smi/nvidia-smi-h100x4-570.148.08.txt").read_text()
    assert set(parse_mig_modes(h100).values()) <= {"Disabled", "N/A"}


A100_MIG = parse_mig_devices(DATADOG_L)


def _facts(env: dict[str, str]):
    f = make_facts(gpus=("8.0",), torch_cuda="12.8", flashinfer=None, driver="570.148.08", env=env)
    gpus = tuple(replace(g, mig_mode="Enabled") for g in f.gpus)
    return replace(f, gpus=gpus, mig_devices=A100_MIG)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, {ID: "critical"}),
        ({"CUDA_VISIBLE_DEVICES": "0"}, {ID: "critical"}),
        ({"CUDA_VISIBLE_DEVICES": "GPU-0"}, {ID: "critical"}),
        ({"CUDA_VISIBLE_DEVICES": A100_MIG[2].uuid}, {}),  # near miss: one MIG device
        ({"CUDA_VISIBLE_DEVICES": "MIG-feb88891"}, {}),  # a unique prefix, as CUDA accepts
        ({"CUDA_VISIBLE_DEVICES": f"{A100_MIG[0].uuid},{A100_MIG[1].uuid}"}, {ID: "warning"}),
        ({"CUDA_VISIBLE_DEVICES": ""}, {}),  # no GPU wanted
    ],
    ids=["unset", "gpu index", "gpu uuid", "mig uuid", "mig prefix", "two mig devices", "empty"],
)
def test_rule(env: dict[str, str], expected: dict[str, str]) -> None:
    findings, _ = evaluate(_facts(env))
    assert {f.id: f.severity for f in findings} == expected


def test_mig_disabled_is_silent() -> None:
    f = make_facts(gpus=("8.0",), torch_cuda="12.8", flashinfer=None, driver="570.148.08", env={})
    f = replace(f, gpus=tuple(replace(g, mig_mode="Disabled") for g in f.gpus))
    assert evaluate(f)[0] == ()


def test_the_explanation_lists_the_uuids_to_set() -> None:
    (f,) = evaluate(_facts({"CUDA_VISIBLE_DEVICES": "0"}))[0]
    assert "Set CUDA_VISIBLE_DEVICES to one MIG UUID" in f.explanation
    assert "MIG-feb88891-0321-5fef-9c87-d4af3b54259e" in f.explanation


SPECS = {
    "gpu-index": (mig_without_selection(), {ID: "critical"}),
    "unset": (mig_without_selection(visible=None), {ID: "critical"}),
    "mig-uuid": (mig_without_selection(visible="mig"), {}),
}


def _inventory(tmp_path: Path, ssh: str | None = None) -> str:
    hosts = []
    for name, (spec, _e) in SPECS.items():
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
    for name, (_spec, expected) in SPECS.items():
        assert {f["id"]: f["severity"] for f in hosts[name]["findings"]} == expected, name
    facts = hosts["mig-uuid"]["facts"]
    assert facts["gpus"][0]["mig_mode"] == "Enabled"
    assert [m["uuid"] for m in facts["mig_devices"]] == [
        mig_uuid("pro6000-mig", 0, j) for j in range(4)
    ]


def test_fake_hosts_locally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(capsys, _inventory(tmp_path))


def test_fake_hosts_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(capsys, _inventory(tmp_path, ssh=ssh_env.alias))


FIX = "select-mig-device"
DROPIN_MIG = "etc/systemd/system/vllm.service.d/50-detective-tui-mig.conf"


def test_the_whatif_proposes_a_free_mig_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The finding's fix on both broken hosts: the first MIG device, the what-if checked that
    it resolves the finding; a host already on a MIG device gets no proposal."""
    inv = _inventory(tmp_path)
    main(["--hosts", inv, "diagnose", "--json"])
    hosts = {h["host"]: h for h in json.loads(capsys.readouterr().out)}
    first = mig_uuid("pro6000-mig", 0, 0)
    for name in ("gpu-index", "unset"):
        (f,) = hosts[name]["findings"]
        assert [(x["id"], x["params"]) for x in f["fixes"]] == [(FIX, {"uuid": first})], name
    assert hosts["mig-uuid"]["findings"] == []


def test_fix_writes_the_dropin_verifies_and_undo_restores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tree_standins(monkeypatch, tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    inv = _inventory(tmp_path)
    root = tmp_path / "gpu-index root"
    second = mig_uuid("pro6000-mig", 0, 1)
    rc = main(["--hosts", inv, "fix", "gpu-index", FIX, "uuid=MIG-nope", "--yes"])
    err = capsys.readouterr().err
    assert rc == exitcodes.USAGE, err
    assert "uuid=MIG-nope is not a MIG device probed on gpu-index" in err
    assert second in err  # the ones to choose from
    assert not (root / DROPIN_MIG).exists()

    rc = main(["--hosts", inv, "fix", "gpu-index", FIX, f"uuid={second}", "--yes"])
    out = capsys.readouterr().out
    assert rc == exitcodes.OK, out
    assert f'Environment="CUDA_VISIBLE_DEVICES={second}"' in (root / DROPIN_MIG).read_text()
    assert "Fixed: mig-device-not-selected" in out
    assert "MIG 1g.24gb device 1 of GPU 0 only" in out

    rc = main(["--hosts", inv, "fix", "gpu-index", "--undo", "last", "--yes"])
    out = capsys.readouterr().out
    assert rc == exitcodes.OK, out
    assert "Back to the verdict before the fix: mig-device-not-selected" in out
    assert not (root / DROPIN_MIG).exists()
