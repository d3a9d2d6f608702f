# ruff: noqa: E501  (the expected shell text below is verbatim; its lines are as long as they are)
"""Fix plans are data: exact commands per fix and per host, parameters, refusals.

The facts (ct200_plans) mirror the fake hosts: the reference CT200, and Ubuntu 22.04/24.04,
Debian 12 and arm64 variants of it. The plans' shell, run for real against throwaway trees, is
tested in test_fix_plans_in_sh.py.
"""

from __future__ import annotations

import dataclasses
import re
import shlex

import pytest
from ct200_plans import (
    CT200,
    PY,
    SERVICE_LABEL,
    STAMP,
    VENV,
    ct200_facts,
    plan_for,
)
from plan_golden import GOLDEN, shown

from tui.core.facts import DriverInfo, EnvContext, PythonEnv, Toolkit
from tui.core.fixes import FixError, build_plan
from tui.core.fixes.confine import with_resolver
from tui.core.fixes.restart import restart_plan
from tui.core.fixes.shell import daemon_reload
from tui.core.hosts import Host


@pytest.mark.parametrize("fix_id", list(GOLDEN))
def test_reference_host_dry_run_commands(fix_id: str) -> None:
    plan = plan_for(fix_id)
    assert shown(plan) == GOLDEN[fix_id].strip("\n")


def test_restart_on_a_root_prefixed_host_never_runs_this_machines_systemctl() -> None:
    plan = restart_plan(CT200, ("sglang.service",), sudo=False, stamp=STAMP)
    assert "\n-----\n".join(plan.preview_commands()) == (
        """set -e
echo '@@dt unchanged skipped restarting sglang.service: ct200 is a filesystem under /srv/fake hosts/ct200, not a running system: restart sglang.service on the machine that runs it'"""
    )


def test_without_a_root_prefix_systemd_is_asked_where_it_runs() -> None:
    host = Host(name="ct200", ssh="root@10.1.2.200")
    plan = restart_plan(host, ("sglang.service", "my app.service"), sudo=False, stamp=STAMP)
    assert "\n-----\n".join(plan.preview_commands()) == (
        """set -e
if [ -d /run/systemd/system ]; then
  systemctl restart sglang.service
  echo '@@dt changed restarted sglang.service'
else
  echo '@@dt unchanged skipped restarting sglang.service: systemd is not running here'
fi
-----
set -e
if [ -d /run/systemd/system ]; then
  systemctl restart 'my app.service'
  echo '@@dt changed restarted my app.service'
else
  echo '@@dt unchanged skipped restarting my app.service: systemd is not running here'
fi"""
    )
    assert daemon_reload(host) == (
        """if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
else
  echo '@@dt unchanged skipped systemctl daemon-reload: systemd is not running here'
fi"""
    )


@pytest.mark.parametrize(
    ("os_id", "version", "arch"),
    [("ubuntu", "24.04", "x86_64"), ("debian", "12", "x86_64"), ("ubuntu", "24.04", "aarch64")],
)
@pytest.mark.parametrize("fix_id", [f for f in GOLDEN if f != "install-cuda-toolkit-apt"])
def test_only_the_apt_fix_depends_on_the_distribution(
    fix_id: str, os_id: str, version: str, arch: str
) -> None:
    facts = ct200_facts(os_id=os_id, os_version_id=version, arch=arch)
    plan = plan_for(fix_id, facts)
    assert shown(plan) == GOLDEN[fix_id].strip("\n")


def test_toolkit_plan_says_what_it_verifies_and_that_a_restart_is_needed() -> None:
    plan = plan_for("use-installed-toolkit")
    assert plan.verify_gone == (
        "flashinfer-arch-rejected",
        "nvcc-too-old-for-gpu",
        "jit-nvcc-missing",
        "nvcc-torch-major-mismatch",
    )
    assert plan.units == ("sglang.service",)
    assert plan.contexts == (SERVICE_LABEL,)
    assert plan.activate == f"{VENV}/bin/activate"
    assert any("systemctl restart sglang.service" in n for n in plan.notes)
    assert plan.needs_root and not plan.sudo


def test_a_toolkit_of_another_major_is_not_expected_to_fix_the_major_mismatch() -> None:
    facts = ct200_facts()
    facts = dataclasses.replace(
        facts,
        toolkits=(
            *facts.toolkits,
            Toolkit(
                home="/usr/local/cuda-12.9", nvcc="/usr/local/cuda-12.9/bin/nvcc", version="12.9"
            ),
        ),
    )
    plan = plan_for("use-installed-toolkit", facts, path="/usr/local/cuda-12.9")
    assert plan.verify_gone == (
        "flashinfer-arch-rejected",
        "nvcc-too-old-for-gpu",
        "jit-nvcc-missing",
    )


KEYRING = """set -e
if dpkg -s cuda-keyring >/dev/null 2>&1; then
  echo '@@dt unchanged cuda-keyring already installed'
else
  mkdir -p /var/lib/detective-tui
  : > /var/lib/detective-tui/cuda-keyring.detective-tui-20261129-120000.absent
  t=$(mktemp -d)
  curl -fsSL -o "$t"/cuda-keyring_1.1-1_all.deb https://developer.download.nvidia.com/compute/cuda/repos/REPO/cuda-keyring_1.1-1_all.deb ||
    wget -qO "$t"/cuda-keyring_1.1-1_all.deb https://developer.download.nvidia.com/compute/cuda/repos/REPO/cuda-keyring_1.1-1_all.deb
  dpkg -i "$t"/cuda-keyring_1.1-1_all.deb
  rm -rf "$t"
  echo '@@dt changed installed cuda-keyring'
fi"""


@pytest.mark.parametrize(
    ("os_id", "version", "arch", "repo"),
    [
        ("ubuntu", "22.04", "x86_64", "ubuntu2204/x86_64"),
        ("ubuntu", "24.04", "x86_64", "ubuntu2404/x86_64"),
        ("debian", "12", "x86_64", "debian12/x86_64"),
        ("ubuntu", "24.04", "aarch64", "ubuntu2404/sbsa"),
        ("debian", "12", "aarch64", "debian12/sbsa"),
    ],
)
def test_apt_uses_the_distro_repository(os_id: str, version: str, arch: str, repo: str) -> None:
    facts = ct200_facts(os_id=os_id, os_version_id=version, arch=arch)
    machine = Host(name="ct200", ssh="root@10.1.2.200")  # a running system: its own tools
    commands = plan_for("install-cuda-toolkit-apt", facts, machine).preview_commands()
    assert commands[0] == KEYRING.replace("REPO", repo)
    assert commands[1] == "set -e\napt-get update"
    install = commands[2]
    assert "apt-get install -y --no-install-recommends cuda-toolkit-13-0\n" in install
    assert " cuda-13-0" not in install and " cuda " not in install  # never the driver metapackages


@pytest.mark.parametrize(
    ("os_id", "version", "arch", "expected"),
    [
        ("rhel", "9.4", "x86_64", "use install-cuda-toolkit-pip instead"),
        ("ubuntu", "20.04", "x86_64", "this host is ubuntu 20.04"),
        ("debian", "12", "riscv64", "no repository for architecture riscv64"),
    ],
)
def test_apt_refuses_unsupported_hosts(os_id: str, version: str, arch: str, expected: str) -> None:
    facts = ct200_facts(os_id=os_id, os_version_id=version, arch=arch)
    with pytest.raises(FixError, match=expected):
        plan_for("install-cuda-toolkit-apt", facts)


def test_a_non_root_login_runs_root_steps_through_sudo_n() -> None:
    facts = ct200_facts(user="ubuntu", is_root=False, sudo_nopasswd=True)
    plan = plan_for("use-installed-toolkit", facts)
    assert plan.sudo
    unit_step, activate_step = plan.steps
    assert unit_step.needs_root and not activate_step.needs_root
    wrapped, plain = plan.preview_commands()
    unit_command = "set -e\n" + with_resolver(unit_step.command)
    assert wrapped == "sudo -n sh -c " + shlex.quote(unit_command)
    assert shlex.split(wrapped) == ["sudo", "-n", "sh", "-c", unit_command]
    assert plain == "set -e\n" + with_resolver(activate_step.command)


@pytest.mark.parametrize(
    ("fix_id", "params", "message"),
    [
        ("use-installed-toolkit", {}, "needs path="),
        (
            "use-installed-toolkit",
            {"path": "/opt/cuda-99"},
            "no CUDA toolkit was found at /opt/cuda-99",
        ),
        (
            "use-installed-toolkit",
            {"path": "/usr/local/cuda-13.0", "paht": "x"},
            "does not take paht",
        ),
        ("install-cuda-toolkit-pip", {"version": "12.8.1"}, "only CUDA 13 wheels ship an nvcc"),
        ("sampling-backend-fallback", {"engine": "trt"}, "engine=sglang or engine=vllm"),
        ("no-such-fix", {}, "unknown fix 'no-such-fix'"),
    ],
)
def test_bad_parameters_are_refused_with_a_clear_message(
    fix_id: str, params: dict[str, str], message: str
) -> None:
    with pytest.raises(FixError, match=message):
        build_plan(ct200_facts(), CT200, fix_id, params, stamp=STAMP)


@pytest.mark.parametrize("value", ["", "120", "9.0a;12.0a", "9.0a  12.0a", "12.0+PTX", "sm_120"])
def test_arch_lists_flashinfer_would_reject_at_import_are_refused(value: str) -> None:
    with pytest.raises(FixError, match="not a FlashInfer arch list"):
        plan_for("set-flashinfer-arch-list", value=value)


def test_arch_list_with_several_entries_is_accepted() -> None:
    plan = plan_for("set-flashinfer-arch-list", value="9.0a 12.0a")
    assert 'Environment="FLASHINFER_CUDA_ARCH_LIST=9.0a 12.0a"' in plan.steps[0].command


def test_without_a_service_or_venv_the_login_profile_is_used() -> None:
    facts = dataclasses.replace(
        ct200_facts(),
        contexts=(EnvContext(kind="ssh", label="ssh session"),),
        pythons=(PythonEnv(path="/usr/bin/python3", prefix="/usr", flashinfer_version="0.6.8"),),
    )
    machine = Host(name="ct200", ssh="root@10.1.2.200")
    plan = plan_for("use-installed-toolkit", facts, machine)
    (step,) = plan.steps
    assert step.title == "Set CUDA_HOME, PATH for login shells"
    assert step.command.startswith('p="$HOME"/.bash_profile; [ -f "$p" ] || p="$HOME"/.profile\n')
    assert plan.units == () and plan.activate is None
    # on a root: host $HOME is the inspecting login's home, never one of the image: not edited
    (step,) = plan_for("use-installed-toolkit", facts).steps
    assert '"$HOME"/' not in step.command and step.undo is None
    assert step.command.startswith("echo '@@dt unchanged no login profile edited: ct200 is a")


def test_pip_refuses_the_system_python() -> None:
    facts = dataclasses.replace(
        ct200_facts(),
        pythons=(PythonEnv(path="/usr/bin/python3", prefix="/usr", site_packages=("/usr/lib/x",)),),
    )
    with pytest.raises(FixError, match="not a venv"):
        plan_for("install-cuda-toolkit-pip", facts)


def test_sglang_without_a_unit_gets_advice_not_a_change() -> None:
    facts = dataclasses.replace(
        ct200_facts(),
        contexts=(
            ct200_facts().contexts[0],
            dataclasses.replace(ct200_facts().contexts[1], unit=None),
        ),
    )
    with pytest.raises(FixError, match="restart it with --sampling-backend pytorch"):
        plan_for("sampling-backend-fallback", facts)


def test_a_command_line_with_masked_secrets_is_never_copied_into_execstart() -> None:
    service = ct200_facts().contexts[1]
    masked = dataclasses.replace(service, cmdline=f"{service.cmdline} --api-key ***")
    facts = dataclasses.replace(ct200_facts(), contexts=(ct200_facts().contexts[0], masked))
    with pytest.raises(FixError, match=r"masked as secrets .*systemctl edit sglang.service"):
        plan_for("sampling-backend-fallback", facts)


def test_vllm_gets_the_environment_switch() -> None:
    facts = dataclasses.replace(
        ct200_facts(),
        contexts=(
            ct200_facts().contexts[0],
            dataclasses.replace(
                ct200_facts().contexts[1], cmdline=f"{PY} -m vllm.entrypoints.openai.api_server"
            ),
        ),
    )
    plan = plan_for("sampling-backend-fallback", facts)
    assert 'Environment="VLLM_USE_FLASHINFER_SAMPLER=0"' in plan.steps[0].command
    assert "export VLLM_USE_FLASHINFER_SAMPLER=0" in plan.steps[1].command


def test_pip_wheels_follow_torchs_cuda_minor() -> None:
    facts = ct200_facts()
    py = dataclasses.replace(facts.pythons[0], torch_cuda="13.2")
    facts = dataclasses.replace(facts, pythons=(py,))
    plan = plan_for("install-cuda-toolkit-pip", facts)
    assert plan.params == {"version": "13.2.1"}
    assert "'cuda-toolkit[nvcc,cudart,crt,nvvm,cccl]==13.2.1'" in plan.steps[0].command
    pinned = plan_for("install-cuda-toolkit-pip", facts, version="13.0.2")
    assert "==13.0.2'" in pinned.steps[0].command


@pytest.mark.parametrize("fix_id", ["install-cuda-toolkit-pip", "install-cuda-toolkit-apt"])
def test_no_cuda13_install_for_a_driver_that_cannot_run_it(fix_id: str) -> None:
    driver = DriverInfo(state="ok", driver_version="570.172.08", driver_cuda="12.8")
    facts = dataclasses.replace(ct200_facts(), driver=driver)
    with pytest.raises(FixError, match=re.escape("driver 570.172.08 runs CUDA 12.8 at most")):
        plan_for(fix_id, facts)
    ok = dataclasses.replace(facts, driver=dataclasses.replace(driver, driver_cuda="13.0"))
    assert plan_for(fix_id, ok).steps
