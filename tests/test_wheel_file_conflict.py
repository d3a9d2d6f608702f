"""wheel-file-conflict and the NCCL package's name (issue 22, item 6, in part).

The wheels' file lists are real: ``tests/fixtures/packaging/wheel-filelist-nvidia_nccl_cu12-
2.27.5.tsv`` and ``…_cu13-2.27.7.tsv``, the zip central directories of
``nvidia_nccl_cu12-2.27.5-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl`` (sha256
ad730cf1…) and ``nvidia_nccl_cu13-2.27.7-…`` (sha256 b28a524a…) read from the package index with
HTTP Range requests (``tests/wheel_ranges.py``): both install ``nvidia/nccl/lib/libnccl.so.2``.
The probe reads the RECORDs (real probe, fake venv, locally and over the real sshd); the library
a wheel ships is named after the dist-info that owns it (was ``nvidia-nccl-cu2``, from the
soname's 2).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakehost_runs import diagnose_json, entry, probed

from tui.core.findings.cuda_library_shadowed import lib_of
from tui.core.judge.diagnosis import diagnose
from tui.demo import fakehost

ID = "wheel-file-conflict"
NCCL = "nvidia/nccl/lib/libnccl.so.2"
# read from the index by the test author, not copies of ../shared/fixtures (which the demo packages)
FILELISTS = Path(__file__).parent / "fixtures" / "packaging"
WHEELS = {"nvidia-nccl-cu12": "2.27.5", "nvidia-nccl-cu13": "2.27.7"}


def filelist(dist: str, version: str) -> tuple[str, ...]:
    name = f"wheel-filelist-{dist.replace('-', '_')}-{version}.tsv"
    rows = (FILELISTS / name).read_text().splitlines()[1:]
    return tuple(row.split("\t")[1] for row in rows)


def venv_with(*dists: str) -> fakehost.FakeHostSpec:
    base = fakehost.healthy_h100()
    (venv,) = base.venvs
    venv = replace(
        venv,
        dists=(*venv.dists, *((d, WHEELS[d]) for d in dists)),
        records={**venv.records, **{d: filelist(d, WHEELS[d]) for d in dists}},
        nvidia_libs=(*venv.nvidia_libs, NCCL),
    )
    return replace(base, venvs=(venv,))


def test_both_real_wheels_list_the_same_library() -> None:
    assert NCCL in filelist("nvidia-nccl-cu12", "2.27.5")
    assert NCCL in filelist("nvidia-nccl-cu13", "2.27.7")


def _installed_last(root: Path, dist: str) -> None:
    (info,) = root.rglob(f"{dist.replace('-', '_')}-*.dist-info")
    later = info.stat().st_mtime + 3600
    os.utime(info, (later, later))


def test_probe_reads_the_owners_and_names_the_library_after_its_wheel(tmp_path: Path) -> None:
    one = probed(fakehost.build_fake_host(tmp_path / "one", venv_with("nvidia-nccl-cu12")))
    (py,) = [p for p in one.pythons if p.source == "inventory"]
    (path,) = [p for p in py.cuda_libs if p.endswith(NCCL)]
    assert [d for p, d in py.lib_owners if p == path] == ["nvidia-nccl-cu12"]
    lib = lib_of(path, None, py)
    assert lib is not None and lib.how == "nvidia-nccl-cu12 2.27.5"

    fake = fakehost.build_fake_host(tmp_path / "two", venv_with(*WHEELS))
    _installed_last(fake.root, "nvidia-nccl-cu13")
    two = probed(fake)
    (finding,) = [f for f in diagnose(two).findings if f.id == ID]
    assert finding.severity == "warning"
    assert finding.title == f"nvidia-nccl-cu12 and nvidia-nccl-cu13 both install {NCCL}"
    assert "nvidia-nccl-cu13 was installed last" in finding.explanation
    assert "wants nvidia-nccl-cu12's" in finding.explanation
    assert "--no-deps nvidia-nccl-cu12==2.27.5" in finding.explanation
    (py2,) = [p for p in two.pythons if p.source == "inventory"]
    (path2,) = [p for p in py2.cuda_libs if p.endswith(NCCL)]
    assert lib_of(path2, None, py2).version is None  # two owners: which one's is unknown


@pytest.mark.sshd
def test_over_real_sshd(ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "two", venv_with(*WHEELS), ssh=ssh_env.alias),
        entry(tmp_path, "one", venv_with("nvidia-nccl-cu13"), ssh=ssh_env.alias),
    )
    assert [f["severity"] for f in hosts[0]["findings"] if f["id"] == ID] == ["warning"]
    assert [f for f in hosts[1]["findings"] if f["id"] == ID] == []
    (py,) = [p for p in hosts[1]["facts"]["pythons"] if p["source"] == "inventory"]
    assert [d for _p, d in py["lib_owners"]] == ["nvidia-nccl-cu13"]
