"""The ``Sampler`` adapter of each FlashInfer sampling-API era (``probes/sampling_eras.py``),
against stand-ins that have each release's exact signatures and tensor checks
(``flashinfer_standins.py``), and the ``partial`` verdict when a kernel could not be checked.

The stand-ins draw on CPU, so these run without a GPU; the ones that need torch use the tests'
CPU torch venv (``torch_venv.torch_python``) and are marked slow.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import flashinfer_standins as standins
import pytest
from torch_venv import torch_python

from probes import sampling_eras as eras

REPO = Path(__file__).resolve().parents[1]
PROBES = REPO / "probes"
TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("release", standins.SIGNATURES)
def test_each_release_is_called_as_its_era(release: str) -> None:
    _, behaviour = standins.SIGNATURES[release]
    module = standins.sampling_module(release)
    for name in standins.KERNELS:
        found = eras.era_of(getattr(module, name))
        assert found is not None, (release, name)
        assert found[0] == standins.EXPECTED_ERA[behaviour], (release, name)


def test_a_signature_of_no_known_era_gets_no_adapter() -> None:
    def sampling_from_probs(probs, uniform_samples):  # type: ignore[no-untyped-def]
        """FlashInfer 0.1.0 - 0.1.3 (python/flashinfer/sampling.py): no ``deterministic``."""

    assert eras.era_of(sampling_from_probs) is None
    assert eras.sampler_for(None, "sampling_from_probs", sampling_from_probs, None) is None
    assert eras.sampler_for(None, "min_p_sampling_from_probs", None, None) is None


def _verdict(records: list[dict[str, str]]) -> list[str]:
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import validate_sampling as v\n"
        "print(json.dumps(v.final_verdict(json.loads(sys.argv[2]))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(PROBES), json.dumps(records)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_a_skipped_kernel_makes_the_run_partial_never_pass() -> None:
    passed = {"name": "sampling_from_probs", "verdict": "pass"}
    skipped = {"name": "min_p_sampling_from_probs", "verdict": "skipped"}
    failed = {"name": "top_k_sampling_from_probs", "verdict": "fail"}
    assert _verdict([passed])[0] == "pass"
    verdict, reason = _verdict([passed, skipped])
    assert verdict == "partial"
    assert reason == "1 of 2 kernel checks passed; not checked: min_p_sampling_from_probs"
    assert _verdict([passed, skipped, failed])[0] == "fail"
    assert _verdict([])[0] == "partial"


# -- the signatures against the released wheels ----------------------------------------------


def _wheel_signatures(sampling_py: Path) -> dict[str, list[tuple[str, str | None]]]:
    """Each public sampling function's (parameter, default) list, read from the wheel's source."""
    out = {}
    for node in ast.parse(sampling_py.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name in standins.KERNELS:
            args = node.args.args
            defaults = [None] * (len(args) - len(node.args.defaults)) + [
                ast.unparse(d) for d in node.args.defaults
            ]
            out[node.name] = [(a.arg, d) for a, d in zip(args, defaults, strict=True)]
    return out


def _standin_signatures(release: str) -> dict[str, list[tuple[str, str | None]]]:
    module = standins.sampling_module(release)
    out = {}
    for name in standins.KERNELS:
        params = inspect.signature(getattr(module, name)).parameters.values()
        out[name] = [
            (p.name, None if p.default is inspect.Parameter.empty else repr(p.default))
            for p in params
        ]
    return out


@pytest.mark.slow
def test_stand_in_signatures_are_the_released_ones() -> None:
    """For every release whose wheel the oracle test caches (0.5.3 onwards; the 0.2.x releases
    are sdists that do not build here, their signatures come from the git tags)."""
    from test_oracle_flashinfer import ensure_flashinfer_dirs

    compared = 0
    for version, folder in ensure_flashinfer_dirs().items():
        if version in standins.SIGNATURES:
            wheel = _wheel_signatures(folder / "flashinfer" / "sampling.py")
            assert wheel == _standin_signatures(version), version
            compared += 1
    assert compared >= 4


# -- the adapters drawing through the stand-ins (torch) ---------------------------------------

HARNESS = r"""
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import torch
import flashinfer_standins as standins
import sampling_stats as stats
import validate_sampling as v

small = [c for c in stats.CASES if c.vocab == stats.SMALL_VOCAB]
out = {"runs": {}, "checks": {}}
for release in standins.SIGNATURES:
    gen = torch.Generator().manual_seed(5)
    records = v.validate_kernels(torch, standins.sampling_module(release), "cpu", gen, 2048, small)
    out["runs"][release] = {
        "verdict": v.final_verdict(records),
        "kernels": [[r["name"], r["verdict"], r.get("api_era"), r.get("message")] for r in records],
    }
gen = torch.Generator().manual_seed(5)
module = standins.sampling_module("0.6.6", without=("min_p_sampling_from_probs",))
out["runs"]["0.6.6 without min_p"] = {
    "verdict": v.final_verdict(v.validate_kernels(torch, module, "cpu", gen, 2048, small)),
}

def error(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except (RuntimeError, ValueError) as exc:
        return str(exc)
    return None

probs = torch.full((3, 8), 0.125)
old = standins.sampling_module("0.2.0")
new = standins.sampling_module("0.2.2.post1")
gen6 = standins.sampling_module("0.6.6")
out["checks"] = {
    "0.2.0 sampling_from_probs (32, batch)": error(
        old.sampling_from_probs, probs, torch.rand(32, 3)),
    "0.2.0 top_p (batch,)": error(old.top_p_sampling_from_probs, probs, torch.rand(3), 0.5),
    "0.2.0 min_p (batch,)": error(old.min_p_sampling_from_probs, probs, torch.rand(3), 0.1),
    "0.2.2.post1 min_p (batch,)": error(new.min_p_sampling_from_probs, probs, torch.rand(3), 0.1),
    "0.2.0 top_k_top_p joint (batch,)": error(
        old.top_k_top_p_sampling_from_probs, probs, torch.rand(3), 2, 0.5,
        filter_apply_order="joint"),
    "0.6.6 top_p (2,) for 3 rows": error(gen6.top_p_sampling_from_probs, probs, torch.rand(2)),
}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def harness() -> dict:
    proc = subprocess.run(
        [torch_python(), "-c", HARNESS, str(PROBES), str(TESTS)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("@@validate")]
    return json.loads(lines[-1])


@pytest.mark.slow
@pytest.mark.parametrize("release", standins.SIGNATURES)
def test_every_kernel_of_every_era_validates_through_its_adapter(
    harness: dict, release: str
) -> None:
    run = harness["runs"][release]
    _, behaviour = standins.SIGNATURES[release]
    assert run["verdict"][0] == "pass", run
    assert len(run["kernels"]) == 6
    for name, verdict, era, message in run["kernels"]:
        assert verdict == "pass", (name, message)
        assert era == standins.EXPECTED_ERA[behaviour]


@pytest.mark.slow
def test_a_release_without_a_kernel_is_partial(harness: dict) -> None:
    verdict, reason = harness["runs"]["0.6.6 without min_p"]["verdict"]
    assert verdict == "partial"
    assert reason.endswith("not checked: min_p_sampling_from_probs")


@pytest.mark.slow
def test_the_stand_ins_enforce_each_release_checks(harness: dict) -> None:
    """What makes the adapters' shapes matter: each wrong shape is refused as the release would."""
    checks = harness["checks"]
    assert checks["0.2.0 sampling_from_probs (32, batch)"] == "uniform_samples must be a 1D tensor"
    assert checks["0.2.0 top_p (batch,)"] == "uniform_samples must be a 2D tensor"
    assert checks["0.2.0 min_p (batch,)"] == "uniform_samples must be a 2D tensor"
    assert checks["0.2.2.post1 min_p (batch,)"] is None
    assert checks["0.2.0 top_k_top_p joint (batch,)"] == "uniform_samples must be a 2D tensor"
    assert "batch size mismatch" in checks["0.6.6 top_p (2,) for 3 rows"]
