"""Every rule, table-driven: the exact set of (finding id, severity) per host shape.

Each row lists *all* findings the host must produce, so a rule that cries wolf on a healthy
host, or fires twice, fails here as surely as one that stays silent.
"""

from __future__ import annotations

import pytest
from factsmaker import PY, SERVICE, make_facts, toolkit
from shared_fixtures import shared_fixture

from tui.core.rules.evaluate import evaluate
from tui.core.rules.subject import judging_context
from tui.core.tables import support_matrix

C128 = ("/usr/local/cuda-12.8", "12.8")
C129 = ("/usr/local/cuda-12.9", "12.9")
C130 = ("/usr/local/cuda-13.0", "13.0")
H100_OK = dict(gpus=("9.0",) * 4, driver="570.148.08", torch_cuda="12.8")

ROWS = {
    "reference (SM 12.0, nvcc 12.8, cu130, FlashInfer 0.6.8)": (
        {},
        {"flashinfer-arch-rejected": "critical", "nvcc-torch-major-mismatch": "warning"},
    ),
    "reference with FlashInfer 0.6.7": (
        {"flashinfer": "0.6.7"},
        {"flashinfer-arch-rejected": "critical", "nvcc-torch-major-mismatch": "warning"},
    ),
    "reference with FlashInfer 0.7.1 (fixed upstream)": (
        {"flashinfer": "0.7.1"},
        {"nvcc-torch-major-mismatch": "warning"},
    ),
    "reference with FlashInfer 0.6.6 (12.0a, builds)": (
        {"flashinfer": "0.6.6"},
        {"nvcc-torch-major-mismatch": "warning"},
    ),
    "reference with CUDA 13.0 in CUDA_HOME": (
        {"toolkits": (C130, C128)},
        {},
    ),
    "healthy H100": (H100_OK, {}),
    "healthy H100 without FlashInfer": ({**H100_OK, "flashinfer": None}, {}),
    "driver not loaded, toolkit installed": (
        {"driver_state": "not-loaded", "python": False},
        {"no-nvidia-driver": "critical"},
    ),
    "no driver and no CUDA software": (
        {"driver_state": "no-driver", "python": False, "toolkits": (), "env": {}},
        {"no-nvidia-driver": "info"},
    ),
    "no driver, toolkit only (a build machine)": (
        {"driver_state": "no-driver", "python": False},
        {"no-nvidia-driver": "warning"},
    ),
    "no driver, CUDA torch installed": (
        {"driver_state": "no-driver", "flashinfer": None},
        {"no-nvidia-driver": "critical", "nvcc-torch-major-mismatch": "warning"},
    ),
    "driver/library mismatch with torch": (
        {"driver_state": "version-mismatch"},
        {"no-nvidia-driver": "critical", "nvcc-torch-major-mismatch": "warning"},
    ),
    "B200 on driver 575 with cu130 torch and nvcc 13.0": (
        {"gpus": ("10.0",) * 8, "driver": "575.57.08", "toolkits": (C130,), "flashinfer": "0.7.2"},
        {"driver-too-old-for-torch": "critical", "driver-too-old-for-nvcc": "critical"},
    ),
    "RTX 5090 with torch cu124": (
        {
            "torch_cuda": "12.4",
            "torch_version": "2.6.0+cu124",
            "flashinfer": None,
            "driver": "570.148.08",
        },
        {"torch-lacks-gpu-arch": "critical"},
    ),
    "GB10 (SM 12.1) with nvcc 12.8, FlashInfer 0.7.2": (
        {"gpus": ("12.1",), "flashinfer": "0.7.2"},
        {
            "flashinfer-arch-rejected": "critical",
            "nvcc-too-old-for-gpu": "critical",
            "nvcc-torch-major-mismatch": "warning",
        },
    ),
    "B300 (SM 10.3) with nvcc 12.8: check passes, build fails": (
        {"gpus": ("10.3",), "torch_cuda": "12.8", "flashinfer": "0.7.0"},
        {"nvcc-too-old-for-gpu": "critical"},
    ),
    "V100 with FlashInfer: not a version problem": (
        {"gpus": ("7.0",), "torch_cuda": "12.8", "flashinfer": "0.7.2", "driver": "570.148.08"},
        {"flashinfer-arch-rejected": "info"},
    ),
    "LIST=12.0f with nvcc 12.8": (
        {"torch_cuda": "12.8", "env": {"CUDA_HOME": C128[0], "FLASHINFER_CUDA_ARCH_LIST": "12.0f"}},
        {"nvcc-too-old-for-gpu": "critical"},
    ),
    "LIST=12.0f with nvcc 12.8 and a jit-cache": (
        {
            "torch_cuda": "12.8",
            "jit_cache": "0.6.8+cu129",
            "env": {"CUDA_HOME": C128[0], "FLASHINFER_CUDA_ARCH_LIST": "12.0f"},
        },
        {"nvcc-too-old-for-gpu": "info"},
    ),
    "LIST=12.0 makes import fail in 0.7.0": (
        {
            "torch_cuda": "12.8",
            "flashinfer": "0.7.0",
            "env": {"CUDA_HOME": C128[0], "FLASHINFER_CUDA_ARCH_LIST": "12.0"},
        },
        {"flashinfer-arch-rejected": "critical"},
    ),
    "CUDA_HOME 12.8 shadowed by 13.0 first on PATH": (
        {
            **H100_OK,
            "toolkits": (C128, C130),
            "flashinfer": "0.7.2",
            "which": ("/usr/local/cuda-13.0/bin/nvcc",),
        },
        {"toolkit-shadowed": "warning"},
    ),
    "nvcc 12.9 on a 12.8 driver": (
        {**H100_OK, "toolkits": (C129,)},
        {"driver-too-old-for-nvcc": "warning"},
    ),
    "driver 525 runs cu128 torch's cubins (minor-version compatibility), not its PTX": (
        {**H100_OK, "driver": "525.60.13", "toolkits": (), "env": {}, "flashinfer": None},
        {"driver-too-old-for-torch": "warning"},
    ),
    "FlashInfer sampler disabled in the service": (
        {"service_env": {"CUDA_HOME": C128[0], "VLLM_USE_FLASHINFER_SAMPLER": "0"}},
        {"flashinfer-arch-rejected": "info", "nvcc-torch-major-mismatch": "warning"},
    ),
    "CPU torch with FlashInfer on a GPU host": (
        {"gpus": ("9.0",), "torch_cuda": None, "torch_version": "2.9.1+cpu"},
        {"flashinfer-arch-rejected": "critical", "torch-cpu-build": "critical"},
    ),
    "torch version unreadable: FlashInfer not judged": (
        {"gpus": ("9.0",), "torch_cuda": None, "torch_version": None, "python": True},
        {},
    ),
    "mixed GPUs [9.0, 12.0] in 0.6.8: SM 12.0 gets nothing": (
        {"gpus": ("9.0", "12.0"), "toolkits": (C128,), "torch_cuda": "12.8"},
        {"flashinfer-arch-rejected": "warning"},
    ),
}


@pytest.mark.parametrize(("kwargs", "expected"), list(ROWS.values()), ids=list(ROWS))
def test_rules_fire_exactly(kwargs, expected) -> None:
    findings, _ = evaluate(make_facts(**kwargs))
    got = {f.id: f.severity for f in findings}
    assert got == expected, [(f.id, f.severity, f.title) for f in findings]
    assert len(findings) == len(got), "a finding fired twice"


def test_findings_are_sorted_by_severity() -> None:
    findings, _ = evaluate(make_facts())
    assert [f.severity for f in findings] == ["critical", "warning"]


def test_reference_explanation_tells_the_chain() -> None:
    findings, replays = evaluate(make_facts())
    f = findings[0]
    assert f.id == "flashinfer-arch-rejected" and f.python == PY
    text = f.explanation
    for part in (
        "FlashInfer 0.6.8 resolves its toolkit from CUDA_HOME=/usr/local/cuda-12.8",
        "nvcc 12.8",
        "SM 12.x requires CUDA >= 12.9",
        "TARGET_CUDA_ARCHS is empty",
        "'FlashInfer requires GPUs with sm75 or higher'",
        "≥ 0.7.1",  # the upgrade advice, verified by replaying 0.7.1
    ):
        assert part in text, part
    assert "CUDA_HOME=/usr/local/cuda-12.8" in f.evidence
    assert "nvcc 12.8 at /usr/local/cuda-12.8/bin/nvcc" in f.evidence
    assert "GPU0 NVIDIA RTX PRO 6000 Blackwell Server Edition SM 12.0" in f.evidence
    assert replays[0].check_cuda_arch == "fail"


def test_upgrade_advice_only_when_it_would_help() -> None:
    findings, _ = evaluate(make_facts(gpus=("12.1",), flashinfer="0.6.8"))
    arch = next(f for f in findings if f.id == "flashinfer-arch-rejected")
    assert "0.7.1" not in arch.explanation  # SM 12.1 still needs nvcc ≥ 12.9 in 0.7.1+


def test_service_environment_beats_the_ssh_session() -> None:
    facts = make_facts(
        toolkits=(C130, C128),
        env={"CUDA_HOME": C130[0]},
        service_env={"CUDA_HOME": C128[0]},
    )
    findings, replays = evaluate(facts)
    assert judging_context(facts, facts.pythons[0]).label == SERVICE
    arch = next(f for f in findings if f.id == "flashinfer-arch-rejected")
    assert SERVICE in arch.explanation and arch.python == PY
    assert [r.context for r in replays] == [SERVICE]


def test_login_shell_beats_ssh_session_for_inventory_python() -> None:
    from dataclasses import replace

    from tui.core.facts import EnvContext

    facts = make_facts(toolkits=(C130, C128), env={"CUDA_HOME": C130[0]})
    login = EnvContext(
        kind="login",
        label="login shell",
        vars={"CUDA_HOME": C128[0]},
        which_nvcc=(f"{C128[0]}/bin/nvcc",),
    )
    facts = replace(facts, contexts=(*facts.contexts, login))
    findings, _ = evaluate(facts)
    assert {f.id for f in findings} == {"flashinfer-arch-rejected", "nvcc-torch-major-mismatch"}
    assert "login shell" in findings[0].explanation


def test_torch_arch_list_from_facts_wins_over_the_table() -> None:
    facts = make_facts(
        torch_cuda="12.4",
        torch_version="2.6.0+cu124",
        flashinfer=None,
        driver="570.148.08",
        torch_arch_list=("sm_90", "sm_120"),
    )
    assert evaluate(facts)[0] == ()


def test_pip_toolkit_counts_as_installed() -> None:
    site = "/venv/lib/python3.12/site-packages/nvidia/cu13"
    facts = make_facts(extra_toolkits=(toolkit(site, "13.0", sources=("pip:" + PY,)),))
    findings, _ = evaluate(facts)
    assert {f.id for f in findings} == {"flashinfer-arch-rejected", "nvcc-torch-major-mismatch"}


@pytest.mark.parametrize(
    ("driver", "driver_cuda", "cuda", "ok"),
    [
        ("570.148.08", "12.8", "13.0", False),
        ("580.95.05", "13.0", "13.0", True),
        ("575.57.08", "12.9", "12.8", True),
        ("525.60.13", "12.0", "12.8", True),  # minor-version compatibility
        ("520.61.05", "11.8", "12.1", False),
        ("580.95.05", "13.0", "12.8", True),
        ("580.95.05", None, "13.0", True),  # the driver number alone
        ("570.86.10", None, "13.0", False),
        (None, None, "13.0", None),
    ],
)
def test_driver_runs_cuda(driver, driver_cuda, cuda, ok) -> None:
    assert support_matrix.driver_runs_cuda(driver, driver_cuda, cuda) is ok


@pytest.mark.parametrize(
    ("arch_list", "cc", "ok"),
    [
        (("sm_90",), (9, 0), True),
        (("sm_80", "sm_86"), (8, 9), True),  # same major, older minor
        (("sm_80", "sm_86"), (8, 7), False),  # torch's exception: 8.x code not on Orin
        (("sm_100",), (10, 3), True),
        (("sm_120",), (12, 1), True),
        (("sm_90",), (12, 0), False),
        (("sm_90", "compute_90"), (12, 0), True),  # PTX is JIT-compiled forward
        (("sm_90a",), (9, 0), True),
        (("sm_100",), (10, 1), False),
    ],
)
def test_torch_runs_on(arch_list, cc, ok) -> None:
    assert support_matrix.torch_runs_on(arch_list, cc) is ok


def test_torch_wheel_table_matches_fixture() -> None:
    tsv = shared_fixture("torch/torch-pypi-wheels-CUDA_ARCH_FLAGS-from-libtorch_python.tsv")
    rows = tsv.read_text()
    for line in rows.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        tag, version, flags = line.split("\t")
        machine = "aarch64" if tag.endswith("aarch64") else "x86_64"
        cuda = version.split("+cu")[1]
        listed = support_matrix.torch_arch_list(f"{cuda[:-1]}.{cuda[-1]}", machine)
        assert listed == tuple(flags.split()), line
