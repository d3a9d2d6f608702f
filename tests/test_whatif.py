"""What-if: fixes are simulated on the facts and the rules re-run; nothing is hand-written."""

from __future__ import annotations

import pytest
from factsmaker import PY, SERVICE, make_facts, toolkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.core.fixes import build_plan
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.judge.whatif import apply_fix
from tui.core.rules.evaluate import evaluate
from tui.core.rules.flashinfer_replay import replay

C128 = ("/usr/local/cuda-12.8", "12.8")
C129 = ("/usr/local/cuda-12.9", "12.9")
C130 = ("/usr/local/cuda-13.0", "13.0")
REF_WITH_13 = dict(toolkits=(C128, C130), service_env={"CUDA_HOME": C128[0]})


def _fix_ids(finding) -> list[str]:
    return [f.id for f in finding.fixes]


def test_apply_use_installed_toolkit_reaches_the_service() -> None:
    facts = make_facts(**REF_WITH_13)
    fixed = apply_fix(facts, "use-installed-toolkit", {"path": C130[0]}, PY)
    for ctx in fixed.contexts:
        assert ctx.vars["CUDA_HOME"] == C130[0]
        assert ctx.which_nvcc[0] == f"{C130[0]}/bin/nvcc"
        assert ctx.vars["PATH"].startswith(f"{C130[0]}/bin")
    service = fixed.context(SERVICE)
    assert replay(fixed, fixed.pythons[1], service).target_cuda_archs == ("12.0f",)
    assert facts.context(SERVICE).vars["CUDA_HOME"] == C128[0]  # the input is untouched


def test_reference_first_fix_is_the_installed_cuda13_and_resolves_both() -> None:
    d = diagnose(make_facts(**REF_WITH_13))
    arch = d.finding("flashinfer-arch-rejected")
    assert arch is not None and arch.severity == "critical"
    first = arch.fixes[0]
    assert first.id == "use-installed-toolkit"
    assert dict(first.params) == {"path": C130[0]}
    assert set(first.resolves) == {"flashinfer-arch-rejected", "nvcc-torch-major-mismatch"}
    mismatch = d.finding("nvcc-torch-major-mismatch")
    assert mismatch.fixes[0].id == "use-installed-toolkit"


def test_arch_list_proposal_is_what_nvcc_128_builds() -> None:
    d = diagnose(make_facts())
    arch = d.finding("flashinfer-arch-rejected")
    pin = next(f for f in arch.fixes if f.id == "set-flashinfer-arch-list")
    assert dict(pin.params) == {"value": "12.0a"}
    assert pin.resolves == ("flashinfer-arch-rejected",)
    assert "use-installed-toolkit" not in _fix_ids(arch)  # nothing better is installed


def test_arch_list_for_mixed_gpus() -> None:
    d = diagnose(make_facts(gpus=("9.0", "12.0"), torch_cuda="12.8"))
    pin = next(f for f in d.finding("flashinfer-arch-rejected").fixes)
    assert dict(pin.params) == {"value": "9.0a 12.0a"}


def test_no_arch_list_when_nvcc_cannot_build_the_gpu() -> None:
    d = diagnose(make_facts(gpus=("12.1",), flashinfer="0.7.2"))
    arch = d.finding("flashinfer-arch-rejected")
    assert "set-flashinfer-arch-list" not in _fix_ids(arch)  # 12.1a needs nvcc ≥ 12.9


def test_best_toolkit_keeps_torch_major() -> None:
    facts = make_facts(torch_cuda="12.8", toolkits=(C128, C129, C130))
    arch = diagnose(facts).finding("flashinfer-arch-rejected")
    first = arch.fixes[0]
    assert (first.id, dict(first.params)) == ("use-installed-toolkit", {"path": C129[0]})


def test_toolkit_too_new_for_the_driver_is_not_proposed() -> None:
    facts = make_facts(torch_cuda="12.8", driver="575.57.08", toolkits=(C128, C130))
    arch = diagnose(facts).finding("flashinfer-arch-rejected")
    assert "use-installed-toolkit" not in _fix_ids(arch)
    after = evaluate(apply_fix(facts, "use-installed-toolkit", {"path": C130[0]}, PY))[0]
    assert "driver-too-old-for-nvcc" in {f.id for f in after}


def test_symlink_alias_is_not_proposed_instead_of_the_directory() -> None:
    facts = make_facts(toolkits=(C128, C130), usr_local_cuda=C130[0])
    first = diagnose(facts).finding("flashinfer-arch-rejected").fixes[0]
    assert dict(first.params) == {"path": C130[0]}


def test_sampling_fallback_downgrades_the_finding() -> None:
    facts = make_facts(packages={"sglang": "0.5.6"}, service_env={"CUDA_HOME": C128[0]})
    fixed = apply_fix(facts, "sampling-backend-fallback", {"engine": "sglang"}, PY)
    assert fixed.context(SERVICE).cmdline.endswith("--sampling-backend pytorch")
    after = {f.id: f.severity for f in evaluate(fixed)[0]}
    assert after["flashinfer-arch-rejected"] == "info"
    arch = diagnose(facts).finding("flashinfer-arch-rejected")
    fallback = next(f for f in arch.fixes if f.id == "sampling-backend-fallback")
    assert fallback.resolves == ("flashinfer-arch-rejected",)


def test_pip_install_simulation_adds_the_wheel_toolkit() -> None:
    facts = make_facts()
    fixed = apply_fix(facts, "install-cuda-toolkit-pip", {"version": "13.0.2"}, PY)
    home = "/venv/lib/python3.12/site-packages/nvidia/cu13"
    tk = fixed.toolkit_at(home)
    assert tk is not None and tk.version == "13.0"
    assert evaluate(fixed)[0] == ()


def test_pip_install_not_proposed_for_cu12_torch() -> None:
    arch = diagnose(make_facts(torch_cuda="12.8")).finding("flashinfer-arch-rejected")
    assert "install-cuda-toolkit-pip" not in _fix_ids(arch)


def test_fix_order_least_invasive_first() -> None:
    arch = diagnose(make_facts(packages={"sglang": "0.5.6"}, jit_cache_dirs=("/root/x",)))
    ids = _fix_ids(arch.finding("flashinfer-arch-rejected"))
    assert ids == [
        "set-flashinfer-arch-list",
        "sampling-backend-fallback",
        "install-cuda-toolkit-pip",
        "install-cuda-toolkit-apt",
        "upgrade-flashinfer",  # a new release of what the server runs: after the toolkits
        "clear-flashinfer-jit-cache",
    ]


def test_clear_cache_is_a_follow_up_that_resolves_nothing_alone() -> None:
    facts = make_facts(jit_cache_dirs=("/root/.cache/flashinfer/0.6.8",))
    fixed = apply_fix(facts, "clear-flashinfer-jit-cache", {}, PY)
    assert fixed.pythons[0].jit_cache_dirs == ()
    clear = diagnose(facts).finding("flashinfer-arch-rejected").fixes[-1]
    assert clear.id == "clear-flashinfer-jit-cache" and clear.resolves == ()


def test_healthy_host_gets_no_fixes() -> None:
    d = diagnose(make_facts(gpus=("9.0",), driver="570.148.08", torch_cuda="12.8"))
    assert d.findings == () and d.worst() is None


def test_info_findings_get_no_fixes() -> None:
    d = diagnose(make_facts(gpus=("7.0",), torch_cuda="12.8", flashinfer="0.7.2"))
    assert d.worst() == "info" and d.findings[0].fixes == ()


def test_unknown_fix_id() -> None:
    with pytest.raises(ValueError, match="unknown fix"):
        apply_fix(make_facts(), "reboot-the-universe", {})


def test_commands_come_from_the_fix_engine() -> None:
    facts = make_facts(**REF_WITH_13)
    host = Host(name="ct200", ssh="root@10.1.2.200")
    first = diagnose(facts, host).finding("flashinfer-arch-rejected").fixes[0]
    plan = build_plan(facts, host, first.id, first.params, PY, stamp="diagnosis")
    assert first.commands == plan.preview_commands() and first.commands
    assert first.needs_root == plan.needs_root
    assert diagnose(facts).finding("flashinfer-arch-rejected").fixes[0].commands == ()


def test_pip_toolkit_already_in_the_venv_is_an_installed_toolkit() -> None:
    site = "/venv/lib/python3.12/site-packages/nvidia/cu13"
    facts = make_facts(extra_toolkits=(toolkit(site, "13.0"),))
    first = diagnose(facts).finding("flashinfer-arch-rejected").fixes[0]
    assert (first.id, dict(first.params)) == ("use-installed-toolkit", {"path": site})


# -- properties over many host shapes --------------------------------------------------------


TOOLKITS = {
    "12.4": ("/usr/local/cuda-12.4", "12.4"),
    "12.8": C128,
    "12.9": C129,
    "13.0": C130,
}


@st.composite
def hosts(draw: st.DrawFn) -> dict:
    installed = draw(
        st.lists(st.sampled_from(sorted(TOOLKITS)), min_size=0, max_size=3, unique=True)
    )
    toolkits = tuple(TOOLKITS[v] for v in installed)
    home = draw(st.sampled_from([*(t[0] for t in toolkits), None]))
    listed = draw(st.sampled_from([None, "12.0a", "12.0f", "12.0", "9.0a 12.0a", "8.9"]))
    env = {"CUDA_HOME": home} if home else {}
    if listed is not None:
        env["FLASHINFER_CUDA_ARCH_LIST"] = listed
    return {
        "gpus": tuple(
            draw(
                st.lists(
                    st.sampled_from(["7.0", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"]),
                    min_size=0,
                    max_size=3,
                )
            )
        ),
        "driver": draw(st.sampled_from(["525.60.13", "570.148.08", "575.57.08", "580.95.05"])),
        "toolkits": toolkits,
        "env": env,
        "torch_cuda": draw(st.sampled_from(["12.4", "12.8", "13.0", None])),
        "flashinfer": draw(
            st.sampled_from([None, "0.3.1", "0.4.1", "0.6.6", "0.6.7", "0.6.8", "0.7.0", "0.7.2"])
        ),
        "packages": draw(st.sampled_from([{}, {"sglang": "0.5.6"}, {"vllm": "0.11.0"}])),
        "service_env": draw(st.sampled_from([None, env])),
        "jit_cache_dirs": draw(st.sampled_from([(), ("/root/.cache/flashinfer/x",)])),
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hosts())
def test_every_proposed_fix_really_resolves_its_finding(kwargs: dict) -> None:
    facts = make_facts(**kwargs)
    d = diagnose(facts)
    order = {"critical": 0, "warning": 1, "info": 2}
    assert [order[f.severity] for f in d.findings] == sorted(order[f.severity] for f in d.findings)
    for finding in d.findings:
        if finding.severity == "info":
            assert finding.fixes == ()
        for fix in finding.fixes:
            if fix.id == "clear-flashinfer-jit-cache":
                assert fix.resolves == ()
                continue
            assert finding.id in fix.resolves
            after = evaluate(apply_fix(facts, fix.id, fix.params, finding.python))[0]
            assert not any(
                f.id == finding.id and f.python == finding.python and f.severity != "info"
                for f in after
            )
