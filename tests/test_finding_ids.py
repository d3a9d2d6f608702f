"""Every finding id the rules can emit is in the contract list and documented."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from probes import probe_env, probe_script
from tui.core.facts.build import facts_from_output
from tui.core.findings.registry import FINDING_IDS
from tui.core.judge.diagnosis import DISAGREES, diagnose
from tui.demo import fakehost

REPO = Path(__file__).resolve().parents[1]


def test_each_finding_id_has_a_section_in_docs_and_a_row_in_the_readme() -> None:
    docs = (REPO / "docs" / "findings.md").read_text()
    readme = (REPO / "README.md").read_text()
    for finding_id in FINDING_IDS:
        assert re.search(rf"^## `{re.escape(finding_id)}`", docs, re.M), finding_id
        assert f"`{finding_id}`" in readme, finding_id


def test_the_deep_finding_id_is_listed() -> None:
    assert DISAGREES in FINDING_IDS


@pytest.mark.parametrize(
    ("preset", "broken"),
    [
        (fakehost.reference_ct200, True),
        (fakehost.healthy_h100, False),
        (fakehost.b200_old_driver, True),
        (fakehost.rtx5090_cu124_torch, True),
        (fakehost.no_driver, True),
    ],
)
def test_rules_emit_only_listed_ids(preset, broken: bool, tmp_path: Path) -> None:
    fake = fakehost.build_fake_host(tmp_path / "host", preset())
    env = {**fake.env, **probe_env(fake.pythons, root=str(fake.root), tree_exec=True)}
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), env=env, capture_output=True, text=True, timeout=60
    ).stdout
    findings = diagnose(facts_from_output(out)).findings
    assert bool(findings) is broken
    assert {f.id for f in findings} <= set(FINDING_IDS)
