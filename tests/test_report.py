"""Reports: the CONTRACT.md JSON object, deep agreement, and the Markdown for GitHub issues."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import datetime, timezone

import pytest
from factsmaker import PY, make_facts

from tui.core.hosts import Host
from tui.core.judge.diagnosis import (
    DISAGREES,
    deep_differences,
    deep_invocation,
    diagnose,
    with_deep,
)
from tui.core.records.issue_report import tool_version
from tui.core.records.report import host_json, markdown_report
from tui.core.run.runner import UNREACHABLE, ProbeResult

HOST = Host(name="ct200", ssh="root@10.1.2.200")


@pytest.fixture(scope="module")
def demo_hosts_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The report of the demo's reference host, through the real probe of its fake tree."""
    from tui.core.run.runner import Session
    from tui.demo.fleet import demo_fleet

    (ct200,) = [h for h in demo_fleet(tmp_path_factory.mktemp("demo")) if h.name == "ct200"]

    async def probe() -> ProbeResult:
        async with Session() as session:
            return await session.probe(ct200)

    result = asyncio.run(probe())
    return markdown_report([(result, diagnose(result.facts, ct200))])


def _result(**kw) -> tuple[ProbeResult, object]:
    facts = make_facts(**kw)
    return ProbeResult(HOST, facts), diagnose(facts)


def _deep_like(replayed) -> dict:
    return {
        "import_error": replayed.import_error,
        "cuda_home": replayed.cuda_home,
        "cuda_version": replayed.jit_cuda,
        "target_cuda_archs": list(replayed.target_cuda_archs),
        "check_cuda_arch": replayed.check_cuda_arch,
    }


def test_host_json_has_the_contract_shape() -> None:
    result, diagnosis = _result()
    data = host_json(result, diagnosis)
    json.dumps(data)  # serialisable as is
    assert {"host", "reachable", "error", "facts", "findings", "flashinfer"} <= set(data)
    finding = data["findings"][0]
    assert set(finding) == {
        "id",
        "severity",
        "title",
        "explanation",
        "evidence",
        "python",
        "fixes",
    }
    fix = finding["fixes"][0]
    assert set(fix) == {"id", "title", "params", "resolves", "needs_root", "commands"}
    fi = data["flashinfer"][0]
    for key in (
        "python",
        "version",
        "cuda_home",
        "cuda_version",
        "cuda_version_source",
        "target_cuda_archs",
        "check_cuda_arch",
        "import_error",
        "warnings",
        "compiles",
    ):
        assert key in fi
    assert "deep" not in fi and "agrees" not in fi


def test_unreachable_host_json() -> None:
    result = ProbeResult(HOST, None, "cannot connect to 10.1.2.200:22", UNREACHABLE)
    data = host_json(result, None)
    assert data["reachable"] is False and data["findings"] == [] and data["facts"] is None
    assert data["error"] == "cannot connect to 10.1.2.200:22"


def test_secrets_are_redacted_everywhere() -> None:
    facts = make_facts(service_env={"CUDA_HOME": "/usr/local/cuda-12.8", "HF_TOKEN": "hf_abc"})
    result = ProbeResult(HOST, facts)
    data = host_json(result, diagnose(facts))
    assert "hf_abc" not in json.dumps(data)
    assert "hf_abc" not in markdown_report([(result, diagnose(facts))])


def test_deep_agreement_and_disagreement() -> None:
    result, diagnosis = _result()
    replayed = diagnosis.flashinfer[0]
    same = _deep_like(replayed)
    data = host_json(result, diagnosis, {PY: same})
    assert data["flashinfer"][0]["agrees"] is True
    assert with_deep(diagnosis, {PY: same}) == diagnosis

    other = dict(same, target_cuda_archs=["12.0a"], check_cuda_arch="pass")
    assert host_json(result, diagnosis, {PY: other})["flashinfer"][0]["agrees"] is False
    diffs = deep_differences(replayed, other)
    assert len(diffs) == 2 and diffs[0].startswith("target_cuda_archs: replay []")
    flagged = with_deep(diagnosis, {PY: other})
    extra = flagged.finding(DISAGREES)
    assert extra is not None and extra.severity == "info" and extra.evidence == diffs
    assert flagged.worst() == "critical"


def test_failed_deep_run_is_not_a_disagreement() -> None:
    result, diagnosis = _result()
    failed = {"error": "the deep check printed no result (exit status 127)"}
    assert host_json(result, diagnosis, {PY: failed})["flashinfer"][0]["agrees"] is None
    assert with_deep(diagnosis, {PY: failed}) == diagnosis


def test_deep_invocation_reproduces_the_judged_environment() -> None:
    facts = make_facts(service_env={"CUDA_HOME": "/usr/local/cuda-12.8", "HF_TOKEN": "***"})
    replayed = diagnose(facts).flashinfer[0]
    env, unset = deep_invocation(facts, replayed)
    assert env["CUDA_HOME"] == "/usr/local/cuda-12.8" and "HF_TOKEN" not in env
    assert "CUDA_PATH" in unset.split(",") and "CUDA_HOME" not in unset.split(",")


def test_markdown_findings_first_then_details() -> None:
    result, diagnosis = _result()
    down = ProbeResult(Host(name="down", ssh="x"), None, "cannot connect", UNREACHABLE)
    text = markdown_report([(result, diagnosis), (down, None)])
    assert text.index("### 🔴 critical: `flashinfer-arch-rejected`") < text.index("<details>")
    assert "<summary>FlashInfer 0.6.8 replay</summary>" in text
    assert "check_cuda_arch: fail" in text
    assert "GPUs: 1× RTX PRO 6000 Blackwell Server Edition (SM 12.0)" in text
    assert "## down — unreachable" in text
    assert text.count("<details>") == text.count("</details>") == 2


def test_markdown_healthy_host() -> None:
    facts = make_facts(gpus=("9.0",), driver="570.148.08", torch_cuda="12.8")
    text = markdown_report([(ProbeResult(HOST, facts), diagnose(facts))])
    assert "## ct200 — no findings" in text


def test_report_opens_with_version_time_and_a_summary_table_worst_first() -> None:
    result, diagnosis = _result()
    healthy_facts = make_facts(gpus=("9.0",), driver="570.148.08", torch_cuda="12.8")
    healthy = ProbeResult(Host(name="a-healthy", ssh="y"), healthy_facts)
    down = ProbeResult(Host(name="z-down", ssh="x"), None, "cannot connect", UNREACHABLE)
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    text = markdown_report(
        [(healthy, diagnose(healthy_facts)), (result, diagnosis), (down, None)], now=now
    )
    lines = text.splitlines()
    assert lines[0] == "# detective-tui report"
    assert (
        lines[2]
        == f"detective-tui {tool_version()} · 2026-01-02 03:04:05 UTC · 3 host(s), worst first"
    )
    assert tool_version() != "unknown"
    table = [ln for ln in lines if ln.startswith("| ")]
    assert [row.split(" | ")[0] for row in table[1:]] == ["| z-down", "| ct200", "| a-healthy"]
    assert "`flashinfer-arch-rejected` (+" in table[2]
    assert text.index("| Host |") < text.index("## ")  # the table first
    sections = [ln for ln in lines if ln.startswith("## ") and ln != "## Actions taken"]
    assert [s.split()[1] for s in sections] == ["z-down", "ct200", "a-healthy"]
    assert "None: nothing was changed on any host." in text


def test_report_lists_the_actions_taken() -> None:
    result, diagnosis = _result()
    events = [
        {"kind": "probe", "host": "ct200"},
        {
            "kind": "fix-outcome",
            "ts": "2026-01-02T03:10:11.000Z",
            "host": "ct200",
            "fix": "use-installed-toolkit",
            "params": {"path": "/usr/local/cuda-13.0"},
            "applied": True,
            "resolved": ["flashinfer-arch-rejected"],
            "pending_restart": ["sglang.service"],
        },
        {
            "kind": "fix-outcome",
            "ts": "2026-01-02T03:11:12.000Z",
            "host": "ct200",
            "fix": "restart",
            "params": {"units": "sglang.service"},
            "applied": True,
            "findings_before": ["flashinfer-arch-rejected"],
            "findings_after": [],
        },
    ]
    text = markdown_report([(result, diagnosis)], actions=events)
    assert (
        "- 03:10:11 **ct200**: fix `use-installed-toolkit` (path=/usr/local/cuda-13.0) — "
        "fixed flashinfer-arch-rejected; restart pending: sglang.service"
    ) in text
    assert (
        "- 03:11:12 **ct200**: restart sglang.service — running service now: none "
        "(before: flashinfer-arch-rejected)"
    ) in text


def test_reference_host_report_is_short(demo_hosts_report: str) -> None:
    lines = demo_hosts_report.splitlines()
    assert len(lines) <= 150, len(lines)
    assert "<summary>Facts: ct200</summary>" in demo_hosts_report


def test_partial_facts_are_diagnosed_and_the_error_kept() -> None:
    facts = make_facts()
    facts = dataclasses.replace(facts, probe=dataclasses.replace(facts.probe, complete=False))
    result = ProbeResult(HOST, facts, "probe stopped by its 120 s deadline", "timeout")
    data = host_json(result, diagnose(facts))
    assert data["reachable"] is True and data["error"].startswith("probe stopped")
    assert data["findings"]
