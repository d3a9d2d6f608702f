"""``upgrade-flashinfer``: proposed exactly where the explanation of ``flashinfer-arch-rejected``
says upgrading alone would fix it (the replay of 0.7.1 on the same facts passes), its pip plan,
and what it refuses. The real pip run and its undo: ``tests/test_fix_pip_real.py``."""

from __future__ import annotations

import dataclasses

import pytest
from factsmaker import make_facts

from tui.core.fixes import FixError, build_plan
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose

FIX = "upgrade-flashinfer"
ARCH = "flashinfer-arch-rejected"
HOST = Host(name="ct200", ssh="root@ct200")


def _proposals(facts) -> list[tuple[str, dict[str, str], tuple[str, ...]]]:
    finding = diagnose(facts).finding(ARCH)
    assert finding is not None
    return [(f.id, dict(f.params), f.resolves) for f in finding.fixes if f.id == FIX]


def test_proposed_where_the_explanation_says_the_upgrade_alone_fixes_it() -> None:
    facts = make_facts()  # SM 12.0, nvcc 12.8, FlashInfer 0.6.8
    finding = diagnose(facts).finding(ARCH)
    assert "Upgrading flashinfer-python to ≥ 0.7.1 alone would also fix" in finding.explanation
    assert _proposals(facts) == [(FIX, {"version": "0.7.1"}, (ARCH,))]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"gpus": ("12.1",)},  # 0.7.1 needs nvcc ≥ 12.9 for SM 12.1: no advice, no fix
        {"jit_cache": "0.6.8"},  # flashinfer-jit-cache comes from FlashInfer's own index
    ],
)
def test_not_proposed_where_it_would_not_do(kwargs: dict[str, object]) -> None:
    facts = make_facts(**kwargs)
    finding = diagnose(facts).finding(ARCH)
    assert finding is not None
    if "gpus" in kwargs:
        assert "Upgrading flashinfer-python" not in finding.explanation
    assert _proposals(facts) == []


def test_the_plan_is_a_pip_install_with_its_cubin_and_a_guard() -> None:
    facts = make_facts()
    plan = build_plan(facts, HOST, FIX, {"version": "0.7.1"})
    (step,) = plan.steps
    assert step.title == "Upgrade flashinfer-python 0.6.8 → 0.7.1"
    assert "-m pip install --disable-pip-version-check flashinfer-python==0.7.1\n" in step.command
    assert "flashinfer-python is at 0.7.1 already" in step.command  # a re-run changes nothing
    assert plan.verify_gone == (ARCH,)
    py = dataclasses.replace(facts.pythons[0], flashinfer_cubin_version="0.6.8")
    with_cubin = dataclasses.replace(facts, pythons=(py, *facts.pythons[1:]))
    (step,) = build_plan(with_cubin, HOST, FIX, {"version": "0.7.2"}).steps
    assert "flashinfer-python==0.7.2 flashinfer-cubin==0.7.2\n" in step.command


@pytest.mark.parametrize(
    ("kwargs", "params", "message"),
    [
        ({}, {"version": "0.6.9"}, r"version=0.6.9: pass a flashinfer-python release ≥ 0.7.1"),
        ({}, {"version": "latest"}, r"version=latest: pass a flashinfer-python release"),
        ({"jit_cache": "0.6.8"}, {"version": "0.7.1"}, r"has flashinfer-jit-cache 0.6.8"),
        ({"flashinfer": None}, {"version": "0.7.1"}, r"no FlashInfer was probed on ct200"),
    ],
)
def test_refused_with_what_to_do(
    kwargs: dict[str, object], params: dict[str, str], message: str
) -> None:
    with pytest.raises(FixError, match=message):
        build_plan(make_facts(**kwargs), HOST, FIX, params)
