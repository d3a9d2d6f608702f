"""The real probe against fake hosts that are awkward to probe: a hung nvidia-smi, hostile names
and odd venvs, a python that is not executable, no timeout command, an unprivileged user,
variable values with any characters, and what the probe's environment cannot carry.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from awkward_host import HOSTILE, ODD_VENV, awkward_spec
from fakehost_runs import run_probe
from hypothesis import example, given, settings
from hypothesis import strategies as st

from probes import probe_env, probe_script
from tui.core.facts.build import facts_from_output
from tui.demo import fakehost
from tui.demo.fakehost import (
    FakeHost,
)


def test_hung_nvidia_smi_hits_the_step_deadline(build) -> None:
    spec = fakehost.reference_ct200()
    spec = replace(spec, driver=replace(spec.driver, hang=True))
    facts, _ = run_probe(build(spec), step_timeout_s=1)
    assert facts.driver.state == "timeout" and facts.gpus == ()
    assert "nvidia-smi" in facts.probe.timed_out
    assert facts.driver.proc_version == "580.95.05"
    assert facts.toolkit_at("/usr/local/cuda-12.8").version == "12.8"
    assert facts.pythons[0].torch_version == "2.9.1+cu130"
    assert facts.probe.complete


def test_awkward_host(build) -> None:
    fake = build(awkward_spec())
    site = (
        fake.root
        / ODD_VENV.lstrip("/")
        / "lib"
        / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    )
    site = site / "site-packages"
    (site / "sglang.egg-info").mkdir()  # an editable install
    (site / "sglang.egg-info" / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.7.dev0\n"
    )
    (site / "ninja-1.11.1-py3.11.egg-info").write_text("Name: ninja\nVersion: 1.11.1\n")  # a file
    facts, raw = run_probe(fake)
    assert facts.probe.complete and not facts.probe.errors

    assert (facts.driver.driver_version, facts.driver.driver_cuda) == ("610.43.02", "13.3")

    ssh = facts.contexts[0]
    assert ssh.vars["CUDA_HOME"] == "" and ssh.vars["FLASHINFER_CUDA_ARCH_LIST"] == "12.0f"
    assert ssh.which_nvcc == ("/usr/local/bin/nvcc", "/usr/bin/nvcc")
    assert facts.toolkit_at("") is None

    local_bin = facts.toolkit_at("/usr/local")
    assert local_bin.wrapper_of == "/usr/local/cuda-13.0/bin/nvcc" and local_bin.version == "13.0"
    debian = facts.toolkit_at("/usr")
    assert debian.wrapper_of == "/usr/lib/nvidia-cuda-toolkit/bin/nvcc"
    assert (debian.version, debian.full_version) == ("12.4", "12.4.131")

    assert facts.toolkit_at("/opt/cuda").sources == ("/opt/cuda*",)
    conda = facts.toolkit_at("/root/miniconda3/envs/cu")
    assert (conda.version, conda.sources) == ("13.0", ("conda:/root/miniconda3/envs/cu",))

    blocked = facts.toolkit_at("/usr/local/cuda-12.8")
    assert blocked.exists and not blocked.executable
    assert (blocked.version, blocked.full_version, blocked.version_source) == (
        "12.8",
        "12.8.93",
        "version.json",
    )
    assert "not executable" in blocked.error

    _, odd, missing, served = facts.pythons
    assert odd.path == f"{ODD_VENV}/bin/python3" and odd.prefix == ODD_VENV
    assert (odd.torch_version, odd.flashinfer_version) == ("2.11.0+cu130", "0.7.2")
    assert odd.packages["nvidia-cuda-nvcc"] == "13.0.88"
    assert (odd.packages["sglang"], odd.packages["ninja"]) == ("0.5.7.dev0", "1.11.1")
    assert odd.jit_cache_dirs == ("/root/.cache/flashinfer/0.7.2/120f",)
    pip_home = f"{odd.site_packages[0]}/nvidia/cu13"
    pip_tk = facts.toolkit_at(pip_home)
    assert (pip_tk.version, pip_tk.sources) == ("13.0", (f"pip:{odd.path}",))
    assert (missing.path, missing.exists) == ("/nonexistent/bin/python3", False)

    assert (served.source, served.path) == (
        "process",
        f"{ODD_VENV}/bin/python3",
    )  # found on its PATH
    proc = facts.context(served.context)
    assert proc.label == "pid 5151 vllm.entrypoints.openai.api_server" and proc.unit is None
    assert proc.cmdline == (
        "python3 -m vllm.entrypoints.openai.api_server --api-key *** --hf-token=***"
        " --tokenizer-mode auto --port 8000"
    )
    assert "awkward_secret" not in raw and "awkward-secret" not in raw
    assert proc.vars["VLLM_USE_FLASHINFER_SAMPLER"] == "1"


def test_inventory_python_that_is_not_executable(build) -> None:
    fake = build(fakehost.reference_ct200(service=False))
    target = fake.root / "usr" / "bin" / "python9"
    target.write_text("not a program")
    facts, _ = run_probe(fake, pythons=("/usr/bin/python9",))
    (py,) = facts.pythons
    assert py.exists and py.error == "not executable"


def test_without_the_timeout_command(build, tmp_path: Path) -> None:
    """Where coreutils' timeout is missing the steps run plainly, and the probe still completes."""
    tools = tmp_path / "tools"
    tools.mkdir()
    # head and wc keep the cap on what nvidia-smi prints (probe.sh run_cap)
    tool_names = ("env", "uname", "id", "grep", "tr", "readlink", "mktemp", "rm", "cat", "sleep")
    for name in (*tool_names, "head", "wc"):
        (tools / name).symlink_to(shutil.which(name))
    fake = build(fakehost.reference_ct200())
    facts, _ = run_probe(replace(fake, env={**fake.env, "PATH": str(tools)}))
    assert facts.probe.complete and facts.driver.state == "ok" and len(facts.gpus) == 8
    assert facts.pythons[0].torch_version == "2.9.1+cu130"
    assert facts.contexts[0].which_nvcc == ()  # nothing on this PATH inside the tree


SETPRIV = shutil.which("setpriv")


@pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None, reason="needs root and setpriv")
def test_as_an_unprivileged_user() -> None:
    """A non-root probe: another user's environ is unreadable (the unit file still tells)."""
    spec = fakehost.reference_ct200()
    spec = replace(spec, processes=(replace(spec.processes[0], environ_readable=False),))
    with tempfile.TemporaryDirectory(dir="/tmp") as top:  # pytest's tmp_path is root-only
        Path(top).chmod(0o755)
        fake = fakehost.build_fake_host(Path(top) / "root", spec)
        env = {"SHELL": "/bin/sh", "LANG": "C", **fake.env, "HOME": "/nonexistent"}
        env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True, step_timeout_s=5))
        proc = subprocess.run(
            [SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-s"],
            input=probe_script(),
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    facts = facts_from_output(proc.stdout)
    assert facts.probe.complete and not facts.host.is_root and facts.host.user == "nobody"
    assert facts.host.sudo_nopasswd in (None, False)
    assert len(facts.gpus) == 8
    served = next(c for c in facts.contexts if c.kind == "process")
    assert not served.environ_readable and dict(served.vars) == {}
    unit = next(c for c in facts.contexts if c.kind == "unit")
    assert unit.vars["CUDA_HOME"] == "/usr/local/cuda-12.8"
    assert unit.which_nvcc == ("/usr/local/cuda-12.8/bin/nvcc",)


ODD_VALUE = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\t\n\r\0"),
    max_size=40,
)


@pytest.fixture(scope="module")
def quiet_ct200(tmp_path_factory: pytest.TempPathFactory) -> FakeHost:
    root = tmp_path_factory.mktemp("ct200") / HOSTILE / "root"
    return fakehost.build_fake_host(root, fakehost.reference_ct200(service=False))


@settings(max_examples=25, deadline=None)
@given(cuda_home=ODD_VALUE, arch_list=ODD_VALUE)
@example(cuda_home="/", arch_list="12.0f 9.0a")
@example(cuda_home="/opt/cuda 13/$HOME/*/;x", arch_list='"12.0f" \\ $(x) `y`')
def test_variable_values_survive_verbatim(
    quiet_ct200: FakeHost, cuda_home: str, arch_list: str
) -> None:
    """Quotes, $, *, ?, backslashes, spaces, non-ASCII: a value arrives exactly as set."""
    env = {**quiet_ct200.env, "CUDA_HOME": cuda_home, "FLASHINFER_CUDA_ARCH_LIST": arch_list}
    facts, _ = run_probe(replace(quiet_ct200, env=env))
    ssh = facts.contexts[0]
    assert ssh.vars["CUDA_HOME"] == cuda_home
    assert ssh.vars["FLASHINFER_CUDA_ARCH_LIST"] == arch_list
    if cuda_home:  # a set CUDA_HOME is always a toolkit candidate, existing or not
        assert facts.toolkit_at(cuda_home) is not None


def test_probe_env_rejects_what_the_protocol_cannot_carry() -> None:
    assert probe_env(["/a b/python3", "python3"], root="/x/", step_timeout_s=3) == {
        "DT_ROOT": "/x",
        "DT_PYTHONS": "/a b/python3\npython3",
        "DT_STEP_TIMEOUT": "3",
        "DT_ONLY": "",
    }
    for bad in ("/a\nb/python3", "/a\tb/python3"):
        with pytest.raises(ValueError, match="newline or a tab"):
            probe_env([bad])
    with pytest.raises(ValueError, match="at least 1 second"):
        probe_env([], step_timeout_s=0)
