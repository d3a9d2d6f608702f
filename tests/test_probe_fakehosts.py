"""The real probe (probes/probe.sh + pyfacts.py), run by sh in a subprocess against the fake hosts:
the reference host and the other presets, the driver's failure states and what a fix changes.
The awkward hosts are in test_probe_awkward_hosts.py, this machine in test_probe_this_machine.py.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from fakehost_runs import run_probe

from probes import PROBE_VERSION
from tui.core.facts import Facts
from tui.core.facts.build import FactBuilder, ProbeProgress, facts_from_output
from tui.demo import fakehost
from tui.demo.fakehost import (
    DriverSpec,
)

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
