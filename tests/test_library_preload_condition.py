"""cuda-library-shadowed where torch's own preloads do not protect it (issue 22, items 3 and 4).

- Item 4: torch 2.6–2.8 preloads the wheels' NVRTC and nvJitLink only when
  ``nvidia/cuda_runtime/lib/libcudart.so`` is in ``/proc/self/maps`` after loading
  ``libtorch_global_deps.so`` (``_load_global_deps`` of the real 2.6.0 and 2.8.0 wheels,
  ``tests/test_torch_libs_wheels_slow.py``). Its ``DT_RPATH`` names the wheels'
  ``nvidia/cuda_runtime/lib`` (``readelf -d`` of the same wheels), so the condition fails when
  that wheel is missing and ``LD_LIBRARY_PATH`` gives the libcudart: then an older nvJitLink there
  is the one cuSPARSE gets (pytorch/pytorch#140797's ``undefined symbol``).
- Item 3: torch ≥ 2.10 preloads every CUDA library by absolute path, but the loader answers
  ``dlopen("libnvrtc.so")`` only with a loaded object of that name or soname; the preloaded one's
  soname is ``libnvrtc.so.12``, so the unversioned dev link on ``LD_LIBRARY_PATH`` (the toolkit's
  ``lib<x>.so -> lib<x>.so.<major>``, as ``/usr/local/cuda-13.0/lib/libcudart.so`` here) maps a
  second NVRTC. NVRTC 12.4 cannot target SM 12.0 (``ptxas_targets``, real ``--help`` captures).

Each host is built from real artifacts (nvidia-smi tables, torch's ``version.py`` and arch flags
of the PyPI wheels) and read by the real probe, locally and over the real sshd.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from fakehost_runs import diagnose_json, entry, probed
from test_library_shadowed import ID, OLD121, OLD124, facts, ids

from tui.core import exitcodes
from tui.core.facts import LibFile
from tui.core.judge.diagnosis import diagnose
from tui.core.rules.evaluate import evaluate
from tui.demo import fakehost

CU12_WHEELS = {
    "nvidia/nvjitlink/lib/libnvJitLink.so.12": "nvidia-nvjitlink-cu12",
    "nvidia/cuda_nvrtc/lib/libnvrtc.so.12": "nvidia-cuda-nvrtc-cu12",
}
RTX_PRO_WS = "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"
WITH_CUDART = {**CU12_WHEELS, "nvidia/cuda_runtime/lib/libcudart.so.12": "nvidia-cuda-runtime-cu12"}


def old_libs(ld: str, version: str, *stems: str) -> tuple[tuple[str, str], ...]:
    return tuple((f"{ld}/{s}.so.12", f"{ld}/{s}.so.{version}") for s in stems)


ROWS = {
    "torch 2.7 without the cudart wheel: LD_LIBRARY_PATH's cudart fails the preload check": (
        facts(
            "2.7.0+cu128",
            ld_libs=old_libs(OLD121, "12.1.105", "libcudart", "libnvJitLink"),
            wheel=CU12_WHEELS,
        ),
        {ID: "critical"},
    ),
    "torch 2.7 with the cudart wheel: its RPATH wins, the preloads happen": (
        facts(
            "2.7.0+cu128",
            ld_libs=old_libs(OLD121, "12.1.105", "libcudart", "libnvJitLink"),
            wheel=WITH_CUDART,
        ),
        {},
    ),
    "torch 2.9 checks only for a libcudart.so: any one passes": (
        facts(
            "2.9.0+cu128",
            ld_libs=old_libs(OLD121, "12.1.105", "libcudart", "libnvJitLink"),
            wheel=CU12_WHEELS,
        ),
        {},
    ),
    "torch 2.10 on SM 12.0, an old toolkit's unversioned libnvrtc.so first": (
        facts(
            "2.10.0+cu128",
            ("12.0",),
            ld=OLD124,
            ld_libs=((f"{OLD124}/libnvrtc.so", f"{OLD124}/libnvrtc.so.12.4.127"),),
        ),
        {ID: "warning"},
    ),
    "torch 2.10 on SM 9.0: NVRTC 12.4 can target it": (
        facts(
            "2.10.0+cu128",
            ("9.0",),
            ld=OLD124,
            ld_libs=((f"{OLD124}/libnvrtc.so", f"{OLD124}/libnvrtc.so.12.4.127"),),
        ),
        {},
    ),
    "torch 2.10 on SM 12.0, only the versioned soname there (torch's preload answers it)": (
        facts(
            "2.10.0+cu128", ("12.0",), ld=OLD124, ld_libs=old_libs(OLD124, "12.4.127", "libnvrtc")
        ),
        {},
    ),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_rule_rows(name: str) -> None:
    f, expected = ROWS[name]
    assert ids(f) == expected


def test_the_chain_names_the_failed_preload_condition() -> None:
    f, _ = ROWS[
        "torch 2.7 without the cudart wheel: LD_LIBRARY_PATH's cudart fails the preload check"
    ]
    (finding,) = [x for x in evaluate(f)[0] if x.id == ID]
    assert "`nvidia/cuda_runtime/lib/libcudart.so` is in /proc/self/maps" in finding.explanation
    assert f"the libcudart it loads is {OLD121}/libcudart.so.12.1.105" in finding.explanation
    assert "undefined symbol: … version libnvJitLink.so.12" in finding.explanation


# --- the real probe on hosts built from real artifacts --------------------------------------


def cudart_from_path(cudart_wheel: bool) -> fakehost.FakeHostSpec:
    """4× H100, torch 2.7.0+cu126 (the PyPI wheel's version.py and arch flags) whose venv lacks
    nvidia-cuda-runtime-cu12 (``cudart_wheel`` False), ~/.bashrc putting CUDA 12.1 first."""
    base = fakehost.nvjitlink_shadowed_login("2.7.0")
    (venv,) = base.venvs
    dists = (
        ("torch", "2.7.0"),
        ("nvidia-cuda-nvrtc-cu12", "12.6.77"),
        ("nvidia-nvjitlink-cu12", "12.6.85"),
        ("nvidia-cublas-cu12", "12.6.4.1"),
    )
    venv = dataclasses.replace(
        venv,
        dists=(*dists, ("nvidia-cuda-runtime-cu12", "12.6.77")) if cudart_wheel else dists,
        torch_version_py="torch/torch-version.py-2.7.0+cu126-x86_64-pypi.py",
        torch_version="2.7.0+cu126",
        torch_arch_flags=fakehost.pypi_torch_arch_flags("2.7.0+cu126"),
        nvidia_libs=tuple(
            lib for lib in fakehost.CU12_WHEEL_LIBS if cudart_wheel or "cuda_runtime" not in lib
        ),
    )
    return dataclasses.replace(base, venvs=(venv,))


def plain_nvrtc(plain: bool) -> fakehost.FakeHostSpec:
    """1× RTX PRO 6000 (SM 12.0) on 580.95.05, torch 2.10.0+cu128 from the wheels, ~/.bashrc
    putting CUDA 12.4's lib64 first on LD_LIBRARY_PATH, with (``plain``) its unversioned
    libnvrtc.so dev link."""
    old = "/usr/local/cuda-12.4"
    lib = f"{old}/targets/x86_64-linux/lib"
    base = fakehost.nvjitlink_shadowed_login("2.10.0")
    (venv,) = base.venvs
    venv = dataclasses.replace(
        venv,
        dists=(
            ("torch", "2.10.0"),
            ("nvidia-cuda-runtime-cu12", "12.8.90"),
            ("nvidia-cuda-nvrtc-cu12", "12.8.93"),
            ("nvidia-nvjitlink-cu12", "12.8.93"),
            ("nvidia-cublas-cu12", "12.8.4.1"),
        ),
        torch_version_py="torch/torch-version.py-2.10.0+cu128-x86_64-pypi.py",
        torch_version="2.10.0+cu128",
        torch_arch_flags=fakehost.pypi_torch_arch_flags("2.10.0+cu128"),
    )
    links = ((f"{old}/lib64", lib),)
    return dataclasses.replace(
        base,
        hostname="rtxpro-nvrtc",
        gpus=(
            fakehost.GpuSpec("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0", 97887),
        ),
        driver=fakehost.DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-rtxpro6000-workstation-580.95.05.txt",
            proc_version="580.95.05",
        ),
        venvs=(venv,),
        env={**base.env, "LD_LIBRARY_PATH": f"{old}/lib64"},
        files={"/root/.bashrc": f"export LD_LIBRARY_PATH={old}/lib64\n"},
        lib_files=fakehost.cuda_libs(old, "12.4.127", ("libcudart", "libnvrtc")),
        links=(*links, (f"{lib}/libnvrtc.so", f"{lib}/libnvrtc.so.12")) if plain else links,
    )


def test_probe_records_the_unversioned_libnvrtc_and_the_rule_fires(tmp_path: Path) -> None:
    f = probed(fakehost.build_fake_host(tmp_path / "h", plain_nvrtc(True)))
    ssh = f.contexts[0]
    assert LibFile(f"{OLD124}/libnvrtc.so", f"{OLD124}/libnvrtc.so.12.4.127") in ssh.ld_libs
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    assert finding.severity == "warning"
    assert 'dlopen("libnvrtc.so")' in finding.explanation
    assert "NVRTC 12.4 cannot compile for SM 12.0" in finding.explanation
    assert f"Remove {OLD124} from LD_LIBRARY_PATH where it is set (/root/.bashrc)" in (
        finding.explanation
    )
    assert [(x.id, dict(x.params)) for x in finding.fixes] == [
        ("drop-shadowing-library-path", {"entry": OLD124})
    ]


def test_probe_without_the_cudart_wheel_fires(tmp_path: Path) -> None:
    f = probed(fakehost.build_fake_host(tmp_path / "h", cudart_from_path(False)))
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    assert finding.severity == "critical"
    assert "libnvJitLink 12.1" in finding.title
    assert "/usr/local/cuda-12.1/lib64/libcudart.so.12.1.105, so it does not" in (
        finding.explanation
    )


@pytest.mark.sshd
def test_diagnose_over_real_sshd_fires_and_near_misses_stay_silent(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "nocudart", cudart_from_path(False), ssh=ssh_env.alias),
        entry(tmp_path, "cudart", cudart_from_path(True), ssh=ssh_env.alias),
        entry(tmp_path, "plain", plain_nvrtc(True), ssh=ssh_env.alias),
        entry(tmp_path, "soname", plain_nvrtc(False), ssh=ssh_env.alias),
    )
    assert code == exitcodes.CRITICAL
    got = [{x["id"]: x["severity"] for x in h["findings"] if x["id"] == ID} for h in hosts]
    assert got == [{ID: "critical"}, {}, {ID: "warning"}, {}]
