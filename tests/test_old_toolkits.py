"""Toolkits back to CUDA 10.2: an 11.x nvcc cannot target Ada or Hopper, and the stated need is
never a wrong minimum (a dropped target asks for an older nvcc; a gap of unrecorded releases
gives a range)."""

from __future__ import annotations

import pytest
from factsmaker import make_facts

from tui.core.rules.evaluate import evaluate
from tui.core.tables import ptxas_targets

ID = "nvcc-too-old-for-gpu"


@pytest.mark.parametrize(
    ("toolkit", "target", "ok"),
    [
        ("10.2", "75", True),
        ("10.2", "80", False),
        ("11.0", "80", True),
        ("11.0", "86", False),
        ("11.0", "30", False),  # Kepler sm_30 was removed in 11.0
        ("11.2", "86", True),  # between 11.1 and 11.7, which agree
        ("11.6", "89", False),
        ("11.7", "87", True),  # real ptxas 11.7.99
        ("12.0", "35", False),  # real ptxas 12.0.140: Kepler gone
        ("12.0", "90a", True),
    ],
)
def test_old_rows(toolkit: str, target: str, ok: bool) -> None:
    assert ptxas_targets.accepts(toolkit, target) is ok


@pytest.mark.parametrize(
    ("target", "toolkit", "need"),
    [
        ("89", "11.4", "needs nvcc ≥ 11.8"),
        ("90", "11.6", "needs nvcc ≥ 11.8"),
        ("87", "11.1", "needs an nvcc newer than 11.1 (the first one known to build it is 11.7)"),
        ("70", "13.0", "was dropped after CUDA 12.9: use nvcc ≤ 12.9"),
        ("35", "12.4", "was dropped after CUDA 11.8: use nvcc ≤ 11.8"),
        ("120", "12.6", "needs nvcc ≥ 12.8"),  # there is no 12.7: 12.8 is the minimum
    ],
)
def test_what_a_toolkit_needs(target: str, toolkit: str, need: str) -> None:
    assert ptxas_targets.toolkit_need(target, toolkit) == need


@pytest.mark.parametrize(
    ("gpus", "nvcc", "fires", "text"),
    [
        (("8.9",), "11.4", True, "SM 8.9 needs nvcc ≥ 11.8"),  # L40S with CUDA 11.4
        (("9.0",), "11.7", True, "SM 9.0 needs nvcc ≥ 11.8"),  # H100 with CUDA 11.7
        (("8.0",), "11.4", False, ""),  # A100 with CUDA 11.4
        (("7.5",), "10.2", False, ""),  # T4 with CUDA 10.2
        (("7.0",), "13.0", True, "SM 7.0 was dropped after CUDA 12.9: use nvcc ≤ 12.9"),
    ],
)
def test_the_rule_on_old_toolkits(gpus: tuple, nvcc: str, fires: bool, text: str) -> None:
    home = f"/usr/local/cuda-{nvcc}"
    f = make_facts(
        gpus=gpus,
        driver="570.148.08",
        toolkits=((home, nvcc),),
        torch_cuda="11.8" if nvcc.startswith(("10", "11")) else "12.8",
        flashinfer=None,
    )
    found = [x for x in evaluate(f)[0] if x.id == ID]
    assert bool(found) is fires
    if fires:
        assert text in found[0].explanation
