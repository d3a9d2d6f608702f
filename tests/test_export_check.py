"""``export prometheus`` and ``check --format npd|nagios`` (issue 24) on the demo fleet, which
goes through the real probe and diagnosis: the exposition read back by prometheus_client's own
text parser, the file replaced by rename, and both check conventions on a critical, a healthy,
an unreachable and a partially probed host (the real probe's output cut mid-way, read by the
real ingest parser)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tui.cli import main
from tui.commands.verdict_probe import verdicts_of
from tui.core import exitcodes
from tui.core.hosts import Host
from tui.core.records.checks import NPD_MAX_BYTES, nagios, npd
from tui.core.records.prometheus import exposition
from tui.core.records.verdicts import STACK_KEYS, HostVerdict, host_verdict
from tui.core.redact import redact
from tui.core.run.ingest import Capture, result_of
from tui.core.run.runner import ProbeResult
from tui.core.run.service import judge_facts
from tui.demo.fleet import DEMO_HOSTS, demo_fleet

SERIES = (
    "detective_tui_host_up",
    "detective_tui_probe_complete",
    "detective_tui_finding",
    "detective_tui_stack_info",
    "detective_tui_last_probe_timestamp_seconds",
)
# ct200, the reference case, as its fake tree is built from real outputs
# (tui/demo/fixtures: nvidia-smi of driver 580.95.05, nvcc 12.8, torch 2.9.1+cu130)
CT200_STACK = {
    "host": "ct200",
    "driver": "580.95.05",
    "driver_cuda": "13.0",
    "torch": "2.9.1+cu130",
    "torch_cuda": "13.0",
    "nvcc": "12.8",
    "jit_cuda": "12.8",
    "flashinfer": "0.6.8",
}


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        assert family.type == "gauge", family.name
        for s in family.samples:
            out.setdefault(s.name, []).append((dict(s.labels), s.value))
    return out


@pytest.fixture(scope="module")
def demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One XDG cache for the module: the demo trees are built once. The module's own probes
    (fixtures outlive each test's isolated dirs) keep their history in a state dir of their own."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(cache))
        mp.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
        mp.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
        yield cache


@pytest.fixture
def cache_env(demo_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(demo_cache))
    return demo_cache


@pytest.fixture(scope="module")
def verdicts(demo_cache: Path) -> dict[str, HostVerdict]:
    hosts = [h for h in demo_fleet() if h.name in ("ct200", "h100-node", "gone-dark")]
    return {v.host: v for v in asyncio.run(verdicts_of(hosts))}


def test_the_demo_fleet_exported_and_parsed(cache_env: Path, tmp_path: Path) -> None:
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    prom = textfile / "detective_tui.prom"
    prom.write_text("# the previous export\n")
    old = os.open(prom, os.O_RDONLY)
    try:
        code = main(["--demo", "export", "prometheus", "--output", str(prom)])
        # replaced by rename: the old inode still holds the old text, whole
        assert os.read(old, 100) == b"# the previous export\n"
        assert os.fstat(old).st_ino != prom.stat().st_ino
    finally:
        os.close(old)
    assert code == exitcodes.CRITICAL
    assert sorted(p.name for p in textfile.iterdir()) == ["detective_tui.prom"]  # no temp left
    assert prom.stat().st_mode & 0o777 == 0o644  # the collector may run as another user

    got = samples(prom.read_text())
    assert set(got) == set(SERIES)
    names = [h.name for h in DEMO_HOSTS]
    assert len(names) == 19
    up = {labels["host"]: value for labels, value in got["detective_tui_host_up"]}
    assert up == {n: (0.0 if n == "gone-dark" else 1.0) for n in names}
    complete = {labels["host"]: value for labels, value in got["detective_tui_probe_complete"]}
    assert complete == up
    stamps = {labels["host"] for labels, _ in got["detective_tui_last_probe_timestamp_seconds"]}
    assert stamps == set(names)

    findings: dict[str, set[tuple[str, str]]] = {}
    for labels, value in got["detective_tui_finding"]:
        assert value == 1.0 and set(labels) == {"host", "finding", "severity"}
        findings.setdefault(labels["host"], set()).add((labels["finding"], labels["severity"]))
    assert ("flashinfer-arch-rejected", "critical") in findings["ct200"]
    assert "gone-dark" not in findings and "h100-node" not in findings
    # every other demo host shows the failure it was built for as a critical finding
    broken = set(names) - {"gone-dark", "h100-node"}
    assert {h for h, fs in findings.items() if any(s == "critical" for _, s in fs)} == broken

    stacks = {labels["host"]: labels for labels, _ in got["detective_tui_stack_info"]}
    assert set(stacks) == set(names) - {"gone-dark"}
    assert all(set(labels) == {"host", *STACK_KEYS} for labels in stacks.values())
    assert stacks["ct200"] == CT200_STACK


def test_stdout_without_output(cache_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo", "export", "prometheus", "ct200", "gone-dark"]) == exitcodes.CRITICAL
    got = samples(capsys.readouterr().out)
    assert got["detective_tui_host_up"] == [({"host": "ct200"}, 1.0), ({"host": "gone-dark"}, 0.0)]
    assert [labels for labels, _ in got["detective_tui_stack_info"]] == [CT200_STACK]
    findings = {
        (lb["host"], lb["finding"], lb["severity"]) for lb, _ in got["detective_tui_finding"]
    }
    assert findings == {
        ("ct200", "flashinfer-arch-rejected", "critical"),
        ("ct200", "nvcc-torch-major-mismatch", "warning"),
    }


def test_an_output_that_cannot_be_written_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "textfile" / "detective_tui.prom"
    assert main(["--demo", "export", "prometheus", "--output", str(missing)]) == exitcodes.USAGE
    assert f"{missing.parent} is not a directory" in capsys.readouterr().err
    assert not (tmp_path / "textfile").exists()


def test_a_failed_write_keeps_the_old_file(
    cache_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The temp file cannot be created (a directory holds its name: EISDIR, even for root):
    the error names the file, the old export stays whole."""
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    prom = textfile / "detective_tui.prom"
    prom.write_text("old\n")
    (textfile / f".detective_tui.prom.{os.getpid()}.tmp").mkdir()
    code = main(["--demo", "export", "prometheus", "gone-dark", "--output", str(prom)])
    assert code == exitcodes.USAGE
    err = capsys.readouterr().err
    assert f"cannot write {prom}" in err and "was left as it was" in err
    assert prom.read_text() == "old\n"


def test_label_values_are_escaped_and_redacted() -> None:
    """A host name and versions with quotes, backslashes, a newline and a token come back from
    the real parser as written, the token masked."""
    odd = 'rack"7\\gpu\nnode'
    result = ProbeResult(Host(name=odd), None, "no route", "unreachable")
    v = host_verdict(judge_facts(result), 1.5)
    token = "hf_" + "A1b2C3d4E5f6G7h8I9j0K1l2"
    stack = dict.fromkeys(STACK_KEYS, "")
    stack["torch"] = f'2.9.1 "{token}"'
    w = HostVerdict(host=v.host, up=True, unseen=(), findings=(), stack=redact(stack), probed_at=2)
    text = exposition([v, w])
    got = samples(text)
    assert {labels["host"] for labels, _ in got["detective_tui_host_up"]} == {odd}
    ((labels, _),) = got["detective_tui_stack_info"]
    assert labels["torch"] == '2.9.1 "***"' and token not in text


# -- check ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def partial(demo_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> HostVerdict:
    """h100-node (healthy) from its real standalone probe, the output cut in the middle."""
    script = tmp_path_factory.mktemp("script") / "probe.sh"
    with open(script, "w") as f, pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stdout", f)
        assert main(["probe-script", "--demo", "h100-node"]) == 0
    done = subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines(keepends=True)
    cut = "".join(lines[: len(lines) // 2])
    host = next(h for h in demo_fleet() if h.name == "h100-node")
    result, _ = result_of(host, [Capture("h100-node", "out/h100-node", cut)])
    verdict = host_verdict(judge_facts(result), 3.0)
    assert verdict.up and not verdict.complete
    return verdict


def test_npd_on_critical_healthy_unreachable_and_partial(
    verdicts: dict[str, HostVerdict], partial: HostVerdict
) -> None:
    critical = npd([verdicts["ct200"]])
    assert critical.code == 1
    assert critical.line.startswith("flashinfer-arch-rejected: FlashInfer 0.6.8 has no usable")
    healthy = npd([verdicts["h100-node"]])
    assert (healthy.code, healthy.line) == (
        0,
        "OK: h100-node: driver, torch, nvcc and FlashInfer agree",
    )
    down = npd([verdicts["gone-dark"]])
    assert down.code == 2
    assert down.line == "unknown: gone-dark not reached: no answer (simulated demo host)"
    cut = npd([partial])
    assert cut.code == 2 and cut.line.startswith("unknown: h100-node probe incomplete: ")
    fleet = npd(list(verdicts.values()))  # the critical host wins over the unknown one
    assert fleet.code == 1 and fleet.line.startswith("ct200: flashinfer-arch-rejected")
    for r in (critical, healthy, down, cut, fleet):
        assert "\n" not in r.line and len(r.line.encode()) <= NPD_MAX_BYTES, r.line


def test_nagios_on_critical_healthy_unreachable_and_partial(
    verdicts: dict[str, HostVerdict], partial: HostVerdict
) -> None:
    def parsed(line: str) -> tuple[str, str, dict[str, str]]:
        status, _, rest = line.partition(": ")
        text, _, perf = rest.partition(" | ")
        return status, text, dict(p.split("=", 1) for p in perf.split())

    critical = nagios([verdicts["ct200"]])
    status, text, perf = parsed(critical.line)
    assert (critical.code, status) == (2, "CRITICAL")
    assert text.startswith("flashinfer-arch-rejected: FlashInfer 0.6.8 has no usable target")
    assert perf == {
        "critical": "1;;;0",
        "warning": "1;;;0",  # nvcc-torch-major-mismatch
        "info": "0;;;0",
        "unknown_hosts": "0;;;0",
        "hosts": "1;;;0",
    }
    healthy = nagios([verdicts["h100-node"]])
    assert healthy.code == 0 and parsed(healthy.line)[:2] == (
        "OK",
        "h100-node: driver, torch, nvcc and FlashInfer agree",
    )
    down = nagios([verdicts["gone-dark"]])
    assert down.code == 3 and parsed(down.line)[0] == "UNKNOWN"
    assert parsed(down.line)[2]["unknown_hosts"] == "1;;;0"
    cut = nagios([partial, verdicts["h100-node"]])  # a partial host is never OK
    assert cut.code == 3 and parsed(cut.line)[1].startswith("h100-node probe incomplete: ")


def test_check_cli_exit_codes(cache_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo", "check", "ct200", "--format", "npd"]) == 1
    assert capsys.readouterr().out.startswith("flashinfer-arch-rejected: ")
    assert main(["--demo", "check", "gone-dark", "--format", "nagios"]) == 3
    assert capsys.readouterr().out.startswith("UNKNOWN: gone-dark not reached: ")
    assert main(["--demo", "check", "nosuch", "--format", "npd"]) == exitcodes.USAGE
    assert "'nosuch' is not a demo host" in capsys.readouterr().err


def test_a_bad_inventory_entry_is_a_host_down_never_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text("hosts:\n  - name: typo\n    local: true\n    pyhton: /x\n")
    prom = tmp_path / "detective_tui.prom"
    code = main(["--hosts", str(inv), "export", "prometheus", "--output", str(prom)])
    assert code == exitcodes.USAGE  # after writing the file, as diagnose does
    assert f"{inv}:4: key 'pyhton' is unknown" in capsys.readouterr().err
    got = samples(prom.read_text())
    assert got["detective_tui_host_up"] == [({"host": "typo"}, 0.0)]
    assert main(["--hosts", str(inv), "check", "typo", "--format", "npd"]) == 2
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"unknown: typo inventory error: {str(inv)[:20]}")
    assert len(line.encode()) <= NPD_MAX_BYTES  # the long path cut, marked "..."
