"""The fix registry: one record per fix id (parameters, order, simulation, choices, plan, title)
that the what-if and ``build_plan`` iterate — no per-fix list or ``if``-chain is left."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from factsmaker import make_facts

from tui.core import fixes
from tui.core.findings.registry import FINDINGS
from tui.core.fixes import FixError, build_plan
from tui.core.fixes.registry import BY_ID, FIX_IDS, FIXES
from tui.core.hosts import Host
from tui.core.judge import whatif

REPO = Path(__file__).resolve().parents[1]
PY = "/venv/bin/python3"  # the interpreter make_facts builds


def test_ids_and_orders_are_unique_and_the_readme_lists_every_fix() -> None:
    assert len(FIX_IDS) == len(FIXES) == len({f.order for f in FIXES}) == 14
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("## Fixes") :]
    assert set(re.findall(r"^\| `([a-z-]+)` \|", table, re.M)) >= set(FIX_IDS)
    assert min(FIXES, key=lambda f: f.order).id == "use-installed-toolkit"
    assert max(FIXES, key=lambda f: f.order).id == "clear-flashinfer-jit-cache"


def test_the_old_tables_and_if_chains_are_gone() -> None:
    for module, names in (
        (fixes, ("BUILDERS", "PARAMS")),
        (whatif, ("FIX_ORDER", "NEEDS_ROOT", "CACHE_FOLLOW_UP", "_title")),
    ):
        assert not [n for n in names if hasattr(module, n)], module.__name__
    for path in (
        "tui/core/judge/whatif.py",
        "tui/core/fixes/__init__.py",
        "tui/core/judge/diagnosis.py",
    ):
        tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
        spelled = {
            n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in BY_ID
        }
        assert not spelled, f"{path} names fixes {sorted(spelled)}: read them from the records"


def test_findings_name_only_registered_fixes() -> None:
    for record in FINDINGS:
        assert set(record.fixes + record.follow_ups) <= set(BY_ID), record.id


@pytest.mark.parametrize("fix", FIXES, ids=lambda f: f.id)
def test_a_record_tries_only_its_own_parameters_and_simulates_them(fix) -> None:
    facts = make_facts(
        toolkits=(("/usr/local/cuda-12.8", "12.8"), ("/usr/local/cuda-13.0", "13.0")),
        jit_cache_dirs=("/root/.cache/flashinfer/0.6.8/120",),
        packages={"sglang": "0.5.5"},
    )
    # (the parameters tried on the reference host, does the simulation change its facts)
    expected = {
        "use-installed-toolkit": ([{"path": "/usr/local/cuda-13.0"}], True),
        "set-flashinfer-arch-list": ([{"value": "12.0a"}], True),
        "sampling-backend-fallback": ([{"engine": "sglang"}], True),
        "install-cuda-toolkit-pip": ([{"version": "13.0.2"}], True),
        "install-cuda-toolkit-apt": ([{}], True),
        "clear-flashinfer-jit-cache": ([{}], True),
        "drop-cuda-compat-path": ([{}], False),  # nothing loads compat libraries here
        "install-cuda-torch": ([{"cuda": "13.0"}], False),  # torch is that build already
        "upgrade-flashinfer": ([{"version": "0.7.1"}], True),  # 0.7.1 builds 12.0a on nvcc 12.8
    }
    tried = fix.choices(facts, PY)
    for params in tried:
        assert set(params) <= set(fix.param_names)
        assert fix.title(facts, params, PY)
        changed = whatif.apply_fix(facts, fix.id, params, PY) != facts
        if fix.id in expected:
            assert changed is expected[fix.id][1]
    if fix.id in expected:
        assert tried == expected[fix.id][0]
    else:
        assert tried == []  # no Triton, no shadowing library, no pip toolkit, no extension here


def test_build_plan_names_the_parameters_a_record_takes() -> None:
    host = Host(name="ct200", ssh="root@ct200")
    with pytest.raises(FixError, match=r"does not take colour \(parameters: path\)"):
        build_plan(make_facts(), host, "use-installed-toolkit", {"colour": "red"})
    with pytest.raises(FixError, match="unknown fix 'reboot'; known fixes: use-installed-toolkit"):
        build_plan(make_facts(), host, "reboot", {})
