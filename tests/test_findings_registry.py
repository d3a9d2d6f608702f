"""The finding registry: one record per id, everything else derived from it.

Ids are unique and each record sits in the module named after its id; docs/findings.md and the
README table are what the records generate (``scripts/findings-docs`` rewrites them); each id
is spelled in at most two product files; a record's facts, fixes, boxes, reason values and
public examples are real names; ``findings`` prints the registry as CONTRACT.md says; and the
replay-coverage note has its own id.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
import typing
from pathlib import Path

import pytest
from factsmaker import make_facts

from tui.cli import main
from tui.core import exitcodes
from tui.core.facts import Facts
from tui.core.findings.markdown import README_END, README_START, findings_markdown, readme_table
from tui.core.findings.record import BOXES, VALUE_KEYS
from tui.core.findings.registry import BY_ID, FINDING_IDS, FINDINGS
from tui.core.fixes.registry import FIX_IDS
from tui.core.judge.diagnosis import diagnose

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "tui" / "core" / "findings"
NOT_RECORDS = ("__init__", "record", "registry", "markdown")
STALE = "stale: run scripts/findings-docs (it rewrites docs/findings.md and the README table)"


def test_ids_are_unique_and_every_record_module_is_registered() -> None:
    assert len(FINDING_IDS) == len(set(FINDING_IDS)) == len(FINDINGS) >= 19
    modules = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in NOT_RECORDS)
    for name in modules:
        record = importlib.import_module(f"tui.core.findings.{name}").FINDING
        assert record.id.replace("-", "_") == name
        assert BY_ID[record.id] is record, f"{name} is not in tui/core/findings/registry.py"
    assert sorted(r.id.replace("-", "_") for r in FINDINGS) == modules


def test_docs_and_readme_table_are_generated_from_the_records() -> None:
    docs = (REPO / "docs" / "findings.md").read_text(encoding="utf-8")
    assert docs == findings_markdown(), f"docs/findings.md is {STALE}"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = readme.index(README_START), readme.index(README_END) + len(README_END)
    assert readme[start:end] == readme_table(), f"the README table of finding ids is {STALE}"
    for record in FINDINGS:
        assert f"## `{record.id}`" in docs and f"| `{record.id}` |" in readme


def test_each_finding_id_is_spelled_in_at_most_two_product_files() -> None:
    product = [
        p
        for top in ("tui", "probes")
        for p in (REPO / top).rglob("*")
        if p.suffix in (".py", ".sh")
    ]
    texts = {p: p.read_text(encoding="utf-8") for p in product}
    for finding_id in FINDING_IDS:
        spelled = re.compile(rf"[\"']{re.escape(finding_id)}[\"']")
        files = sorted(str(p.relative_to(REPO)) for p, t in texts.items() if spelled.search(t))
        assert 1 <= len(files) <= 2, f"{finding_id} is spelled in {files}"


def test_the_vllm_sampler_variable_is_spelled_once() -> None:
    """The rule that reads it, the fix that sets it and their texts share one spelling."""
    name = "VLLM_USE_FLASHINFER_SAMPLER"
    files = {
        str(p.relative_to(REPO)): p.read_text(encoding="utf-8").count(name)
        for top in ("tui", "probes")
        for p in (REPO / top).rglob("*")
        if p.suffix in (".py", ".sh")
    }
    assert {f: n for f, n in files.items() if n} == {
        "tui/core/findings/flashinfer_arch_rejected.py": 1
    }


def _field_type(cls: type, name: str) -> object:
    hints = typing.get_type_hints(cls)
    assert name in hints, f"{cls.__name__} has no field {name!r}"
    return hints[name]


def _resolve(path: str) -> None:
    """``pythons.extensions.built_torch`` names a field of ``Facts``, through tuples."""
    cls: object = Facts
    for part in path.split("."):
        assert dataclasses.is_dataclass(cls), f"{path}: {part!r} is below a plain value"
        kind = _field_type(cls, part)  # type: ignore[arg-type]
        args = [a for a in typing.get_args(kind) if a is not type(None) and a is not Ellipsis]
        cls = next((a for a in args if dataclasses.is_dataclass(a)), kind)


@pytest.mark.parametrize("record", FINDINGS, ids=lambda r: r.id)
def test_a_record_names_only_real_things(record) -> None:
    for path in record.reads:
        _resolve(path)
    assert record.severities and set(record.severities) <= {"critical", "warning", "info"}
    assert set(record.fixes + record.follow_ups) <= set(FIX_IDS)
    assert set(record.implicates) <= set(BOXES)
    assert set(re.findall(r"{(\w+)}", record.cause)) <= set(VALUE_KEYS)
    assert record.title and record.doc.strip() and record.fires_when
    # a --deep finding is made from the deep run's output, not by a rule over the facts
    assert record.rules or record.late_rules or record.heading_note == "(only with `--deep`)"
    flat = " ".join(record.doc.split())
    for example in record.examples:  # a public thread the documentation cites
        repo, number = example.split("#")
        assert repo in flat and f"#{number}" in flat, example


def test_findings_json_is_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "--json"]) == exitcodes.OK
    listed = json.loads(capsys.readouterr().out)
    assert [f["id"] for f in listed] == list(FINDING_IDS)
    for entry in listed:
        assert set(entry) == {"id", "title", "severities", "reads", "fixes", "examples"}
    arch = next(f for f in listed if f["id"] == "flashinfer-arch-rejected")
    assert arch["fixes"][0] == "use-installed-toolkit"
    assert "clear-flashinfer-jit-cache" not in arch["fixes"]  # a follow-up resolves nothing
    assert main(["findings", "torch-cpu-build", "--json"]) == exitcodes.OK
    (one,) = json.loads(capsys.readouterr().out)
    assert one["id"] == "torch-cpu-build" and one["fixes"] == ["install-cuda-torch"]


def test_findings_markdown_is_the_docs_and_an_id_is_its_section(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["findings", "--markdown"]) == exitcodes.OK
    assert capsys.readouterr().out == (REPO / "docs" / "findings.md").read_text(encoding="utf-8")
    assert main(["findings", "mig-device-not-selected", "--markdown"]) == exitcodes.OK
    out = capsys.readouterr().out
    assert out.startswith("## `mig-device-not-selected`\n") and "## `" not in out[3:]
    assert main(["findings"]) == exitcodes.OK
    rows = capsys.readouterr().out.splitlines()
    assert [r.split()[0] for r in rows] == list(FINDING_IDS)


def test_an_unknown_id_is_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "no-such-finding"]) == exitcodes.USAGE
    err = capsys.readouterr().err
    assert "unknown finding 'no-such-finding'" in err and "torch-cpu-build" in err


def test_the_replay_coverage_note_has_its_own_id() -> None:
    """GB10 (SM 12.1), FlashInfer 0.7.4, CUDA_HOME at 12.8: the critical arch finding and the
    coverage note no longer share an id, so keying findings by id loses neither."""
    f = make_facts(gpus=("12.1",), flashinfer="0.7.4")
    found = [(x.id, x.severity) for x in diagnose(f).findings if "flashinfer" in x.id]
    assert ("flashinfer-arch-rejected", "critical") in found
    assert ("flashinfer-replay-unverified", "info") in found
    ids = [i for i, _severity in found]
    assert len(ids) == len(set(ids))
    (note,) = [x for x in diagnose(f).findings if x.id == "flashinfer-replay-unverified"]
    assert "0.7.4 is replayed with the rules of the newest era (0.7.1 and later)" in (
        note.explanation
    )
