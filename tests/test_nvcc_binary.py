"""A toolkit's version read from its ELF nvcc (issue 18 item 1): the release string as
``nvcc --version`` prints it, found in the binary's ``.rodata`` (as in this machine's real CUDA
13.0 nvcc, where it sits beside the ``Build cuda_…`` line), on both probe paths; the nvcc itself
never runs. An ELF built here with gcc stands in for nvcc: its ``.rodata`` holds the banner
lines of ../shared/fixtures/nvcc/nvcc-12.8.93.txt and running it leaves a marker."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest
from elf_nvcc import PATTERN, RELEASE, elf_nvcc, needs_gcc

from probes import hostread, probe_env, probe_script
from tui.core.facts.build import facts_from_output
from tui.demo.fakehost import build_fake_host, reference_ct200


@needs_gcc
def test_the_release_string_is_read_from_rodata_only(tmp_path: Path) -> None:
    nvcc = tmp_path / "nvcc"
    elf_nvcc(nvcc, tmp_path / "ran")
    assert hostread.op_grepo(PATTERN, str(nvcc), "1", ".rodata") == (RELEASE.encode(), 0)
    assert not (tmp_path / "ran").exists()
    # another ELF class (32-bit) and a script holding the same string: not such an ELF
    data = bytearray(nvcc.read_bytes())
    data[4] = 1
    (tmp_path / "elf32").write_bytes(bytes(data))
    (tmp_path / "script").write_text(f"#!/bin/sh\necho '{RELEASE}'\n")
    for other in ("elf32", "script"):
        assert hostread.op_grepo(PATTERN, str(tmp_path / other), "1", ".rodata") == (b"", 1)
    # a section table pointing past the end of the file: not found, no error
    data[4] = 2
    data[40:48] = (1 << 40).to_bytes(8, "little")
    (tmp_path / "cut").write_bytes(bytes(data))
    assert hostread.elf_section(str(tmp_path / "cut"), ".rodata") == b""
    # the marker can fail: run, the stand-in leaves it (and prints the release line)
    printed = subprocess.run([str(nvcc)], capture_output=True, text=True, check=True).stdout
    assert RELEASE in printed.splitlines() and (tmp_path / "ran").exists()


def probe_tree(
    tmp_path: Path, path: str, tree_exec: bool, machine: int | None = None
) -> tuple[str, Path]:
    """The reference CT200 tree with the ELF stand-in as its toolkit's nvcc (``machine``: its
    e_machine rewritten, a binary for another machine) and as a TRITON_PTXAS_PATH ptxas."""
    mark = tmp_path / "ran"
    fake = build_fake_host(tmp_path / "tree", reference_ct200())
    nvcc = fake.root / "usr/local/cuda-12.8/bin/nvcc"
    nvcc.unlink()
    elf_nvcc(nvcc, mark)
    if machine is not None:
        data = bytearray(nvcc.read_bytes())
        data[18:20] = machine.to_bytes(2, "little")
        nvcc.write_bytes(bytes(data))
    (fake.root / "opt").mkdir(exist_ok=True)
    elf_nvcc(fake.root / "opt/ptxas", mark)  # a ptxas holds the same banner (ptxas 13.0 here)
    env = {
        **os.environ,
        **probe_env(["/root/venv_sglang211/bin/python3"], root=str(fake.root), tree_exec=tree_exec),
        "DT_PROBE_PATH": path,
        "TRITON_PTXAS_PATH": "/opt/ptxas",
    }
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout, mark


@needs_gcc
@pytest.mark.parametrize("tree_exec", [True, False], ids=["may-run", "trust-rule-refuses"])
def test_an_elf_nvcc_is_read_not_run_on_both_paths(tmp_path: Path, tree_exec: bool) -> None:
    """May run (a fake tree's stand-ins do) or may not (a ``root:`` tree, as a user-owned
    CUDA_HOME): the version is the binary's either way, on both paths, and nothing ran. The
    toolkit also has a version.json: the binary's string wins, as nvcc's answer did."""
    seen = {}
    for path in ("sh", "py"):
        out, mark = probe_tree(tmp_path / path, path, tree_exec)
        assert not mark.exists(), f"{path}: the nvcc ran"
        facts = facts_from_output(out)
        tk = facts.toolkit_at("/usr/local/cuda-12.8")
        assert tk is not None and tk.error is None
        assert (tk.version, tk.full_version, tk.version_source) == ("12.8", "12.8.93", "binary")
        (tid,) = [ln.split("\t")[2] for ln in out.splitlines() if ln.endswith("/cuda-12.8")
                  and ln.startswith("@@DT1\ttk\t")]  # fmt: skip
        assert f"@@DT1\ttkbin\t{tid}\t{RELEASE}" in out.splitlines()
        assert f"@@DT1\ttkout\t{tid}\t" not in out
        (ptxas,) = [p for p in facts.ptxas if p.path == "/opt/ptxas"]
        assert (ptxas.version, ptxas.full_version, ptxas.version_source) == (
            "12.8",
            "12.8.93",
            "binary",
        )
        assert ptxas.error is None and "\tptxout\t" not in out
        seen[path] = [ln for ln in out.splitlines() if ln[6:].startswith(("tk", "ptx"))]
    assert seen["sh"] == seen["py"]


@needs_gcc
def test_the_binary_gives_the_toolkit_nvcc_gave(tmp_path: Path) -> None:
    """The same toolkit with the stand-in script that prints the 12.8.93 fixture banner (ct200
    as built) and with the ELF holding it: every field but version_source is the same, so
    FlashInfer's replay (``Toolkit.version``), the findings and the history words (version and
    home) answer the same."""
    out, _ = probe_tree(tmp_path / "elf", "py", tree_exec=True)
    fake = build_fake_host(tmp_path / "script", reference_ct200())
    env = {
        **os.environ,
        **probe_env(["/root/venv_sglang211/bin/python3"], root=str(fake.root), tree_exec=True),
    }
    ran = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    read = facts_from_output(out).toolkit_at("/usr/local/cuda-12.8")
    printed = facts_from_output(ran.stdout).toolkit_at("/usr/local/cuda-12.8")
    assert read is not None and printed is not None and printed.version_source == "nvcc"
    assert dataclasses.replace(read, version_source="nvcc") == printed


@needs_gcc
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the stand-in is an x86-64 ELF")
def test_another_machines_nvcc_is_not_read_but_tried_as_before(tmp_path: Path) -> None:
    """An aarch64 nvcc on this x86-64 machine (a toolkit copied from a GB10): it cannot run
    here, so the string in it is not its answer; it is run as before, fails, and the toolkit
    says so (FlashInfer's nvcc --version would fail the same way)."""
    for path in ("sh", "py"):
        out, mark = probe_tree(tmp_path / path, path, tree_exec=True, machine=183)
        assert "\ttkbin\t" not in out and not mark.exists()
        tk = facts_from_output(out).toolkit_at("/usr/local/cuda-12.8")
        assert tk is not None and tk.version_source == "version.json"
        assert tk.error is not None and tk.error.startswith("nvcc --version exited"), tk.error
