"""What the CLI imports: ``--help``, ``local``, ``--demo`` and ``transcript`` never load asyncssh
(about 0.2 s, as long as a whole ``ssh host true``), and headless commands never load Textual.

Each command runs in a fresh interpreter under ``python -X importtime``; the modules it
imported are read from that report (the timings themselves are in ``bench/``).

``probe HOST --json`` — a process run per host by scripts, whose start-up is most of its cost
beside the probe itself — runs against the loopback sshd with its modules noted when the
probe's command starts on the host and at the exit (``sys.modules``, never times):
- nothing of the TUI, Rich (stderr is not a terminal and ``--json`` draws nothing), the
  diagnosis, the findings, the fixes, the demo or the other commands;
- neither platformdirs (the XDG directories are computed) nor ``importlib.resources`` (the
  probe script is read back from the cache dir, its sources by path), nor the transcript's
  export (``html``, Markdown, decisions);
- the modules of the probe's result (facts, history, JSON) are not loaded before the probe's
  command is sent: they load while the host works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SSHEnv

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


@pytest.mark.parametrize(
    "args", [["--demo", "diagnose", "ct200", "--json"], ["findings", "--json"]], ids=" ".join
)
def test_json_on_a_pipe_never_imports_rich(args: list[str], tmp_path: Path) -> None:
    """Rich draws tables and a terminal's progress: JSON, with stderr a pipe, needs neither."""
    modules = imported_modules(args, tmp_path)
    assert sorted(m for m in modules if m.split(".")[0] == "rich") == []


# runs the CLI as ``python -m tui.cli`` does, noting the modules loaded when the probe's command
# starts on the host and at the exit
_WATCH = """
import atexit, json, runpy, sys
from tui.core.reach import transport

at_start = []
execute = transport.Transport.execute

async def noting(self, *args, **kwargs):
    at_start.append(sorted(sys.modules))
    return await execute(self, *args, **kwargs)

transport.Transport.execute = noting
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps({"at_start": at_start,
                                                           "at_exit": sorted(sys.modules)})))
sys.argv[0] = "tui.cli"
runpy.run_module("tui.cli", run_name="__main__")
"""

# loaded by nothing that `probe HOST --json` does
NOT_FOR_PROBE = ("textual", "rich", "tui.ui", "tui.demo", "tui.core.fixes", "tui.core.findings.",
                 "tui.core.judge.diagnosis", "tui.core.judge.whatif", "tui.core.rules.evaluate",
                 "tui.core.rules.symptoms",
                 # the XDG dirs are computed (tui.core.locations), the probe script kept
                 # (probes.probe_script's cache_dir) and its files read by path
                 "platformdirs", "importlib.resources", "zipfile",
                 # the transcript's export (Markdown, HTML, decisions) is not a probe's
                 "html", "tui.core.md_safe", "tui.core.records.decision")  # fmt: skip
PROBE_COMMAND_MODULES = {"tui.commands", "tui.commands.probe", "tui.commands.host_args",
                         "tui.commands.output"}  # fmt: skip
# what the probe's result needs once the host has answered
AFTER_THE_HOST = ("tui.core.facts", "tui.core.facts.build", "tui.core.records.history",
                  "tui.core.judge.judged", "tui.core.records.probe_json")  # fmt: skip


def _run_watched(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    noted = tmp_path / "modules.json"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("SSH_AUTH_SOCK", None)
    proc = subprocess.run(
        [sys.executable, "-c", _WATCH, str(noted), *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return proc, json.loads(noted.read_text())


def _loaded(names: list[str], prefixes: tuple[str, ...]) -> list[str]:
    """The modules of ``names`` under ``prefixes`` (``pkg``: it and its modules; ``pkg.``:
    its modules only)."""
    return [m for m in names for p in prefixes
            if m.startswith(p) if p.endswith(".") or m == p or m.startswith(p + ".")]  # fmt: skip


def test_probe_json_loads_only_the_probe_and_its_result_after_the_host_answers(
    ssh_env: SSHEnv, tmp_path: Path
) -> None:
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(f"hosts:\n  - name: server\n    ssh: {ssh_env.alias}\n")
    proc, noted = _run_watched(tmp_path, "--hosts", str(inventory), "probe", "server", "--json")
    assert proc.returncode in (0, 2), proc.stderr[-2000:]  # 2: this machine is seen in part
    (row,) = json.loads(proc.stdout)
    assert row["host"] == "server" and row["reachable"] and row["facts"]["probe"]["complete"]
    assert proc.stderr.startswith("server: "), proc.stderr  # the progress line, without Rich
    (at_start,) = noted["at_start"]
    at_exit = noted["at_exit"]
    assert _loaded(at_exit, NOT_FOR_PROBE) == []
    commands = {m for m in at_exit if m.startswith("tui.commands")}
    assert commands == PROBE_COMMAND_MODULES
    assert "asyncssh" in at_start  # the connection is up when the command starts
    assert [m for m in AFTER_THE_HOST if m in at_start] == []
    assert [m for m in AFTER_THE_HOST if m not in at_exit] == []
