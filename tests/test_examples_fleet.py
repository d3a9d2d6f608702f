"""examples/ for fleet plumbing (issue 24), run as they are: the node-problem-detector plugin
config (JSON, and its copy in the DaemonSet's ConfigMap) and its plugin script, the Slurm
health check against a stand-in ``scontrol`` on PATH that records what it is asked, the gpud
plugin spec's script, the systemd units and the cron line (their command lines read by the
real parser, the units by ``systemd-analyze verify`` where installed), and the Grafana panel's
queries naming only series the export writes. The tool they run is the real one, on demo
hosts (a wrapper adds ``--demo``)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from configparser import ConfigParser
from pathlib import Path

import pytest
import yaml

from tui.cli import build_parser
from tui.core.records.checks import NPD_MAX_BYTES
from tui.core.records.prometheus import FAMILIES, PREFIX
from tui.core.systemd_syntax import split_exec_start

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
INSTALLED = "/opt/detective-tui/bin/detective-tui"  # where every example expects the tool
SERIES = {PREFIX + name for name, _ in FAMILIES}


@pytest.fixture(scope="module")
def demo_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment the examples run under: DETECTIVE_TUI is this checkout's tool with
    ``--demo``, the demo trees built once into one cache."""
    base = tmp_path_factory.mktemp("examples")
    tool = base / "detective-tui"
    tool.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m tui.cli --demo "$@"\n')
    tool.chmod(0o755)
    env = dict(os.environ, DETECTIVE_TUI=str(tool), PYTHONPATH=str(REPO))
    for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        env[var] = str(base / var.lower())
    yield env


def parses_as_our_command(argv: list[str]) -> None:
    assert argv[0] == INSTALLED
    build_parser(commands=[argv[1]]).parse_args(argv[1:])  # exits (3) if it does not


# -- node-problem-detector ----------------------------------------------------------------


def npd_config() -> dict:
    return json.loads((EXAMPLES / "npd" / "cuda-stack-monitor.json").read_text())


def test_npd_monitor_config() -> None:
    config = npd_config()
    assert config["plugin"] == "custom"
    assert config["pluginConfig"]["max_output_length"] == NPD_MAX_BYTES
    (condition,) = config["conditions"]
    assert condition["type"] == "CudaStackProblem"
    (rule,) = config["rules"]
    assert (rule["type"], rule["condition"]) == ("permanent", "CudaStackProblem")
    # the DaemonSet's ConfigMap carries the same config, and mounts the tool where it points
    docs = list(yaml.safe_load_all((EXAMPLES / "npd" / "daemonset.yaml").read_text()))
    configmap = next(d for d in docs if d["kind"] == "ConfigMap")
    assert json.loads(configmap["data"]["cuda-stack-monitor.json"]) == config
    daemonset = next(d for d in docs if d["kind"] == "DaemonSet")
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["hostPID"] is True
    (container,) = pod["containers"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert rule["path"].startswith("/opt/detective-tui/") and mounts["/opt/detective-tui"]
    assert (
        f"--config.custom-plugin-monitor=/config/{next(iter(configmap['data']))}"
        in (container["command"])
    )
    assert rule["args"] == ["local"]


@pytest.mark.slow  # the real tool in a subprocess, twice: ~5-10 s
def test_npd_plugin_script(demo_env: dict[str, str]) -> None:
    """The plugin script as the rule runs it, on a critical and on a healthy demo host."""
    (rule,) = npd_config()["rules"]
    script = EXAMPLES / "npd" / Path(rule["path"]).name
    for host, code in (("ct200", 1), ("h100-node", 0)):
        done = subprocess.run(
            [str(script), host], capture_output=True, text=True, env=demo_env, timeout=120
        )
        assert done.returncode == code, done.stderr
        (line,) = done.stdout.splitlines()
        assert len(line.encode()) <= NPD_MAX_BYTES
        assert line.startswith("flashinfer-arch-rejected: " if code else "OK: h100-node: ")


# -- Slurm --------------------------------------------------------------------------------

SCONTROL = """#!/bin/sh
# a stand-in scontrol: `show node N -o` prints $SCONTROL_NODE; every call is recorded
printf '%s\\n' "$*" >> "$SCONTROL_LOG"
[ "$1" = show ] && printf '%s\\n' "$SCONTROL_NODE"
exit 0
"""


def node_line(state: str, reason: str | None) -> str:
    line = f"NodeName=gpu07 Arch=x86_64 CoresPerSocket=32 State={state} Partitions=gpu"
    return line + (f" Reason={reason} [root@2026-12-01T20:00:00]" if reason else "")


@pytest.mark.slow  # the real tool in a subprocess per case: 3-7 s each
@pytest.mark.parametrize(
    ("host", "state", "reason", "update"),
    [
        pytest.param("ct200", "IDLE", None, "DRAIN", id="critical-drains"),
        pytest.param("h100-node", "IDLE+DRAIN", "detective:torch-cpu-build: x", "RESUME",
                     id="ok-resumes-ours"),
        pytest.param("h100-node", "IDLE+DRAIN", "bad DIMM B2", None, id="ok-keeps-others-drain"),
        pytest.param("gone-dark", "IDLE+DRAIN", "detective:torch-cpu-build: x", None,
                     id="unknown-changes-nothing"),
    ],
)  # fmt: skip
def test_slurm_health_check(
    demo_env: dict[str, str],
    tmp_path: Path,
    host: str,
    state: str,
    reason: str | None,
    update: str | None,
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "scontrol").write_text(SCONTROL)
    (bindir / "scontrol").chmod(0o755)
    log = tmp_path / "scontrol.log"
    env = dict(
        demo_env,
        PATH=f"{bindir}:{os.environ['PATH']}",
        SCONTROL_LOG=str(log),
        SCONTROL_NODE=node_line(state, reason),
        DETECTIVE_TUI_TARGET=host,
        DETECTIVE_TUI_NODE="gpu07",
    )
    script = EXAMPLES / "slurm" / "detective-healthcheck.sh"
    done = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env, timeout=120)
    calls = log.read_text().splitlines()
    assert calls[0] == "show node gpu07 -o"
    updates = calls[1:]
    if update is None:
        assert updates == [], updates
        assert done.returncode == (2 if host == "gone-dark" else 0), done.stderr
    elif update == "RESUME":
        assert updates == ["update NodeName=gpu07 State=RESUME"]
    else:
        (call,) = updates
        assert call.startswith(
            "update NodeName=gpu07 State=DRAIN Reason=detective:flashinfer-arch-rejected: "
        )


# -- gpud ---------------------------------------------------------------------------------


@pytest.mark.slow  # the real tool in a subprocess: ~4 s
def test_gpud_plugin_spec_runs_its_script(demo_env: dict[str, str]) -> None:
    (spec,) = yaml.safe_load((EXAMPLES / "gpud" / "detective-tui-plugin.yaml").read_text())
    assert spec["type"] == "component" and len(spec["plugin_name"]) <= 128
    (step,) = spec["health_state_plugin"]["steps"]
    script = step["run_bash_script"]
    assert script["content_type"] == "plaintext"
    env = dict(demo_env, DETECTIVE_TUI_TARGET="ct200")
    done = subprocess.run(
        ["bash", "-c", script["script"]], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 2  # Nagios CRITICAL: gpud marks the component unhealthy
    assert done.stdout.startswith("CRITICAL: flashinfer-arch-rejected: ")


# -- Prometheus: systemd timer, cron, Grafana -----------------------------------------------


def unit(name: str) -> ConfigParser:
    parser = ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string((EXAMPLES / "prometheus" / name).read_text())
    return parser


def test_systemd_service_and_timer() -> None:
    service = unit("detective-tui-export.service")["Service"]
    assert service["Type"] == "oneshot"
    argv = split_exec_start(service["ExecStart"])
    parses_as_our_command(argv)
    assert argv[1:3] == ["export", "prometheus"] and argv[-1].endswith(".prom")
    # a critical finding or an unreachable host is a verdict written, not a failed unit
    assert set(service["SuccessExitStatus"].split()) == {"1", "2"}
    timer = unit("detective-tui-export.timer")
    assert timer["Timer"]["OnUnitActiveSec"] and timer["Install"]["WantedBy"] == "timers.target"
    if shutil.which("systemd-analyze") is None:
        return
    done = subprocess.run(
        ["systemd-analyze", "verify", *(str(p) for p in (EXAMPLES / "prometheus").glob("*.[st]*"))],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    # the only complaint allowed: the tool is not installed at /opt/detective-tui here
    complaints = [ln for ln in done.stderr.splitlines() if INSTALLED not in ln]
    assert complaints == [], done.stderr


def test_cron_line() -> None:
    lines = (EXAMPLES / "prometheus" / "detective-tui-export.cron").read_text().splitlines()
    (entry,) = [ln for ln in lines if ln and not ln.startswith("#") and "=" not in ln.split()[0]]
    fields = entry.split(None, 6)
    assert fields[:5] == ["*/5", "*", "*", "*", "*"] and fields[5] == "root"
    command = shlex.split(fields[6])
    assert command[:4] == ["timeout", "-k", "10", "300"]  # a deadline on every run
    argv = command[4 : command.index("2>&1")]
    parses_as_our_command(argv)
    assert argv[1:] == [
        "export",
        "prometheus",
        "local",
        "--output",
        "/var/lib/node_exporter/textfile_collector/detective_tui.prom",
    ]


def test_grafana_panel_queries_name_only_exported_series() -> None:
    panel = json.loads((EXAMPLES / "grafana" / "cuda-stack-panel.json").read_text())
    exprs = [t["expr"] for t in panel["targets"]]
    named = {m for e in exprs for m in re.findall(r"\bdetective_tui_\w+", e)}
    assert named <= SERIES and "detective_tui_finding" in named, named
    stack = next(e for e in exprs if "stack_info" in e)
    assert all(k in stack for k in ("driver_cuda", "torch_cuda", "jit_cuda", "flashinfer"))
