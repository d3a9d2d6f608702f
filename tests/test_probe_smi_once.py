"""nvidia-smi once for the query, live-state and fabric fields: the one call's lines, split by the
probe, give the records (and facts) the three separate calls give; a refused field falls back to
them. The real probe (sh) on a fake host whose nvidia-smi stand-in prints captured outputs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from probes import probe_env, probe_script
from tui.core.facts.build import facts_from_output
from tui.demo import fakehost
from tui.demo.fakehost import FakeHost

SMI_RECORDS = re.compile(r"^@@DT1\t(smi|smirc)\t(query|state|fabric|list)\t.*$", re.MULTILINE)


def probe(fake: FakeHost, *, trace: Path | None = None) -> str:
    env = {"SHELL": "/bin/sh", "LANG": "C", "PATH": os.environ["PATH"], **fake.env}
    env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True, step_timeout_s=5))
    argv = ["sh", "-s"]
    if trace is not None:
        # -ff: one log per process, so no execve is lost to an interleaved <unfinished> line
        argv = ["strace", "-ff", "-qq", "-e", "trace=execve", "-o", str(trace), *argv]
    proc = subprocess.run(
        argv, input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def smi_data(fake: FakeHost) -> Path:
    return fake.root / "usr/share/detective-tui-fake/nvidia-smi"


def set_output(fake: FakeHost, name: str, text: str, rc: int) -> None:
    (smi_data(fake) / f"{name}.out").write_text(text)
    (smi_data(fake) / f"{name}.rc").write_text(f"{rc}\n")


@pytest.fixture
def odd_ct200(tmp_path: Path) -> FakeHost:
    """Eight GPUs (so the fabric fields count), one named with ", ", one without a memory size,
    and a fabric that is still registering."""
    spec = fakehost.reference_ct200(service=False)
    gpus = list(spec.gpus)
    gpus[0] = replace(gpus[0], name="NVIDIA RTX PRO 6000, Server Edition")
    gpus[1] = replace(gpus[1], memory_mib=None)
    spec = replace(
        spec, gpus=tuple(gpus), driver=replace(spec.driver, fabric=("In Progress", "N/A"))
    )
    return fakehost.build_fake_host(tmp_path / "root", spec)


def test_one_call_gives_the_records_and_facts_of_three(odd_ct200: FakeHost) -> None:
    # the three separate calls would say 99: the records come from the one call only
    three_calls = {
        n: (smi_data(odd_ct200) / f"{n}.out").read_text() for n in ("query", "state", "fabric")
    }
    for name in three_calls:
        set_output(odd_ct200, name, "not this call\n", 99)
    one = probe(odd_ct200)
    for name, text in three_calls.items():
        set_output(odd_ct200, name, text, 0)
    # an nvidia-smi that refuses a field of the one call: the three calls run instead
    set_output(odd_ct200, "all", 'Field "fabric.state" is not a valid field to query.\n', 2)
    three = probe(odd_ct200)

    assert SMI_RECORDS.findall(one) and "99" not in {rc for k, rc in SMI_RECORDS.findall(one)}
    assert [m.group(0) for m in SMI_RECORDS.finditer(one)] == [
        m.group(0) for m in SMI_RECORDS.finditer(three)
    ]
    f1, f3 = facts_from_output(one), facts_from_output(three)
    assert f1.gpus == f3.gpus and f1.gpu_load == f3.gpu_load and f1.fabric == f3.fabric
    assert f1.gpus[0].name == "NVIDIA RTX PRO 6000, Server Edition"
    assert f1.gpus[1].memory_mib is None and f1.gpu_load[0].memory_used_mib == 0
    assert f1.fabric.query_rc == 0 and f1.fabric.registered is False


def test_a_line_short_of_fields_falls_back(odd_ct200: FakeHost) -> None:
    set_output(odd_ct200, "all", "0, NVIDIA RTX PRO 6000, 12.0\n", 0)
    facts = facts_from_output(probe(odd_ct200))
    assert len(facts.gpus) == 8 and len(facts.gpu_load) == 8 and facts.fabric.query_rc == 0


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_reference_host_runs_nvidia_smi_twice_and_no_tr_or_env(tmp_path: Path) -> None:
    fake = fakehost.build_fake_host(tmp_path / "root", fakehost.reference_ct200())
    logs = tmp_path / "strace"
    logs.mkdir()
    probe(fake, trace=logs / "execve")
    text = "".join(f.read_text() for f in logs.iterdir())
    ran = re.findall(r'^execve\("([^"]*)",.*\) = 0$', text, re.MULTILINE)
    names = [p.rsplit("/", 1)[-1] for p in ran]
    # before: 4 nvidia-smi, 4 tr (3 for journal lines' tabs), 3 env (2 before pyfacts)
    assert names.count("nvidia-smi") == 2
    assert names.count("tr") <= 1 and names.count("env") <= 1
