"""Symptoms: the probe reads the recent error lines of each serving unit's journal (bounded,
masked on the host) and ``diagnose --json`` carries them as ``symptoms``, each with the
signature it matches and the findings confirmed on the host — the real probe on fake hosts
whose journalctl prints their units' journals."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from fakehost_runs import probe_tree

from probes import probe_env, probe_script
from tui.cli import main
from tui.core.facts.build import facts_from_output
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.records.report import host_json
from tui.core.run.runner import ProbeResult
from tui.demo import fakehost
from tui.demo.journal import journal_path

UNIT = "sglang.service"
SECRET = "hf_abcdefghijklmnopqrstuvwx"


def _probe(tmp_path: Path, spec: fakehost.FakeHostSpec) -> tuple[str, dict]:
    fake = fakehost.build_fake_host(tmp_path / "host", spec)
    out = probe_tree(fake)
    facts = facts_from_output(out)
    host = Host(name="ct200", local=True, root=str(fake.root), simulate="tree")
    return out, host_json(ProbeResult(host, facts), diagnose(facts, host))


def test_the_reference_hosts_journal_is_its_symptom(tmp_path: Path) -> None:
    _out, data = _probe(tmp_path, fakehost.reference_ct200())
    assert data["symptoms"] == [
        {
            "source": f"unit {UNIT}",
            "at": "2026-12-01T14:01:52+00:00",
            "line": "2026-12-01T14:01:52+0000 ct200 python3[4242]: RuntimeError: FlashInfer "
            "requires GPUs with sm75 or higher",
            "signature": "flashinfer-arch-rejected",
            "explained_by": ["flashinfer-arch-rejected"],
            "primary": True,
        }
    ]


def test_bounded_and_masked_on_the_host(tmp_path: Path) -> None:
    head = "2026-12-01T14:00:00+0000 ct200 python3[4242]:"
    journal = [
        *(f"{head} INFO step {i}" for i in range(300)),
        f"{head} ERROR HF_TOKEN={SECRET} was rejected",
        *(f"{head} ERROR retry {i}" for i in range(30)),
    ]
    spec = fakehost.reference_ct200()
    spec = replace(spec, files={**spec.files, journal_path(UNIT): "\n".join(journal) + "\n"})
    out, data = _probe(tmp_path, spec)
    records = [ln.split("\t")[-1] for ln in out.splitlines() if "\tsymptom\t" in ln]
    # of the last 200 lines, the first 20 that look like errors; the secret masked on the host
    assert records == [f"{head} ERROR HF_TOKEN=*** was rejected"] + [
        f"{head} ERROR retry {i}" for i in range(19)
    ]
    assert SECRET not in out
    assert "symptoms" not in data  # error lines that match no signature are no symptom


def test_a_tree_not_built_by_detective_tui_runs_no_journalctl(tmp_path: Path) -> None:
    fake = fakehost.build_fake_host(tmp_path / "host", fakehost.reference_ct200())
    env = {**fake.env, **probe_env(fake.pythons, root=str(fake.root))}
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), env=env, capture_output=True, text=True, timeout=60
    ).stdout
    assert "\tsymptom\t" not in out and "\tend\t" in out


def test_no_unit_no_symptoms(tmp_path: Path) -> None:
    out, data = _probe(tmp_path, fakehost.reference_ct200(service=False))
    assert "\tsymptom\t" not in out and "symptoms" not in data


def test_diagnose_text_shows_the_symptom(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--demo", "diagnose", "ct200"])
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "symptom: sglang.service 2026-12-01 14:01: 'RuntimeError: FlashInfer requires GPUs "
        "with sm75 or higher' ← flashinfer-arch-rejected"
    ) in out
    main(["--demo", "diagnose", "ct200", "pro6000-mig", "h100-node", "--json"])
    hosts = {h["host"]: h for h in json.loads(capsys.readouterr().out)}
    assert [s["signature"] for s in hosts["ct200"]["symptoms"]] == ["flashinfer-arch-rejected"]
    # pytorch/pytorch#130181's assert, in the MIG host's vLLM journal, is its MIG finding
    (mig,) = hosts["pro6000-mig"]["symptoms"]
    assert (mig["signature"], mig["explained_by"]) == (
        "mig-device-count-assert",
        ["mig-device-not-selected"],
    )
    assert "symptoms" not in hosts["h100-node"]


def _bare_server(stdout: str, log: str | None) -> fakehost.FakeHostSpec:
    """The reference host's SGLang started by hand, `> /var/log/sglang.log 2>&1`: no unit, its
    stdout and stderr the log file (or ``stdout``: a pipe, a deleted file)."""
    spec = fakehost.reference_ct200()
    journal = spec.files[journal_path(UNIT)]
    processes = tuple(replace(p, unit=None, stdout=stdout) for p in spec.processes)
    files = {k: v for k, v in spec.files.items() if k != journal_path(UNIT)}
    if log is not None:
        files[log] = journal
    return replace(spec, processes=processes, files=files)


def test_a_bare_process_s_own_log_file_is_its_symptom(tmp_path: Path) -> None:
    out, data = _probe(tmp_path, _bare_server("/var/log/sglang.log", "/var/log/sglang.log"))
    (symptom,) = data["symptoms"]
    assert symptom["source"] == "process 4242 /var/log/sglang.log"
    assert symptom["signature"] == "flashinfer-arch-rejected"
    assert symptom["explained_by"] == ["flashinfer-arch-rejected"]
    # its three error-looking lines (raise, RuntimeError, Failed): fd 1 = fd 2, read once
    assert out.count("\tsymptom\tprocess\t") == 3
    assert "sk-demo-secret-value" not in out


@pytest.mark.parametrize(
    "stdout", ["pipe:[48213]", "socket:[48214]", "/var/log/sglang.log (deleted)", "/dev/pts/0"]
)
def test_no_regular_file_no_symptom(tmp_path: Path, stdout: str) -> None:
    out, data = _probe(tmp_path, _bare_server(stdout, "/var/log/sglang.log"))
    assert "\tsymptom\t" not in out and "symptoms" not in data
