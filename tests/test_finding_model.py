"""One model renders a finding for the CLI, the report and the TUI
(``tui.core.records.finding_model``): made from a ``Finding`` or from its contract JSON it is the
same, and the three texts carry the same title, evidence and fixes in the same order, redacted, on
the real ct200 diagnosis."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from tui.commands.diagnose import print_host
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.records.finding_model import FindingModel
from tui.core.records.issue_report import finding_markdown
from tui.core.records.report import host_json
from tui.core.run.runner import ProbeResult, Session
from tui.demo.fakehost import build_fake_host, reference_ct200
from tui.ui.widgets.finding_view import finding_content

SECRET = "hf_abcdefghijklmnopqrstuvwx"


async def _ct200(tmp_path: Path) -> ProbeResult:
    tree = build_fake_host(tmp_path / "tree", reference_ct200())
    host = Host(
        name="ct200",
        local=True,
        root=str(tree.root),
        simulate="tree",
        env=tree.env,
        python=tree.pythons,
    )
    async with Session() as s:
        return await s.probe(host)


def _in_order(text: str, parts: list[str]) -> bool:
    at = 0
    for part in parts:
        at = text.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return True


async def test_the_cli_the_report_and_the_tui_say_the_same(tmp_path: Path) -> None:
    result = await _ct200(tmp_path)
    assert result.facts is not None
    diagnosis = diagnose(result.facts, result.host)
    assert diagnosis.findings, "ct200 is the broken reference host"
    first = diagnosis.findings[0]
    leaked = replace(first, evidence=(*first.evidence, f"HF_TOKEN in the unit: {SECRET}"))
    diagnosis = replace(diagnosis, findings=(leaked, *diagnosis.findings[1:]))
    data = host_json(result, diagnosis)

    cli = io.StringIO()
    print_host(Console(file=cli, width=1000, no_color=True), data)
    cli_text = cli.getvalue()
    for finding, as_json in zip(diagnosis.findings, data["findings"], strict=True):
        model = FindingModel.of(finding)
        assert model == FindingModel.of(as_json)  # the TUI's Finding, the CLI's JSON
        report = "\n".join(finding_markdown(as_json))
        tui = finding_content(finding).plain
        said = [model.title, *model.evidence, *(f.id for f in model.fixes)]
        for name, text in (("cli", cli_text), ("report", report), ("tui", tui)):
            assert _in_order(text, said), f"{name} does not say {finding.id} as the model does"
            for fix in model.fixes:
                assert fix.resolves_text in text
            assert SECRET not in text, f"{name} shows the token"
    assert any("***" in e for e in FindingModel.of(leaked).evidence)
