# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""``cuda-compat-shadows-driver`` and ``drop-cuda-compat-path``: a CUDA forward-compatibility
libcuda in the loader's path ahead of the driver's, where it cannot work (803: older than the
kernel module; 804: a GPU forward compatibility does not support). The loader order, the rule
rows, the exact dry-run, the fix applied for real to a fake host and undone, and the real probe
locally and over a real sshd — with the near misses (forward compatibility as designed on a
data-center GPU; a compat directory nothing names) silent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from plan_golden import shown as plan_shown

from tui.cli import main
from tui.core import exitcodes
from tui.core.facts import EnvContext, Facts, HostInfo, LoaderInfo
from tui.core.findings.cuda_compat_shadows_driver import first_compat, without_compat
from tui.core.fixes import build_plan
from tui.core.hosts import Host
from tui.demo.fakehost import build_fake_host
from tui.demo.neighbours import compat_over_driver

ID = "cuda-compat-shadows-driver"
COMPAT = "/usr/local/cuda-12.9/compat"
LIB = "/usr/lib/x86_64-linux-gnu"
LOADER = LoaderInfo(
    ld_conf=(
        ("/etc/ld.so.conf.d/x86_64-linux-gnu.conf", LIB),
        ("/etc/ld.so.conf.d/00-cuda-compat.conf", COMPAT),
    ),
    libcuda=(f"{LIB}/libcuda.so.580.95.05", f"{COMPAT}/libcuda.so.575.57.08"),
)


def test_loader_order_conf_files_by_name_and_ld_library_path_first() -> None:
    facts = Facts(loader=LOADER)
    assert first_compat(facts, None).via == "/etc/ld.so.conf.d/00-cuda-compat.conf"
    renamed = LoaderInfo(
        ld_conf=((LOADER.ld_conf[0]), ("/etc/ld.so.conf.d/zz-cuda-compat.conf", COMPAT)),
        libcuda=LOADER.libcuda,
    )
    assert first_compat(Facts(loader=renamed), None) is None  # the driver's dir comes first
    ctx = EnvContext(kind="ssh", label="s", vars={"LD_LIBRARY_PATH": f"{COMPAT}:/opt/x"})
    assert first_compat(Facts(loader=renamed), ctx).via == "LD_LIBRARY_PATH"


def test_without_compat() -> None:
    assert without_compat(f"/opt/a:{COMPAT}::/usr/local/cuda/compat/lib:/opt/b") == "/opt/a:/opt/b"


DRY_RUN = r"""
set -e
dt_in_root() { … }
if [ -f "$(dt_in_root '/srv/fake hosts/pro6000' /etc/ld.so.conf.d/00-cuda-compat.conf)" ]; then
  mv "$(dt_in_root '/srv/fake hosts/pro6000' /etc/ld.so.conf.d/00-cuda-compat.conf)" "$(dt_in_root '/srv/fake hosts/pro6000' /etc/ld.so.conf.d/00-cuda-compat.conf.detective-tui-20261129-120000.disabled)"
  echo '@@dt unchanged skipped ldconfig: pro6000 is a filesystem under /srv/fake hosts/pro6000; run ldconfig on the machine that runs it'
  echo '@@dt changed moved /etc/ld.so.conf.d/00-cuda-compat.conf aside'
else
  echo '@@dt unchanged /etc/ld.so.conf.d/00-cuda-compat.conf is already gone'
fi
"""


def test_dry_run_of_the_conf_case_is_exact() -> None:
    facts = Facts(host=HostInfo(is_root=True), loader=LOADER)
    host = Host(name="pro6000", ssh="root@10.0.0.9", root="/srv/fake hosts/pro6000")
    plan = build_plan(facts, host, "drop-cuda-compat-path", {}, stamp="20261129-120000")
    # every path resolved inside the root at run time (the resolver's body is tested on its own)
    shown = plan_shown(plan)
    assert shown == DRY_RUN.strip("\n")
    assert plan.verify_gone == (ID,) and plan.needs_root
    assert (
        "mv \"$(dt_in_root '/srv/fake hosts/pro6000' /etc/ld.so.conf.d/00-cuda-compat.conf.detective-tui-20261129-120000.disabled)\""
        in (plan.steps[0].undo or "")
    )


SPECS = {
    "older": ({ID: "critical"}, "803"),
    "unsupported": ({ID: "critical"}, "804"),
    "forward": ({}, None),
    "unused": ({}, None),
}


def _inventory(tmp_path: Path, ssh: str | None = None, only: tuple[str, ...] = ()) -> str:
    hosts = []
    for case in only or tuple(SPECS):
        fake = build_fake_host(tmp_path / f"{case} root", compat_over_driver(case=case))
        entry: dict[str, Any] = {
            "name": case,
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


def _diagnose(capsys: pytest.CaptureFixture[str], inv: str, *targets: str) -> tuple[int, dict]:
    code = main(["--hosts", inv, "diagnose", *targets, "--json"])
    return code, {h["host"]: h for h in json.loads(capsys.readouterr().out)}


def _check(capsys: pytest.CaptureFixture[str], inv: str) -> None:
    code, hosts = _diagnose(capsys, inv)
    assert code == exitcodes.CRITICAL
    for case, (expected, error) in SPECS.items():
        got = {f["id"]: f["severity"] for f in hosts[case]["findings"]}
        assert got == expected, case
        if error:
            assert f"error {error}" in hosts[case]["findings"][0]["explanation"]
            assert [x["id"] for x in hosts[case]["findings"][0]["fixes"]] == [
                "drop-cuda-compat-path"
            ]


def test_fake_hosts_locally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(capsys, _inventory(tmp_path))


def test_fake_hosts_over_real_sshd(
    ssh_env: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _check(capsys, _inventory(tmp_path, ssh=ssh_env.alias))


def test_fix_applies_verifies_and_undo_restores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    inv = _inventory(tmp_path, only=("older",))
    conf = tmp_path / "older root" / "etc/ld.so.conf.d/00-cuda-compat.conf"
    assert main(["--hosts", inv, "fix", "older", "drop-cuda-compat-path", "--yes"]) == exitcodes.OK
    capsys.readouterr()
    assert not conf.exists()
    assert _diagnose(capsys, inv, "older")[1]["older"]["findings"] == []
    assert main(["--hosts", inv, "fix", "older", "--undo", "last", "--yes"]) == exitcodes.OK
    capsys.readouterr()
    assert conf.read_text() == f"{COMPAT}\n"
    assert [f["id"] for f in _diagnose(capsys, inv, "older")[1]["older"]["findings"]] == [ID]
