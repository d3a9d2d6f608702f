"""The real probe (probes/probe.sh + pyfacts.py), run by sh in a subprocess against fake hosts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from probes import PROBE_VERSION, probe_env, probe_script
from tui.core.facts import Facts
from tui.core.facts.build import FactBuilder, ProbeProgress, facts_from_output
from tui.demo import fakehost
from tui.demo.fakehost import (
    CUDA_130,
    DriverSpec,
    FakeHost,
    ProcessSpec,
    ToolkitSpec,
    VenvSpec,
    WrapperSpec,
)

HOSTILE = "odd dir $HOME;echo pwned"


def run_probe(
    fake: FakeHost,
    *,
    shell: str = "sh",
    step_timeout_s: int = 5,
    pythons: tuple[str, ...] | None = None,
) -> tuple[Facts, str]:
    env = {"SHELL": "/bin/sh", "LANG": "C", **fake.env}
    env.update(
        probe_env(
            fake.pythons if pythons is None else pythons,
            root=str(fake.root),
            tree_exec=True,
            step_timeout_s=step_timeout_s,
        )
    )
    proc = subprocess.run(
        [shutil.which(shell) or shell, "-s"],
        input=probe_script(),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return facts_from_output(proc.stdout), proc.stdout


@pytest.fixture
def build(tmp_path: Path):
    def _build(spec: fakehost.FakeHostSpec) -> FakeHost:
        return fakehost.build_fake_host(tmp_path / HOSTILE / "root", spec)

    return _build


# --- the reference host (the seed case) -----------------------------------------------------


@pytest.mark.parametrize("shell", ["sh", "bash"])
def test_reference_host_facts(build, shell: str) -> None:
    fake = build(fakehost.reference_ct200())
    facts, raw = run_probe(fake, shell=shell)

    assert facts.probe.complete and facts.probe.probe_version == PROBE_VERSION
    assert facts.probe.root == str(fake.root) and not facts.probe.timed_out
    assert facts.host.hostname == "ct200" and facts.host.os_id == "ubuntu"

    d = facts.driver
    assert (d.state, d.driver_version, d.driver_cuda, d.smi_exit) == ("ok", "580.95.05", "13.0", 0)
    assert (d.proc_version, d.kernel_module) == ("580.95.05", "open")

    assert len(facts.gpus) == 8
    assert [g.index for g in facts.gpus] == list(range(8))
    assert {(g.name, g.compute_cap, g.cc_source, g.memory_mib) for g in facts.gpus} == {
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "nvidia-smi", 97887)
    }
    assert len({g.uuid for g in facts.gpus}) == 8

    assert [t.home for t in facts.toolkits] == ["/usr/local/cuda-12.8"]
    tk = facts.toolkit_at("/usr/local/cuda-12.8")
    assert (tk.version, tk.full_version, tk.version_source) == ("12.8", "12.8.93", "nvcc")
    assert tk.exists and tk.executable and tk.error is None
    assert {"CUDA_HOME", "PATH", "CUDA_HOME@pid 4242", "unit sglang.service"} <= set(tk.sources)
    assert facts.usr_local_cuda is None

    ssh = facts.contexts[0]
    assert (ssh.kind, ssh.label) == ("ssh", "ssh session")
    assert ssh.vars["CUDA_HOME"] == "/usr/local/cuda-12.8"
    assert ssh.which_nvcc == ("/usr/local/cuda-12.8/bin/nvcc",)
    assert not ssh.usr_local_cuda_exists

    # the 8 retitled TP workers (children of 4242) are not separate contexts
    assert [c.kind for c in facts.contexts] == ["ssh", "login", "process", "unit"]
    proc = facts.contexts[2]
    assert (proc.pid, proc.unit, proc.exe) == (4242, "sglang.service", "/usr/bin/python3.12")
    assert proc.label == "pid 4242 sglang.launch_server"
    assert proc.cmdline.startswith("/root/venv_sglang211/bin/python3 -m sglang.launch_server")
    assert proc.vars["CUDA_HOME"] == "/usr/local/cuda-12.8"
    assert proc.vars["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    assert proc.vars["SGLANG_API_KEY"] == "***"
    assert "HF_TOKEN" not in proc.vars
    assert "sk-demo-secret-value" not in raw and "hf_demo_secret_value" not in raw

    unit = next(c for c in facts.contexts if c.kind == "unit")
    assert (unit.label, unit.unit) == ("unit sglang.service", "sglang.service")
    assert unit.vars["CUDA_HOME"] == "/usr/local/cuda-12.8"
    assert unit.vars["SGLANG_API_KEY"] == "***" and "HF_TOKEN" not in unit.vars
    assert unit.which_nvcc == ("/usr/local/cuda-12.8/bin/nvcc",)

    login = next(c for c in facts.contexts if c.kind == "login")
    assert login.vars["CUDA_HOME"] == "/usr/local/cuda-12.8"  # from the tree's /root/.bashrc
    assert login.which_nvcc == ("/usr/local/cuda-12.8/bin/nvcc",)

    inv, served = facts.pythons
    assert (inv.path, inv.source, inv.context) == (
        "/root/venv_sglang211/bin/python3",
        "inventory",
        "ssh session",
    )
    assert (served.path, served.source, served.context) == (inv.path, "process", proc.label)
    for py in (inv, served):
        assert py.exists and py.error is None
        assert (py.torch_version, py.torch_cuda, py.flashinfer_version) == (
            "2.9.1+cu130",
            "13.0",
            "0.6.8",
        )
        assert py.prefix == "/root/venv_sglang211"
        assert py.packages["sglang"] == "0.5.6" and py.packages["torch"] == "2.9.1"
        assert py.jit_cache_dirs == ("/root/.cache/flashinfer/0.6.8",)
        assert py.torch_arch_list == ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
        assert all(s.startswith("/root/venv_sglang211/lib/python3") for s in py.site_packages)

    assert Facts.from_json(facts.to_json()) == facts


def test_reference_host_with_cuda13(build) -> None:
    facts, _ = run_probe(build(fakehost.reference_ct200(with_cuda13=True, flashinfer="0.7.1")))
    tk = facts.toolkit_at("/usr/local/cuda-13.0")
    assert (tk.version, tk.full_version, tk.sources) == ("13.0", "13.0.88", ("/usr/local/cuda-*",))
    assert facts.toolkit_at("/usr/local/cuda-12.8").version == "12.8"
    assert facts.pythons[0].flashinfer_version == "0.7.1"


def test_reference_host_without_service(build) -> None:
    facts, _ = run_probe(build(fakehost.reference_ct200(service=False)))
    assert [c.kind for c in facts.contexts] == ["ssh", "login"]
    assert [p.source for p in facts.pythons] == ["inventory"]


def test_progress_records(build) -> None:
    _, raw = run_probe(build(fakehost.reference_ct200()))
    builder = FactBuilder()
    steps = [p for p in map(builder.feed, raw.splitlines()) if isinstance(p, ProbeProgress)]
    assert steps[0].step == "host" and steps[-1].step == "end"
    named = [s for s in steps if s.step != "end" or s.total != 1]
    assert [s.done for s in named] == list(range(1, len(named) + 1))
    assert named[-1].done == named[-1].total
    assert "python /root/venv_sglang211/bin/python3" in [s.step for s in steps]


def test_noise_and_partial_output(build) -> None:
    facts, raw = run_probe(build(fakehost.reference_ct200()))
    noisy = (
        "Welcome to Ubuntu 22.04\n"
        + raw.replace("\n", "\nstderr: warning\n")
        + "Connection closed.\n"
    )
    assert facts_from_output(noisy) == facts
    lines = raw.splitlines()
    cut = next(i for i, ln in enumerate(lines) if "\tstep\ttoolkits\t" in ln)
    partial = facts_from_output("\n".join(lines[:cut]))
    assert not partial.probe.complete
    assert partial.pythons[0].torch_version == "2.9.1+cu130"
    assert partial.toolkits == () and partial.gpus == ()
    assert partial.driver.state == "error"


def test_tree_is_relocatable(build, tmp_path: Path) -> None:
    fake = build(fakehost.reference_ct200())
    before, _ = run_probe(fake)
    moved = tmp_path / "moved elsewhere" / "root"
    moved.parent.mkdir()
    shutil.move(str(fake.root), moved)
    after, _ = run_probe(replace(fake, root=moved))
    strip = lambda f: {**f.to_json(), "probe": None}  # noqa: E731
    assert strip(after) == strip(before)


# --- the other presets --------------------------------------------------------------------


def test_healthy_h100(build) -> None:
    facts, _ = run_probe(build(fakehost.healthy_h100()))
    assert (facts.driver.state, facts.driver.driver_cuda) == ("ok", "12.8")
    assert {g.compute_cap for g in facts.gpus} == {"9.0"} and len(facts.gpus) == 4
    assert facts.usr_local_cuda == "/usr/local/cuda-12.8"
    link = facts.toolkit_at("/usr/local/cuda")
    assert (link.realpath, link.version) == ("/usr/local/cuda-12.8", "12.8")
    py = facts.pythons[0]
    assert (py.torch_version, py.torch_cuda, py.flashinfer_version) == (
        "2.8.0+cu128",
        "12.8",
        "0.6.8",
    )
    assert facts.contexts[0].usr_local_cuda_exists


def test_b200_old_driver(build) -> None:
    facts, _ = run_probe(build(fakehost.b200_old_driver()))
    assert (facts.driver.driver_version, facts.driver.driver_cuda) == ("575.57.08", "12.9")
    assert {g.compute_cap for g in facts.gpus} == {"10.0"} and len(facts.gpus) == 8
    assert facts.pythons[0].torch_cuda == "13.0"
    assert facts.toolkit_at("/usr/local/cuda-13.0").version == "13.0"


def test_rtx5090_cu124(build) -> None:
    facts, _ = run_probe(build(fakehost.rtx5090_cu124_torch()))
    assert [(g.name, g.compute_cap) for g in facts.gpus] == [("NVIDIA GeForce RTX 5090", "12.0")]
    py = facts.pythons[0]
    assert (py.torch_version, py.torch_cuda, py.flashinfer_version) == ("2.6.0+cu124", "12.4", None)
    assert "sm_120" not in py.torch_arch_list and py.torch_arch_list[-1] == "sm_90"


def test_no_driver(build) -> None:
    facts, _ = run_probe(build(fakehost.no_driver()))
    d = facts.driver
    assert (d.state, d.smi_exit, d.proc_version, facts.gpus) == ("not-loaded", 9, None, ())
    assert d.message.startswith("NVIDIA-SMI has failed because it couldn't communicate")
    assert facts.probe.complete


def test_no_nvidia_smi_binary(build) -> None:
    spec = replace(fakehost.no_driver(), driver=DriverSpec(installed=False))
    facts, _ = run_probe(build(spec))
    assert facts.driver.state == "no-driver"


# --- the awkward cases --------------------------------------------------------------------


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


ODD_VENV = f"/opt/{HOSTILE}/venv"


def awkward_spec() -> fakehost.FakeHostSpec:
    base = fakehost.reference_ct200(service=False)
    odd_py = f"{ODD_VENV}/bin/python3"
    return replace(
        base,
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-rtxpro6000-server-610.43.02-mig-kmd-umd-header.txt",
            proc_version="610.43.02",
        ),
        toolkits=(
            CUDA_130,
            ToolkitSpec(
                "/usr/local/cuda-12.8", "nvcc/nvcc-12.8.93.txt", "12.8.1", executable=False
            ),
            ToolkitSpec(
                "/usr/lib/nvidia-cuda-toolkit",
                "nvcc/nvcc-12.4.131.txt",
                "12.4.1",
                "nvcc/nvcc-12.4.131-list-gpu-arch.txt",
            ),
            ToolkitSpec("/opt/cuda", "nvcc/nvcc-12.8.93.txt", "12.8.1"),
            ToolkitSpec("/root/miniconda3/envs/cu", "nvcc/nvcc-13.0.88.txt", "13.0.2"),
        ),
        wrappers=(
            WrapperSpec("/usr/local/bin/nvcc", "/usr/local/cuda-13.0/bin/nvcc"),
            WrapperSpec(
                "/usr/bin/nvcc",
                "/usr/lib/nvidia-cuda-toolkit/bin/nvcc",
                fakehost.fixture_text(
                    "packaging/debian-sid-nvidia-cuda-toolkit-12.4.131-usr-bin-nvcc-wrapper.sh.txt"
                ),
            ),
        ),
        venvs=(
            *base.venvs,
            VenvSpec(
                path=ODD_VENV,
                dists=(("torch", "2.11.0"), ("nvidia-cuda-runtime", "13.0.96")),
                torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py",
                flashinfer="0.7.2",
                pip_nvcc_fixture="nvcc/nvcc-13.0.88.txt",
            ),
        ),
        inventory_pythons=(base.venvs[0].python, odd_py, "/nonexistent/bin/python3"),
        processes=(
            ProcessSpec(
                pid=5151,
                argv=(
                    "python3",
                    "-m",
                    "vllm.entrypoints.openai.api_server",
                    "--api-key",
                    "sk-awkward-secret",
                    "--hf-token=hf_awkward_secret",
                    "--tokenizer-mode",
                    "auto",
                    "--port",
                    "8000",
                ),
                environ={
                    "PATH": f"{ODD_VENV}/bin:/usr/bin:/bin",
                    "VLLM_USE_FLASHINFER_SAMPLER": "1",
                },
                exe="/usr/bin/python3.11",
            ),
        ),
        env={
            "HOME": "/root",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "CUDA_HOME": "",
            "FLASHINFER_CUDA_ARCH_LIST": "12.0f",
        },
        jit_cache_dirs=("/root/.cache/flashinfer/0.7.2/120f",),
    )


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


# --- this machine -------------------------------------------------------------------------

CUDA13 = Path("/usr/local/cuda-13.0/bin/nvcc")


@pytest.mark.skipif(
    not os.access(CUDA13, os.X_OK), reason="no /usr/local/cuda-13.0 on this machine"
)
def test_probe_on_this_machine_finds_cuda13() -> None:
    env = {**os.environ, **probe_env([], step_timeout_s=10)}
    proc = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    facts = facts_from_output(proc.stdout)
    assert facts.probe.complete and facts.probe.root is None
    tk = facts.toolkit_at("/usr/local/cuda-13.0")
    assert (tk.version, tk.full_version) == ("13.0", "13.0.88")


def test_inventory_python_by_bare_name_is_looked_up_on_path(build) -> None:
    fake = build(fakehost.reference_ct200(service=False))
    facts, _ = run_probe(fake, pythons=("python3",))
    (py,) = facts.pythons
    assert (py.path, py.exists, py.prefix) == ("python3", True, "/root/venv_sglang211")
    assert py.torch_version == "2.9.1+cu130"


def test_unit_drop_in_and_profile_changes_are_seen(build) -> None:
    """What a fix writes under the root (a unit drop-in, a profile.d file) shows in the contexts
    it changes; the running process keeps its old environment."""
    fake = build(fakehost.reference_ct200(with_cuda13=True))
    new_path = "/usr/local/cuda-13.0/bin:/root/venv_sglang211/bin:/usr/bin:/bin"
    dropin = fake.root / "etc/systemd/system/sglang.service.d/50-detective-tui.conf"
    dropin.parent.mkdir(parents=True)
    dropin.write_text(
        f'[Service]\nEnvironment=CUDA_HOME=/usr/local/cuda-13.0\nEnvironment="PATH={new_path}"\n'
    )
    profile = fake.root / "etc/profile.d/cuda.sh"
    profile.parent.mkdir(parents=True)
    profile.write_text(
        'export CUDA_HOME=/usr/local/cuda-13.0\nexport PATH="$CUDA_HOME/bin:$PATH"\n'
        "export VLLM_API_KEY=sk-from-profile\n"
    )
    (fake.root / "root/.bashrc").unlink()
    facts, _ = run_probe(fake)

    unit = next(c for c in facts.contexts if c.kind == "unit")
    assert unit.vars["CUDA_HOME"] == "/usr/local/cuda-13.0" and unit.vars["PATH"] == new_path
    assert unit.which_nvcc == ("/usr/local/cuda-13.0/bin/nvcc",)
    proc = next(c for c in facts.contexts if c.kind == "process")
    assert proc.vars["CUDA_HOME"] == "/usr/local/cuda-12.8"
    login = next(c for c in facts.contexts if c.kind == "login")
    assert login.vars["CUDA_HOME"] == "/usr/local/cuda-13.0"
    assert login.which_nvcc[0] == "/usr/local/cuda-13.0/bin/nvcc"
    assert login.vars["VLLM_API_KEY"] == "***"
    assert "unit sglang.service" in facts.toolkit_at("/usr/local/cuda-13.0").sources


PYENV = Path.home() / ".pyenv" / "versions"
OLD_AND_NEW = sorted(PYENV.glob("[23].*/bin/python[23].*[0-9]")) if PYENV.is_dir() else []


@pytest.mark.skipif(not OLD_AND_NEW, reason="no pyenv interpreters on this machine")
def test_snippet_on_every_python_here(serving_process_on_this_machine) -> None:
    """pyfacts.py runs on 3.8+ (3.6 too); Python 2 gives a clear error, not a crash. This
    machine is probed as it is: the serving processes on it (the suite runs one) add their own
    interpreters, which are not the ones asked for."""
    env = {**os.environ, **probe_env([str(p) for p in OLD_AND_NEW], step_timeout_s=20)}
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=300
    ).stdout
    facts = facts_from_output(out)
    assert any(c.kind == "process" and "sglang" in (c.cmdline or "") for c in facts.contexts)
    asked = [py for py in facts.pythons if py.source == "inventory"]
    assert len(asked) == len(OLD_AND_NEW)
    for path, py in zip(OLD_AND_NEW, asked, strict=True):
        minor = path.name.removeprefix("python")
        if minor.startswith("2."):
            assert py.version is None and py.error.startswith("not a Python 3.6+"), py
        else:
            assert py.error is None and py.version.startswith(minor + "."), py
            assert py.prefix == str(path.parent.parent), py


@pytest.mark.parametrize(
    ("failure", "state", "rc", "text"),
    [
        ("not-loaded", "not-loaded", 9, "couldn't communicate with the NVIDIA driver"),
        ("no-nvml", "no-nvml", 12, "couldn't find libnvidia-ml.so"),
        ("version-mismatch", "version-mismatch", 18, "Driver/library version mismatch"),
    ],
)
def test_driver_failure_states(build, failure: str, state: str, rc: int, text: str) -> None:
    spec = replace(
        fakehost.no_driver(), driver=DriverSpec(failure=failure, proc_version="580.95.05")
    )
    facts, _ = run_probe(build(spec))
    d = facts.driver
    assert (d.state, d.smi_exit, d.proc_version) == (state, rc, "580.95.05")
    assert text in d.message and facts.gpus == ()


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


def test_gpus_from_the_list_when_the_query_is_refused(build) -> None:
    spec = fakehost.reference_ct200(service=False)
    spec = replace(spec, driver=replace(spec.driver, query_unsupported=True))
    facts, _ = run_probe(build(spec))
    assert len(facts.gpus) == 8 and facts.driver.state == "ok"
    g = facts.gpus[3]
    assert (g.index, g.name, g.memory_mib) == (
        3,
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        97887,
    )
    assert (g.compute_cap, g.cc_source) == ("12.0", "name-table") and g.uuid.startswith("GPU-")


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
