"""torch's arch list keyed by (torch version, CUDA variant, machine): the table equals the real
captures, and the rule names which row it used when the probe could not read the library."""

from __future__ import annotations

import pytest
from factsmaker import make_facts
from shared_fixtures import shared_fixture

from tui.core.rules.evaluate import evaluate
from tui.core.tables import torch_arch

TSV = "torch/torch-pypi-wheels-CUDA_ARCH_FLAGS-from-libtorch_python.tsv"


def test_the_table_holds_every_captured_wheel() -> None:
    rows = {}
    for line in shared_fixture(TSV).read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        tag, version, flags = line.split("\t")
        base, _, variant = version.partition("+")
        machine = "aarch64" if tag.endswith("-aarch64") else "x86_64"
        rows[(base, variant, machine)] = tuple(flags.split())
    table = dict(torch_arch.WHEEL_ARCH_LISTS)
    assert {k: v for k, v in table.items() if k in rows} == rows
    assert set(table) - set(rows) == {("2.5.1", "cu124", "x86_64")}  # read by this project


@pytest.mark.parametrize(
    ("version", "cuda", "machine", "expected", "source"),
    [
        ("2.11.0+cu130", "13.0", "x86_64", "sm_75", "the PyPI wheel torch-2.11.0+cu130, x86_64"),
        ("2.11.0+cu130", "13.0", "aarch64", "sm_80", "the PyPI wheel torch-2.11.0+cu130, aarch64"),
        ("2.7.0+cu128", "12.8", "x86_64", "sm_70", "the cu128 variant's list"),
        ("2.3.1+cu121", "12.1", "x86_64", "sm_50", "the cu121 variant's list"),
    ],
)
def test_lookup(version: str, cuda: str, machine: str, expected: str, source: str) -> None:
    found = torch_arch.arch_list(version, cuda, machine)
    assert found is not None
    listed, where = found
    assert listed[0] == expected and where.startswith(source)


def test_the_rule_uses_the_release_row_and_says_so() -> None:
    f = make_facts(
        gpus=("7.0",),
        driver="580.95.05",
        torch_cuda="13.0",
        torch_version="2.11.0+cu130",
        flashinfer=None,
        toolkits=(),
        env={},
    )
    (finding,) = [x for x in evaluate(f)[0] if x.id == "torch-lacks-gpu-arch"]
    assert (
        "arch list sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 (the PyPI wheel "
        "torch-2.11.0+cu130, x86_64 (libtorch_python.so))" in finding.evidence
    )


def test_the_probe_reads_a_flag_string_merged_into_another(tmp_path) -> None:
    """torch 2.8.0/2.9.0's libtorch_python.so holds "…std::string ipc_hsm_70 sm_75 …": the
    linker merged the arch string into the tail of another (tests/test_torch_arch_slow.py
    checks the real wheels)."""
    import dataclasses
    import subprocess

    from probes import probe_env, probe_script
    from tui.core.facts.build import facts_from_output
    from tui.demo import fakehost

    spec = fakehost.healthy_h100()
    venv = dataclasses.replace(spec.venvs[0], torch_arch_merged=True)
    fake = fakehost.build_fake_host(tmp_path / "h", dataclasses.replace(spec, venvs=(venv,)))
    env = {
        "SHELL": "/bin/sh",
        "LANG": "C",
        **fake.env,
        **probe_env(fake.pythons, root=str(fake.root), tree_exec=True),
    }
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), env=env, capture_output=True, text=True, timeout=120
    ).stdout
    (py,) = facts_from_output(out).pythons
    assert py.torch_arch_list == tuple(fakehost.pypi_torch_arch_flags("2.8.0+cu128").split())
