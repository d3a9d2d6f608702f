"""``history`` and ``diff`` (CONTRACT.md shapes) on the demo fleet's history, the package-log
parsers on real log lines, and ``--since``."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tui.cli import main
from tui.core import exitcodes
from tui.core.facts.host_changes import apt_events, dpkg_events, rpm_events
from tui.core.judge.host_stack import STACK_KEYS
from tui.core.records.drift import drift_json
from tui.core.records.history import Snapshot
from tui.core.records.history_view import SINCE_OK, WhenError, parse_when
from tui.demo.history import BEFORE_AT


@pytest.fixture(scope="module")
def demo_trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("demo-cache")


@pytest.fixture(autouse=True)
def shared_demo_trees(demo_trees: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The module's demo trees and demo history are built and seeded once (reading them only
    adds probes of hosts that had none)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(demo_trees))
    monkeypatch.setenv("XDG_STATE_HOME", str(demo_trees / "state"))


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_demo_history_of_the_host_that_broke_after_an_upgrade(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, listed = _json(capsys, "--demo", "history", "ct200")
    assert code == exitcodes.OK
    assert [(e["verdict"], e["at"] == BEFORE_AT) for e in listed] == [
        ("critical", False),
        ("none", True),
    ]
    assert set(listed[0]["stack"]) == set(STACK_KEYS)
    assert "flashinfer-arch-rejected" in listed[0]["findings"] and listed[1]["findings"] == []
    assert "torch 2.9.0+cu130 → 2.9.1+cu130" in listed[0]["changed"]
    assert "finding flashinfer-arch-rejected appeared" in listed[0]["changed"]

    code, diff = _json(capsys, "--demo", "diff", "ct200")
    assert code == exitcodes.OK and diff["other"] is None
    assert (diff["from"]["at"], diff["to"]["at"]) == (BEFORE_AT, listed[0]["at"])
    facts = {c["fact"]: (c["before"], c["after"]) for c in diff["changes"] if not c["python"]}
    assert facts["CUDA_HOME"] == ("/usr/local/cuda-13.0", "/usr/local/cuda-12.8")
    assert diff["findings"]["appeared"][:1] == ["flashinfer-arch-rejected"]
    causes = {c["change"].split(" ")[0]: c["evidence"] for c in diff["likely_causes"]}
    assert causes["torch"].startswith("pip, ")
    assert "purge cuda-toolkit-13-0 13.0.2-1 → — by apt-get -y purge" in causes["toolkits"]

    code, since_ok = _json(capsys, "--demo", "diff", "ct200", "--since", "ok")
    assert since_ok["from"]["at"] == BEFORE_AT


def test_demo_diff_of_two_hosts(capsys: pytest.CaptureFixture[str]) -> None:
    code, diff = _json(capsys, "--demo", "diff", "ct200", "h100-node")
    assert code == exitcodes.OK
    assert (diff["host"], diff["other"]) == ("ct200", "h100-node")
    changed = {(c["fact"], c["python"]): (c["before"], c["after"]) for c in diff["changes"]}
    assert changed["driver CUDA", None] == ("13.0", "12.8")
    assert changed["torch", "/opt/venv/bin/python3"] == ("2.9.1+cu130", "2.8.0+cu128")
    assert "flashinfer-arch-rejected" in diff["findings"]["gone"]
    assert diff["likely_causes"] == []  # another host's logs explain nothing here
    assert main(["--demo", "diff", "ct200", "h100-node"]) == exitcodes.OK
    out = capsys.readouterr().out
    assert "ct200 (" in out and "→ h100-node (" in out and "driver CUDA 13.0 → 12.8" in out


def test_demo_drift_shows_broken_groups_against_the_nearest_healthy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, data = _json(capsys, "--demo", "drift", "ct200", "ct201", "h100-node", "gone-dark")
    assert code == exitcodes.OK
    assert [(g["hosts"], g["healthy"]) for g in data["groups"]] == [
        (["ct200", "ct201"], False),
        (["h100-node"], True),
    ]
    (drift,) = data["drift"]
    assert drift["nearest_healthy"]["hosts"] == ["h100-node"]
    assert [(d["key"], d["value"], d["healthy"]) for d in drift["differences"]] == [
        ("driver_cuda", "13.0", "12.8"),
        ("torch_cuda", "13.0", "12.8"),
    ]
    assert drift["words"] == (
        "2 hosts (ct200, ct201; critical) differ from the 1 healthy host (h100-node) only in "
        "driver CUDA 13.0 vs 12.8, torch CUDA 13.0 vs 12.8"
    )
    assert data["not_reached"] == ["gone-dark"]


def test_drift_groups_by_stack_and_health() -> None:
    def snap(host: str, verdict: str, nvcc: str) -> Snapshot:
        values = {"driver_cuda": "13.0", "torch_cuda": "13.0", "nvcc": nvcc, "jit_cuda": nvcc}
        values["flashinfer"] = "0.6.8"
        return Snapshot(0, host, "2026-12-01T00:00:00+00:00", verdict, (), values, {}, (), None)

    fleet = [snap(f"ok{i:02d}", "none", "13.0") for i in range(12)]
    fleet += [snap(f"bad{i}", "critical", "12.8") for i in range(3)]
    fleet += [snap("odd", "warning", "13.0"), snap("info1", "info", "13.0")]
    data = drift_json(fleet)
    words = [d["words"] for d in data["drift"]]
    assert words[0] == (
        "3 hosts (bad0, bad1, bad2; critical) differ from the 13 healthy hosts (info1, ok00, "
        "ok01, ok02, ok03, ok04, ok05, ok06, ok07, ok08, ok09, ok10, ok11) only in nvcc 12.8 vs "
        "13.0, JIT CUDA 12.8 vs 13.0"
    )
    assert words[1].startswith("1 host (odd; warning) shares the stack of the 13 healthy hosts")


def test_a_never_probed_host_has_an_empty_history(capsys: pytest.CaptureFixture[str]) -> None:
    assert _json(capsys, "history", "root@10.9.9.9") == (exitcodes.OK, [])
    assert main(["history", "root@10.9.9.9"]) == exitcodes.OK
    assert "never probed" in capsys.readouterr().out
    assert main(["diff", "root@10.9.9.9"]) == exitcodes.UNREACHABLE
    assert "0 reached probe(s) in the history" in capsys.readouterr().err


def test_bad_since_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "somehost", "--since", "last tuesday"]) == exitcodes.USAGE
    assert "--since 'last tuesday': give an ISO-8601 date" in capsys.readouterr().err


def test_since_forms() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert parse_when("6h", now) == datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
    assert parse_when("2d", now) == datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert parse_when("2026-11-30", now) == datetime(2026, 11, 30, tzinfo=UTC)
    assert parse_when("2026-11-30T03:00+01:00", now).hour == 3  # type: ignore[union-attr]
    assert parse_when("OK") == SINCE_OK
    with pytest.raises(WhenError):
        parse_when("soon")


# Real lines from the apt history.log and dpkg.log of the Debian 12 machine these tests were
# written on (its package runs of 2025-06-24).
APT_LOG = [
    "Start-Date: 2025-06-24  14:36:25",
    "Commandline: apt-get -qqy upgrade",
    "Upgrade: libsystemd0:amd64 (252.36-1~deb12u1, 252.38-1~deb12u1), "
    "libudev1:amd64 (252.36-1~deb12u1, 252.38-1~deb12u1)",
    "End-Date: 2025-06-24  14:36:25",
    "",
    "Start-Date: 2025-06-24  14:42:05",
    "Commandline: apt-get install -qqy gcc python3-pip",
    "Install: libalgorithm-merge-perl:amd64 (0.08-5, automatic), gcc:amd64 (4:12.2.0-3), "
    "python3-pip:amd64 (23.0.1+dfsg-1)",
    "End-Date: 2025-06-24  14:42:17",
]
DPKG_LOG = """\
2025-06-24 14:36:25 upgrade libsystemd0:amd64 252.36-1~deb12u1 252.38-1~deb12u1
2025-06-24 14:36:25 status half-configured libsystemd0:amd64 252.38-1~deb12u1
2025-06-24 14:36:29 install libgdbm6:amd64 <none> 1.23-3
""".splitlines()
# dnf.rpm.log in the form dnf's own CI scenarios check (an Upgrade: line with the new build,
# then Upgraded: with the one it replaced); no real log of a host was at hand
RPM_LOG = """\
2022-03-28T14:31:28+00 INFO --- logging initialized ---
2022-03-28T14:31:28+00 SUBDEBUG Upgrade: flac-1.3.3-3.fc29.x86_64
2022-03-28T14:31:28+00 SUBDEBUG Upgraded: flac-1.3.3-2.fc29.x86_64
2022-03-28T14:31:29+00 SUBDEBUG Erase: flac-1.3.3-3.fc29.x86_64
""".splitlines()


def test_package_logs_parse_on_real_lines() -> None:
    every = re.compile(".")
    apt = apt_events(APT_LOG, every)
    assert [(e.action, e.package, e.before, e.after) for e in apt[:2]] == [
        ("upgrade", "libsystemd0", "252.36-1~deb12u1", "252.38-1~deb12u1"),
        ("upgrade", "libudev1", "252.36-1~deb12u1", "252.38-1~deb12u1"),
    ]
    assert apt[0].at == "2025-06-24 14:36:25" and apt[0].by == "apt-get -qqy upgrade"
    assert [(e.package, e.after) for e in apt[2:]] == [
        ("libalgorithm-merge-perl", "0.08-5"),
        ("gcc", "4:12.2.0-3"),
        ("python3-pip", "23.0.1+dfsg-1"),
    ]
    assert apt_events(APT_LOG) == []  # by default only CUDA / NVIDIA packages count
    dpkg = dpkg_events(DPKG_LOG, every)
    assert [(e.action, e.package, e.before, e.after) for e in dpkg] == [
        ("upgrade", "libsystemd0", "252.36-1~deb12u1", "252.38-1~deb12u1"),
        ("install", "libgdbm6", None, "1.23-3"),
    ]
    rpm = rpm_events(RPM_LOG, every)
    assert [(e.action, e.package, e.before, e.after) for e in rpm] == [
        ("upgrade", "flac", "1.3.3-2.fc29", "1.3.3-3.fc29"),
        ("remove", "flac", "1.3.3-3.fc29", None),
    ]
