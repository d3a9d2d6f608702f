"""The FlashInfer replay: every scenario of flashinfer-logic.md §13 × every era, edges, tables."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_fixtures import SHARED_FIXTURES, shared_fixture

from tui.core.facts import DriverInfo, EnvContext, Facts, Gpu, PythonEnv, Toolkit
from tui.core.rules.flashinfer_replay import Nvcc, ReplayInput, replay, run, visible_devices
from tui.core.tables import ptxas_targets
from tui.core.tables.flashinfer_eras import ERAS, era_for

HOME128 = "/usr/local/cuda-12.8"
HOME130 = "/usr/local/cuda-13.0"

# the columns of the §13 matrix: one representative list of versions each
COLUMNS = {
    "0.3.1": ("0.3.1",),
    "0.4-0.6.6": ("0.4.1", "0.5.3", "0.6.0", "0.6.6"),
    "0.6.7": ("0.6.7",),
    "0.6.8-0.7.0": ("0.6.8", "0.6.17", "0.6.18.post1", "0.7.0", "0.7.0.post1"),
    "0.7.1+": ("0.7.1", "0.7.2.post1", "0.7.4"),
}
X = "✗"  # check_cuda_arch fails
IMPORT = "import fails"


def _inp(version: str, caps, nvcc: str | None = "12.8", torch: str | None = "13.0", **env):
    """A host where CUDA_HOME names a toolkit whose nvcc prints release ``nvcc``."""
    e = {"CUDA_HOME": f"/usr/local/cuda-{nvcc}"} if nvcc else {}
    e.update(env)
    nvccs = {f"/usr/local/cuda-{nvcc}/bin/nvcc": Nvcc("ok", nvcc)} if nvcc else {}
    return ReplayInput(
        version=version, env=e, devices=tuple(caps), torch_cuda=torch, nvccs=nvccs, python="/p"
    )


# scenario -> (input builder, {column: expected archs (+ ✗) or IMPORT})
MATRIX = {
    "A SM12.0 nvcc 12.8": (
        lambda v: _inp(v, [(12, 0)]),
        ["12.0a", "12.0a", X, X, "12.0a"],
    ),
    "B SM12.0 nvcc 12.9": (
        lambda v: _inp(v, [(12, 0)], "12.9"),
        ["12.0a", "12.0a", "12.0f", "12.0f", "12.0f"],
    ),
    "C SM12.0 nvcc 13.0": (
        lambda v: _inp(v, [(12, 0)], "13.0"),
        ["12.0a", "12.0a", "12.0f", "12.0f", "12.0f"],
    ),
    "D SM12.1 nvcc 12.8": (lambda v: _inp(v, [(12, 1)]), ["12.1a", "12.1a", X, X, X]),
    "E SM12.1 nvcc 12.9": (
        lambda v: _inp(v, [(12, 1)], "12.9"),
        ["12.1a", "12.1a", "12.0f", "12.1a", "12.1a"],
    ),
    "F SM12.0 no nvcc torch 13.0": (
        lambda v: _inp(v, [(12, 0)], None, "13.0"),
        ["12.0a", "12.0a", "12.0f", "12.0f", "12.0f"],
    ),
    "F2 SM12.0 no nvcc torch 12.8": (
        lambda v: _inp(v, [(12, 0)], None, "12.8"),
        ["12.0a", "12.0a", X, X, "12.0a"],
    ),
    "F3 SM12.0 no nvcc CPU torch": (
        lambda v: _inp(v, [(12, 0)], None, None),
        ["12.0a", "12.0a", X, X, X],
    ),
    "G LIST=12.0f": (
        lambda v: _inp(v, [(12, 0)], FLASHINFER_CUDA_ARCH_LIST="12.0f"),
        ["12.0f"] * 5,
    ),
    "H LIST=12.0a": (
        lambda v: _inp(v, [(12, 0)], FLASHINFER_CUDA_ARCH_LIST="12.0a"),
        ["12.0a"] * 5,
    ),
    "I LIST=12.0": (
        lambda v: _inp(v, [(12, 0)], FLASHINFER_CUDA_ARCH_LIST="12.0"),
        ["12.0a", "12.0", IMPORT, IMPORT, "12.0a"],
    ),
    "J GPUs [9.0, 12.0]": (
        lambda v: _inp(v, [(9, 0), (12, 0)]),
        ["9.0a 12.0a", "9.0a 12.0a", "9.0a", "9.0a", "9.0a 12.0a"],
    ),
    "K GPUs [12.0, 9.0]": (
        lambda v: _inp(v, [(12, 0), (9, 0)]),
        ["9.0a 12.0a", "9.0a 12.0a", X, X, "9.0a 12.0a"],
    ),
    "L SM10.0 nvcc 12.8": (lambda v: _inp(v, [(10, 0)]), ["10.0a"] * 5),
    "M SM8.9 nvcc 12.6": (lambda v: _inp(v, [(8, 9)], "12.6"), ["8.9"] * 5),
    "N no GPU": (lambda v: _inp(v, []), [X] * 5),
    "O SM7.0": (lambda v: _inp(v, [(7, 0)]), ["7.0 ✗"] * 5),
    "P SM10.3 nvcc 12.8": (lambda v: _inp(v, [(10, 3)]), ["10.3a"] * 5),
    "Q SM12.0 nvcc 12.6": (
        lambda v: _inp(v, [(12, 0)], "12.6"),
        ["12.0a", "12.0a", X, X, X],
    ),
}

ROWS = [
    pytest.param(build, version, expected, id=f"{name}-{version}")
    for name, (build, expectations) in MATRIX.items()
    for (_column, versions), expected in zip(COLUMNS.items(), expectations, strict=True)
    for version in versions
]


@pytest.mark.parametrize(("build", "version", "expected"), ROWS)
def test_matrix_13(build, version, expected) -> None:
    r = run(build(version))
    if expected == IMPORT:
        assert r.import_error == "RuntimeError: SM 12.x requires CUDA >= 12.9"
        assert r.check_cuda_arch == "fail"
        return
    assert r.import_error is None
    archs = expected.replace(X, "").split()
    assert list(r.target_cuda_archs) == archs
    assert r.check_cuda_arch == ("fail" if X in expected else "pass")


def test_reference_failure_text_per_era() -> None:
    old = run(_inp("0.6.8", [(12, 0)]))
    assert old.warnings == ("Failed to get device capability: SM 12.x requires CUDA >= 12.9.",)
    assert old.check_message == "RuntimeError: FlashInfer requires GPUs with sm75 or higher"
    assert old.compiles is False
    assert old.cuda_home == HOME128 and old.jit_cuda == "12.8"
    assert old.jit_cuda_source == "nvcc"
    assert old.workspace == "~/.cache/flashinfer/0.6.8"


def test_new_era_warning_and_check_text_sm121() -> None:
    r = run(_inp("0.7.2.post1", [(12, 1)]))
    assert r.warnings == (
        "Failed to get device capability: RuntimeError('SM 12.1+ requires CUDA >= 12.9'). "
        "torch.cuda.is_available()=True, torch.cuda.device_count()=1",
    )
    assert r.check_message == (
        "RuntimeError: FlashInfer requires GPUs with sm75 or higher. Detected TARGET_CUDA_ARCHS=[]."
    )


def test_new_era_sm120_needs_128() -> None:
    r = run(_inp("0.7.1", [(12, 0)], "12.6"))
    assert "RuntimeError('SM 120 requires CUDA >= 12.8')" in r.warnings[0]


def test_sm70_check_message_lists_detected() -> None:
    r = run(_inp("0.7.4", [(7, 0)]))
    assert r.check_message.endswith("Detected TARGET_CUDA_ARCHS=[(7, '0')].")
    assert run(_inp("0.3.1", [(7, 0)])).check_message == (
        "AttributeError: 'int' object has no attribute 'isdigit'"
    )


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("", "ValueError: not enough values to unpack (expected 2, got 1)"),
        ("120", "ValueError: not enough values to unpack (expected 2, got 1)"),
        ("9.0a  12.0a", "ValueError: not enough values to unpack (expected 2, got 1)"),
        ("9.0a;12.0a", "ValueError: too many values to unpack (expected 2)"),
        ("x.0", "ValueError: invalid literal for int() with base 10: 'x'"),
    ],
)
def test_malformed_arch_list_fails_import(value: str, error: str) -> None:
    r = run(_inp("0.7.0", [(12, 0)], FLASHINFER_CUDA_ARCH_LIST=value))
    assert r.import_error == error
    assert r.check_cuda_arch == "fail" and r.compiles is None


def test_arch_list_kept_verbatim_and_ptx_suffix() -> None:
    r = run(_inp("0.7.0", [(12, 0)], FLASHINFER_CUDA_ARCH_LIST="12.0+PTX 9.0a"))
    assert r.target_cuda_archs == ("9.0a", "12.0+PTX")
    assert r.compiles is False  # compute_120+PTX is no gencode nvcc accepts
    assert run(_inp("0.5.3", [], FLASHINFER_CUDA_ARCH_LIST="12.0")).target_cuda_archs == ("12.0",)


def test_arch_list_ignores_devices() -> None:
    r = run(_inp("0.6.8", [(12, 0), (9, 0)], FLASHINFER_CUDA_ARCH_LIST="8.9"))
    assert r.target_cuda_archs == ("8.9",) and r.warnings == ()


# -- toolkit path resolution ------------------------------------------------------------------


def _path_case(version: str = "0.7.0", which=None, usr_local=False, **env) -> ReplayInput:
    nvccs = {
        "/usr/local/cuda-12.8/bin/nvcc": Nvcc("ok", "12.8"),
        "/usr/local/cuda-13.0/bin/nvcc": Nvcc("ok", "13.0"),
        "/usr/local/bin/nvcc": Nvcc("ok", "13.0"),
        "/usr/local/cuda/bin/nvcc": Nvcc("ok", "13.0"),
    }
    return ReplayInput(
        version=version,
        env=env,
        which_nvcc=which,
        usr_local_cuda_exists=usr_local,
        devices=((12, 0),),
        torch_cuda="13.0",
        nvccs=nvccs,
    )


@pytest.mark.parametrize(
    ("case", "home", "version", "source"),
    [
        (_path_case(CUDA_PATH=HOME128), HOME128, "12.8", "nvcc"),
        (_path_case(CUDA_HOME=HOME128, CUDA_PATH="/usr/local/cuda-13.0"), HOME128, "12.8", "nvcc"),
        (_path_case(CUDA_HOME="", CUDA_PATH=HOME128), HOME128, "12.8", "nvcc"),
        (_path_case(CUDA_HOME="", CUDA_PATH=""), "", "13.0", "torch"),
        (_path_case(which="/usr/local/cuda-12.8/bin/nvcc"), HOME128, "12.8", "nvcc"),
        (_path_case(which="/usr/local/bin/nvcc"), "/usr/local", "13.0", "nvcc"),
        (_path_case(usr_local=True), "/usr/local/cuda", "13.0", "nvcc"),
        (_path_case(), None, "13.0", "torch"),
        (_path_case("0.4.1", usr_local=True), None, "13.0", "torch"),
        (_path_case("0.3.1", which="/usr/local/cuda-12.8/bin/nvcc"), HOME128, "12.8", "nvcc"),
    ],
    ids=[
        "cuda-path-alone",
        "cuda-home-beats-cuda-path",
        "empty-cuda-home-falls-through",
        "empty-cuda-path-relative-nvcc",
        "path-only",
        "usr-local-bin-wrapper",
        "usr-local-cuda-default-0.5+",
        "nothing-found-torch-fallback",
        "no-default-before-0.5",
        "0.3.1-torch-cuda-home-from-which",
    ],
)
def test_toolkit_resolution(case, home, version, source) -> None:
    r = run(case)
    assert (r.cuda_home, r.jit_cuda, r.jit_cuda_source) == (home, version, source)


def test_cuda_path_error_texts_and_nvcc_override() -> None:
    r = run(_path_case("0.7.0", FLASHINFER_NVCC="/opt/nvcc-wrapper", CUDA_HOME=HOME128))
    assert r.nvcc_invoked == "/opt/nvcc-wrapper"
    assert r.compiles is False  # that nvcc does not exist on the host


@pytest.mark.parametrize(
    ("state", "archs", "warning"),
    [
        ("failed", ("12.0f",), None),  # exits non-zero: torch 13.0 fallback
        ("unparsable", ("12.0f",), None),  # garbage output: torch fallback
        ("missing", ("12.0f",), None),
        (
            "not-executable",
            (),
            "Failed to get device capability: [Errno 13] Permission denied: "
            "'/usr/local/cuda-12.8/bin/nvcc'.",
        ),
    ],
)
def test_nvcc_errors_that_fall_back_and_that_escape(state, archs, warning) -> None:
    inp = ReplayInput(
        version="0.7.0",
        env={"CUDA_HOME": HOME128},
        devices=((12, 0),),
        torch_cuda="13.0",
        nvccs={f"{HOME128}/bin/nvcc": Nvcc(state)},
    )
    r = run(inp)
    assert r.target_cuda_archs == archs
    assert r.warnings == ((warning,) if warning else ())


def test_no_nvcc_and_cpu_torch_error_is_the_warning() -> None:
    r = run(_inp("0.6.8", [(12, 0)], None, None))
    assert r.warnings == (
        "Failed to get device capability: nvcc not found and PyTorch is not built with CUDA "
        "support. Could not determine CUDA version..",
    )
    assert r.jit_cuda is None


def test_torch_missing_is_an_import_error() -> None:
    r = run(ReplayInput(version="0.7.2", devices=((9, 0),), torch_installed=False, torch_cuda=None))
    assert r.import_error == "ModuleNotFoundError: No module named 'torch'"


def test_workspace_layouts() -> None:
    base = {"FLASHINFER_WORKSPACE_BASE": "/data"}
    assert run(_inp("0.7.1", [(9, 0), (12, 0)], **base)).workspace == (
        "/data/.cache/flashinfer/0.7.1/90a_120a"
    )
    assert run(_inp("0.4.0", [(12, 0)], HOME="/root")).workspace == "/root/.cache/flashinfer/120a"


def test_compile_verdicts() -> None:
    assert run(_inp("0.7.0", [(12, 0)], FLASHINFER_CUDA_ARCH_LIST="12.0f")).compiles is False
    assert run(_inp("0.7.0", [(12, 0)], FLASHINFER_CUDA_ARCH_LIST="12.0a")).compiles is True
    assert run(_inp("0.6.6", [(12, 0)], "12.4")).compiles is False  # compute_120a on 12.4
    assert run(_inp("0.7.0", [(10, 3)])).compiles is False  # case P
    assert run(_inp("0.7.0", [(12, 0)], "13.0")).compiles is True


@pytest.mark.parametrize(
    ("version", "era"),
    [
        ("0.2.5", "0.2.0"),
        ("0.2.14.post1", "0.2.14"),
        ("0.3.1", "0.3.1"),
        ("0.4.0", "0.4.0"),
        ("0.4.1", "0.4.1"),
        ("0.6.6", "0.5.0"),
        ("0.6.7", "0.6.7"),
        ("0.6.7rc1", "0.6.7"),
        ("0.6.8", "0.6.8"),
        ("0.7.0.post1", "0.6.8"),
        ("0.7.1", "0.7.1"),
        ("0.7.4", "0.7.1"),
        ("0.7.2+cu130", "0.7.1"),
    ],
)
def test_era_boundaries(version: str, era: str) -> None:
    found = era_for(version)
    assert found is not None and found.first == era


def test_unknown_versions() -> None:
    assert era_for("0.1.6") is None and era_for("not-a-version") is None
    # not replayed, but never an invented import error: the real import may well work
    garbage = run(ReplayInput(version="garbage"))
    assert garbage.import_error is None
    assert garbage.warnings == ("unknown FlashInfer version 'garbage'",)


# -- from facts -------------------------------------------------------------------------------


def _facts(env: dict[str, str], gpus=((0, "12.0"),), **kw) -> tuple[Facts, PythonEnv]:
    py = PythonEnv(
        path="/venv/bin/python3",
        torch_version="2.9.1+cu130",
        torch_cuda="13.0",
        flashinfer_version="0.6.8",
        context="ssh session",
    )
    facts = Facts(
        driver=DriverInfo(state="ok", driver_version="580.95.05", driver_cuda="13.0"),
        gpus=tuple(
            Gpu(index=i, name="NVIDIA RTX PRO 6000", compute_cap=cc, uuid=f"GPU-{i}aaaa")
            for i, cc in gpus
        ),
        toolkits=(
            Toolkit(home=HOME128, nvcc=f"{HOME128}/bin/nvcc", version="12.8"),
            Toolkit(home=HOME130, nvcc=f"{HOME130}/bin/nvcc", version="13.0"),
        ),
        contexts=(EnvContext(kind="ssh", label="ssh session", vars=env, **kw),),
        pythons=(py,),
    )
    return facts, py


def test_replay_from_facts_reference_host() -> None:
    facts, py = _facts({"CUDA_HOME": HOME128})
    r = replay(facts, py, facts.contexts[0])
    assert r.python == "/venv/bin/python3" and r.context == "ssh session"
    assert r.target_cuda_archs == () and r.check_cuda_arch == "fail"


def test_replay_from_facts_path_only() -> None:
    facts, py = _facts({}, which_nvcc=("/usr/local/cuda-13.0/bin/nvcc",))
    r = replay(facts, py, facts.contexts[0])
    assert r.cuda_home == "/usr/local/cuda-13.0" and r.target_cuda_archs == ("12.0f",)
    assert r.compiles is True


def test_cuda_visible_devices_order_and_stop() -> None:
    facts, _ = _facts({}, gpus=((0, "9.0"), (1, "12.0"), (2, "8.9")))
    assert visible_devices(facts, {"CUDA_VISIBLE_DEVICES": "1,0"}) == ((12, 0), (9, 0))
    assert visible_devices(facts, {"CUDA_VISIBLE_DEVICES": "2,7,0"}) == ((8, 9),)
    assert visible_devices(facts, {"CUDA_VISIBLE_DEVICES": "GPU-1"}) == ((12, 0),)
    assert visible_devices(facts, {"CUDA_VISIBLE_DEVICES": ""}) == ()
    assert len(visible_devices(facts, {})) == 3


def test_no_driver_means_no_devices() -> None:
    facts, py = _facts({"CUDA_HOME": HOME128})
    facts = dataclasses.replace(facts, driver=DriverInfo(state="no-driver"))
    r = replay(facts, py, facts.contexts[0])
    assert r.warnings == () and r.target_cuda_archs == ()


# -- §11: the workarounds, judged by the replay ---------------------------------------------


@pytest.mark.parametrize(
    ("version", "env", "archs", "compiles"),
    [
        ("0.6.8", {"FLASHINFER_CUDA_ARCH_LIST": "12.0f"}, ("12.0f",), False),
        ("0.6.8", {"FLASHINFER_CUDA_ARCH_LIST": "12.0a"}, ("12.0a",), True),
        ("0.7.1", {"FLASHINFER_CUDA_ARCH_LIST": "12.0"}, ("12.0a",), True),
        ("0.6.6", {"FLASHINFER_CUDA_ARCH_LIST": "12.0"}, ("12.0",), True),
        ("0.6.8", {"CUDA_HOME": "/usr/local/cuda-13.0"}, ("12.0f",), True),
        ("0.6.6", {"CUDA_HOME": "/usr/local/cuda-13.0"}, ("12.0a",), True),
        ("0.7.1", {}, ("12.0a",), True),
    ],
)
def test_workarounds_section_11(version, env, archs, compiles) -> None:
    nvccs = {
        f"{HOME128}/bin/nvcc": Nvcc("ok", "12.8"),
        "/usr/local/cuda-13.0/bin/nvcc": Nvcc("ok", "13.0"),
    }
    r = run(
        ReplayInput(
            version=version,
            env={"CUDA_HOME": HOME128, **env},
            devices=((12, 0),),
            torch_cuda="13.0",
            nvccs=nvccs,
        )
    )
    assert (r.target_cuda_archs, r.compiles) == (archs, compiles)


def test_cuda13_first_in_path_only_has_no_effect() -> None:
    r = run(
        ReplayInput(
            version="0.7.0",
            env={"CUDA_HOME": HOME128},
            which_nvcc="/usr/local/cuda-13.0/bin/nvcc",
            devices=((12, 0),),
            torch_cuda="13.0",
            nvccs={f"{HOME128}/bin/nvcc": Nvcc("ok", "12.8")},
        )
    )
    assert r.target_cuda_archs == () and r.cuda_home == HOME128


# -- the ptxas table is data derived from the real ptxas --help ------------------------------


CAPTURED_PTXAS = Path(__file__).resolve().parents[1] / "tui" / "demo" / "captures" / "ptxas"


def _derive_ptxas_table() -> dict[str, frozenset[str]]:
    shared_fixture("ptxas")
    table = {}
    helps = [
        *(SHARED_FIXTURES / "ptxas").glob("ptxas-*-gpu-name-help.txt"),
        *CAPTURED_PTXAS.glob("ptxas-*-gpu-name-help.txt"),  # 11.7.99, 12.0.140: our captures
    ]
    for f in sorted(helps):
        release = f.name.split("-")[1]
        allowed = f.read_text().split("Allowed values for this option:")[1].split("Default")[0]
        values = re.findall(r"'([a-z]+)_([0-9a-z]+)'", allowed)
        sm = frozenset(t for kind, t in values if kind == "sm")
        assert sm == frozenset(t for kind, t in values if kind == "compute")
        table[".".join(release.split(".")[:2])] = sm
        assert ptxas_targets.PTXAS_RELEASES[".".join(release.split(".")[:2])] == release
    return table


def test_ptxas_table_matches_fixtures() -> None:
    assert dict(ptxas_targets.PTXAS_TARGETS) == _derive_ptxas_table()


@pytest.mark.parametrize(
    ("toolkit", "target", "ok"),
    [
        ("12.8", "120a", True),
        ("12.8", "120f", False),
        ("12.8", "121a", False),
        ("12.9", "120f", True),
        ("12.9", "110a", False),
        ("13.0", "101", False),
        ("13.0", "70", False),
        ("12.5", "90a", True),  # between 12.4 and 12.6, which agree
        ("12.5", "120", False),
        ("12.7", "120a", None),  # between 12.6 and 12.8, which disagree
        ("13.9", "120f", True),  # newer than recorded, same major
        ("14.0", "120f", None),
        ("11.4", "90", False),  # between 11.1 (release notes) and 11.7 (real ptxas): no Hopper
        ("11.4", "87", None),  # sources disagree on where sm_87 starts (11.4 or 11.5)
        ("11.5", "86", True),
        ("12.8.93", "120a", True),
    ],
)
def test_ptxas_accepts(toolkit: str, target: str, ok: bool | None) -> None:
    assert ptxas_targets.accepts(toolkit, target) is ok


def test_torch_unreadable_is_not_torch_missing() -> None:
    facts, py = _facts({"CUDA_HOME": HOME128})
    unread = dataclasses.replace(py, torch_version=None, packages={"torch": "2.9.1"})
    assert replay(facts, unread, facts.contexts[0]).import_error is None
    absent = dataclasses.replace(py, torch_version=None, packages={"flashinfer-python": "0.6.8"})
    assert replay(facts, absent, facts.contexts[0]).import_error == (
        "ModuleNotFoundError: No module named 'torch'"
    )


@settings(max_examples=300, deadline=None)
@given(
    version=st.sampled_from([era.first for era in ERAS]),
    caps=st.lists(st.tuples(st.integers(5, 13), st.integers(0, 9)), max_size=4),
    listed=st.one_of(st.none(), st.text(alphabet="0123456789.af+PTX ;", max_size=12)),
    state=st.sampled_from(["ok", "missing", "not-executable", "failed", "unparsable"]),
    nvcc=st.sampled_from(["11.8", "12.6", "12.8", "12.9", "13.0", "14.1"]),
    torch=st.sampled_from([None, "12.8", "13.0"]),
)
def test_replay_never_crashes(version, caps, listed, state, nvcc, torch) -> None:
    env = {"CUDA_HOME": HOME128}
    if listed is not None:
        env["FLASHINFER_CUDA_ARCH_LIST"] = listed
    r = run(
        ReplayInput(
            version=version,
            env=env,
            devices=tuple(caps),
            torch_cuda=torch,
            nvccs={f"{HOME128}/bin/nvcc": Nvcc(state, nvcc if state == "ok" else None)},
        )
    )
    assert r.check_cuda_arch in ("pass", "fail")
    if r.import_error is None:
        assert (r.check_message is None) == (r.check_cuda_arch == "pass")
        assert len(r.gencodes) == len(r.target_cuda_archs)
    if r.check_cuda_arch == "fail":
        assert r.compiles in (False, None)
