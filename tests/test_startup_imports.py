"""What the CLI imports: ``--help``, ``local``, ``--demo`` and ``transcript`` never load asyncssh
(about 0.2 s, as long as a whole ``ssh host true``), and headless commands never load Textual.

Each command runs in a fresh interpreter under ``python -X importtime``; the modules it
imported are read from that report (the timings themselves are in ``bench/``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NEVER = ("asyncssh", "textual")


def isolated_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DETECTIVE_TUI_", "XDG_"))}
    env.update(
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        PYTHONPATH=str(REPO),
    )
    return env


def imported_modules(args: list[str], tmp_path: Path) -> set[str]:
    env = isolated_env(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tui.cli", *args],
        cwd=tmp_path,  # no ./hosts.yaml
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    modules = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                modules.add(name)
    assert "tui.commands" in modules  # the report was read
    return modules


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["probe", "--help"],
        ["transcript", "list"],
        ["probe", "local", "--json"],
        ["--demo", "diagnose", "--all", "--json"],
    ],
    ids=" ".join,
)
def test_commands_that_need_no_ssh_never_import_asyncssh_or_textual(
    args: list[str], tmp_path: Path
) -> None:
    modules = imported_modules(args, tmp_path)
    loaded = sorted(m for m in modules if m.split(".")[0] in NEVER)
    assert not loaded, f"{' '.join(args)} imported {loaded[:5]}"


def test_probe_never_imports_the_rules_it_does_not_run(tmp_path: Path) -> None:
    modules = imported_modules(["probe", "local", "--json"], tmp_path)
    rules = ("tui.core.rules.evaluate", "tui.core.judge.diagnosis", "tui.core.findings.registry")
    judging = sorted(m for m in modules if m.startswith(rules))
    assert not judging, judging


def test_help_imports_no_command_module_and_no_rich_or_yaml(tmp_path: Path) -> None:
    modules = imported_modules(["--help"], tmp_path)
    heavy = sorted(
        m
        for m in modules
        if m.split(".")[0] in ("rich", "yaml") or m.startswith(("tui.commands.", "tui.core."))
    )
    assert heavy == ["tui.core.exitcodes"], heavy


TUI_DEMO = """
import asyncio, sys
from tui.cli import build_parser
from tui.ui.launch import build_app

async def main():
    app = build_app(build_parser().parse_args(["--demo"]))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("P")
        for _ in range(3000):
            await pilot.pause(0.02)
            if all(not s.busy and s.status != "idle" for s in app.fleet):
                break
        else:
            raise SystemExit("the demo fleet was never probed")
        print(len(app.fleet), sorted(m for m in sys.modules if m.split(".")[0] == "asyncssh"))

asyncio.run(main())
"""


def test_the_tui_probing_the_demo_fleet_never_imports_asyncssh(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", TUI_DEMO],
        cwd=tmp_path,
        env=isolated_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    hosts, loaded = proc.stdout.split(" ", 1)
    assert int(hosts) >= 5
    assert loaded.strip() == "[]"
