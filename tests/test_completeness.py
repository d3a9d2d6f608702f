"""Honest completeness (issue 9 item 5): what a probe could not see is reported, naming the
inventory line where the inventory is the cause, with a non-zero exit; a failed or partial
probe never ends in "No problems found" (CLI text, Markdown, --json, the TUI's words)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tui.core import exitcodes
from tui.core.facts import Facts, ProbeMeta
from tui.core.hosts import Host
from tui.core.judge.diagnosis import Diagnosis
from tui.core.rules.completeness import unseen
from tui.core.run.runner import ProbeResult
from tui.demo import fakehost
from tui.ui.fleet_state import HostState, status_text
from tui.ui.grouping import group_by_finding
from tui.ui.story import headline

REPO = Path(__file__).resolve().parents[1]
ALL_CLEAR = "No problems found"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True, text=True, cwd=REPO, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture(scope="module")
def healthy_tree(tmp_path_factory: pytest.TempPathFactory) -> fakehost.FakeHost:
    return fakehost.build_fake_host(
        tmp_path_factory.mktemp("h100") / "root", fakehost.healthy_h100()
    )


def inventory(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "hosts.yaml"
    path.write_text("hosts:\n" + body)
    return path


def test_a_missing_inventory_interpreter_names_its_line(
    tmp_path: Path, healthy_tree: fakehost.FakeHost
) -> None:
    inv = inventory(
        tmp_path,
        f"  - name: h100\n    local: true\n    root: {healthy_tree.root}\n    simulate: tree\n"
        f"    python:\n      - {healthy_tree.pythons[0]}\n      - /opt/gone/bin/python3\n",
    )
    expected = f"{inv}:8: `python: /opt/gone/bin/python3` does not exist on this machine"

    probe = cli("--hosts", str(inv), "probe", "--json")
    assert probe.returncode == exitcodes.UNREACHABLE, probe.stderr
    (host,) = json.loads(probe.stdout)
    assert any(r.startswith(expected) for r in host["unseen"]), host["unseen"]
    assert any(e.startswith(expected) for e in host["facts"]["probe"]["errors"])

    text = cli("--hosts", str(inv), "diagnose")
    assert text.returncode == exitcodes.UNREACHABLE and expected in " ".join(text.stdout.split())
    assert ALL_CLEAR not in text.stdout and "No findings in what the probe could see" in text.stdout

    markdown = cli("--hosts", str(inv), "diagnose", "--markdown")
    assert ALL_CLEAR not in markdown.stdout and "probe incomplete" in markdown.stdout
    assert expected in markdown.stdout


def test_the_same_healthy_host_with_a_right_inventory_is_all_clear(
    tmp_path: Path, healthy_tree: fakehost.FakeHost
) -> None:
    """The near miss: nothing unseen, so the all-clear stands (and exit 0)."""
    inv = inventory(
        tmp_path,
        f"  - name: h100\n    local: true\n    root: {healthy_tree.root}\n    simulate: tree\n"
        f"    python: {healthy_tree.pythons[0]}\n",
    )
    text = cli("--hosts", str(inv), "diagnose")
    assert text.returncode == exitcodes.OK and ALL_CLEAR in text.stdout, text.stdout


def test_a_root_that_is_not_a_directory_names_its_line(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "image.squashfs"
    not_a_dir.write_text("")
    inv = inventory(tmp_path, f"  - name: img\n    local: true\n    root: {not_a_dir}\n")
    expected = f"{inv}:4: `root: {not_a_dir}` is not a directory on this machine"

    probe = cli("--hosts", str(inv), "probe", "--json")
    assert probe.returncode == exitcodes.UNREACHABLE
    (host,) = json.loads(probe.stdout)
    assert host["error"].startswith(expected) and host["error_kind"] == "probe-failed"
    assert host["facts"]["probe"]["complete"] is False

    text = cli("--hosts", str(inv), "diagnose")
    assert text.returncode == exitcodes.UNREACHABLE and ALL_CLEAR not in text.stdout
    assert expected in " ".join(text.stdout.split())


# -- the TUI's words ---------------------------------------------------------------------------


def partial_result() -> ProbeResult:
    facts = Facts(probe=ProbeMeta(timed_out=("nvidia-smi",), complete=True))
    return ProbeResult(Host(name="h"), facts)


def test_the_tui_gives_no_all_clear_for_a_partial_probe() -> None:
    result = partial_result()
    reasons = unseen(result)
    assert reasons == ("nvidia-smi: no answer before the step deadline",)
    severity, line = headline(Diagnosis(findings=(), flashinfer=()), reasons)
    assert severity == "warning" and "could not see: nvidia-smi" in line
    assert headline(Diagnosis(findings=(), flashinfer=()))[0] == "healthy"  # the near miss
    state = HostState(host=result.host, status="done", result=result,
                      diagnosis=Diagnosis(findings=(), flashinfer=()))  # fmt: skip
    assert status_text(state).startswith("partial: nvidia-smi")
    (group,) = group_by_finding([state])
    assert group.severity == "warning" and "probe incomplete" in group.label
