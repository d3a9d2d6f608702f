"""``--demo`` works for every headless command, before or after the sub-command."""

from __future__ import annotations

import json

import pytest

from tui.cli import main
from tui.core import exitcodes


@pytest.mark.parametrize(
    "argv",
    [
        ["--demo", "diagnose", "ct200", "h100-node", "--json"],
        ["diagnose", "--demo", "ct200", "h100-node", "--json"],
    ],
)
def test_diagnose_on_the_demo_fleet(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == exitcodes.CRITICAL
    hosts = {h["host"]: h for h in json.loads(capsys.readouterr().out)}
    assert [f["id"] for f in hosts["ct200"]["findings"]][:1] == ["flashinfer-arch-rejected"]
    assert [f for f in hosts["h100-node"]["findings"] if f["severity"] != "info"] == []


def test_unknown_demo_host_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--demo", "nosuch"]) == exitcodes.USAGE
    err = capsys.readouterr().err
    assert "'nosuch' is not a demo host" in err and "ct200" in err


def test_unreachable_demo_host_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--demo", "gone-dark", "h100-node", "--json"]) == exitcodes.UNREACHABLE
    hosts = {h["host"]: h for h in json.loads(capsys.readouterr().out)}
    assert hosts["gone-dark"]["reachable"] is False
    assert hosts["h100-node"]["reachable"] is True


def test_diagnose_on_the_demo_suggests_fix_commands_for_the_demo(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--demo", "diagnose", "ct200"]) == exitcodes.CRITICAL
    fixes = [ln.strip() for ln in capsys.readouterr().out.splitlines() if "detective-tui fix" in ln]
    assert fixes and all(f.endswith(" --demo") for f in fixes), fixes
