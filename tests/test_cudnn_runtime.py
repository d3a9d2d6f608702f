"""cuda-library-shadowed for torch 1.x's cuDNN (issue 22, item 5).

Real artifacts, copied in ``tests/fixtures/torch1`` (see its README: wheels, sha256s) and
``tests/fixtures/packaging``:

- torch 1.13.1+cu117 from PyPI: ``libtorch_global_deps.so`` needs ``libcudnn.so.8`` and carries a
  ``DT_RPATH`` naming the wheels' ``nvidia/cudnn/lib`` (searched before ``LD_LIBRARY_PATH``); its
  METADATA pins ``nvidia-cudnn-cu11 (==8.5.0.96)``; ``torch/backends/cudnn/__init__.py`` accepts a
  runtime cuDNN of the same major and a minor at least the build's.
- ``nvidia_cudnn_cu11-8.5.0.96``'s file list (``nvidia/cudnn/lib/libcudnn.so.8`` and the
  sub-libraries it opens).
- torch 1.12.1+cu102, a "fat" wheel: ``DT_RUNPATH $ORIGIN``, ``libcublas.so.10`` and
  ``libcublasLt.so.10`` bundled in ``torch/lib``, and no ``libcudnn`` needed (cuDNN static).

The older cuDNN on ``LD_LIBRARY_PATH`` is a tarball install's ``lib64/libcudnn.so.8.2.1`` with its
soname link. The real probe reads each host, locally and over the real sshd.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from fakehost_runs import diagnose_json, entry, probed

from tui.core import exitcodes
from tui.core.judge.diagnosis import diagnose
from tui.core.rules.cudnn_runtime import compatible
from tui.demo import fakehost

ID = "cuda-library-shadowed"
FIX = "drop-shadowing-library-path"
FIXTURES = Path(__file__).parent / "fixtures"
TORCH1 = FIXTURES / "torch1"
OLD = "/usr/local/cuda-11.3/lib64"
VENV = "/opt/venv"


def _lines(name: str) -> list[str]:
    return (TORCH1 / name).read_text().splitlines()


def cudnn_wheel_files() -> tuple[str, ...]:
    rows = (FIXTURES / "packaging/wheel-filelist-nvidia_cudnn_cu11-8.5.0.96.tsv").read_text()
    return tuple(row.split("\t")[1] for row in rows.splitlines()[1:])


def torch1_host(
    torch: str = "1.13.1", *, cudnn_wheel: bool = False, ld_cudnn: str | None = "8.2.1"
) -> fakehost.FakeHostSpec:
    """4× H100 (the real 570.148.08 capture), a venv with the real torch ``torch`` wheel's
    version.py, METADATA pins and ``libtorch_global_deps.so``, with or without the cuDNN wheel
    it pins, and ~/.bashrc putting a cuDNN ``ld_cudnn`` tarball install first on
    LD_LIBRARY_PATH."""
    local = {"1.13.1": "1.13.1+cu117", "1.12.1": "1.12.1+cu102"}[torch]
    site_files: dict[str, str | Path] = {
        "torch/__init__.py": "",
        "torch/version.py": (TORCH1 / f"torch-version.py-{local}-x86_64-pypi.py").read_text(),
        "torch/lib/libtorch_global_deps.so": TORCH1
        / f"torch-{local}-cp310-manylinux1_x86_64-libtorch_global_deps.so",
    }
    listing = TORCH1 / f"torch-{local}-cp310-manylinux1_x86_64-torch-lib-listing.tsv"
    if listing.exists():  # the fat wheel's bundled libraries (their names; the bytes unread)
        for row in listing.read_text().splitlines()[1:]:
            rel = row.split("\t")[1]
            site_files.setdefault(rel, "")
    requires = {}
    if torch == "1.13.1":
        meta = _lines("torch-1.13.1-METADATA-Requires-Dist.txt")
        requires = {"torch": tuple(line.split(": ", 1)[1] for line in meta)}
    files = cudnn_wheel_files()
    venv = fakehost.VenvSpec(
        path=VENV,
        dists=(("torch", torch), *((("nvidia-cudnn-cu11", "8.5.0.96"),) if cudnn_wheel else ())),
        requires=requires,
        records={"nvidia-cudnn-cu11": files} if cudnn_wheel else {},
        site_files=site_files,
        nvidia_libs=tuple(f for f in files if "/lib/libcudnn" in f) if cudnn_wheel else (),
    )
    base = fakehost.healthy_h100()
    env = dict(base.env)
    if ld_cudnn:
        env["LD_LIBRARY_PATH"] = OLD
    return dataclasses.replace(
        base,
        hostname="h100-torch1",
        venvs=(venv,),
        env=env,
        files={"/root/.bashrc": f"export LD_LIBRARY_PATH={OLD}\n"} if ld_cudnn else {},
        lib_files=(f"{OLD}/libcudnn.so.{ld_cudnn}",) if ld_cudnn else (),
    )


@pytest.mark.parametrize(
    ("built", "runtime", "ok"),
    [
        ("8.5.0.96", "8.2.1", False),
        ("8.5.0.96", "8.6.0", True),
        ("8.5.0.96", "8.5.0", True),
        ("8.5.0.96", "9.1.0", False),
        ("8.5.0.96", "7.6.5", False),
    ],
)
def test_torchs_own_acceptance_test(built: str, runtime: str, ok: bool) -> None:
    assert compatible(built, runtime) is ok


def test_the_probe_reads_torchs_search_path_needs_and_pin(tmp_path: Path) -> None:
    f = probed(fakehost.build_fake_host(tmp_path / "h", torch1_host()))
    (py,) = [p for p in f.pythons if p.source == "inventory"]
    assert py.torch_version == "1.13.1+cu117" and py.torch_cuda == "11.7"
    assert py.torch_lib is not None and py.torch_lib.endswith("/site-packages/torch/lib")
    assert py.torch_rpath == (
        "rpath",
        "$ORIGIN/../../nvidia/cublas/lib:$ORIGIN/../../nvidia/cudnn/lib:"
        "$ORIGIN/../../nvidia/cuda_nvrtc/lib:$ORIGIN",
    )
    assert py.torch_needs == ("libcublas.so.11", "libcudnn.so.8")
    assert 'nvidia-cudnn-cu11 (==8.5.0.96) ; platform_system == "Linux"' in py.torch_requires
    assert py.torch_lib_files == ()

    fat = probed(fakehost.build_fake_host(tmp_path / "fat", torch1_host("1.12.1")))
    (py,) = [p for p in fat.pythons if p.source == "inventory"]
    assert py.torch_rpath == ("runpath", "$ORIGIN")
    assert py.torch_needs == ("libcublas.so.10",)
    assert [p.rsplit("/", 1)[1] for p in py.torch_lib_files] == [
        "libcublas.so.10",
        "libcublasLt.so.10",
    ]


def test_without_the_cudnn_wheel_an_older_cudnn_on_the_path_is_critical(tmp_path: Path) -> None:
    f = probed(fakehost.build_fake_host(tmp_path / "h", torch1_host()))
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    assert finding.severity == "critical"
    assert finding.title == "torch 1.13.1+cu117 loads cuDNN 8.2.1, built with 8.5.0.96"
    text = finding.explanation
    assert "its wheel pins nvidia-cudnn-cu11==8.5.0.96" in text
    took = f"the loader takes {OLD}/libcudnn.so.8 (cuDNN 8.2.1, from LD_LIBRARY_PATH entry {OLD})"
    assert took in text
    assert "compiled against (8, 5, 0) but found runtime version (8, 2, 1)" in text
    assert f"Remove {OLD} from LD_LIBRARY_PATH where it is set (/root/.bashrc)" in text
    assert "or install nvidia-cudnn-cu11==8.5.0.96 into the venv" in text
    (fix,) = [x for x in finding.fixes if x.id == FIX]
    assert dict(fix.params) == {"entry": OLD}
    assert ID in fix.resolves


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("the pinned wheel installed: the RPATH finds it first", dict(cudnn_wheel=True)),
        ("a newer minor on the path: torch accepts it", dict(ld_cudnn="8.6.0")),
        ("no cuDNN on the path", dict(ld_cudnn=None)),
    ],
)
def test_near_misses_stay_silent(tmp_path: Path, name: str, spec: dict) -> None:
    f = probed(fakehost.build_fake_host(tmp_path / "h", torch1_host(**spec)))
    assert [x for x in diagnose(f).findings if x.id == ID] == [], name


def test_the_fat_wheel_with_static_cudnn_ignores_the_path(tmp_path: Path) -> None:
    f = probed(fakehost.build_fake_host(tmp_path / "h", torch1_host("1.12.1", ld_cudnn="7.6.5")))
    assert [x for x in diagnose(f).findings if x.id == ID] == []


@pytest.mark.sshd
def test_diagnose_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "no-wheel", torch1_host(), ssh=ssh_env.alias),
        entry(tmp_path, "wheel", torch1_host(cudnn_wheel=True), ssh=ssh_env.alias),
    )
    assert code == exitcodes.CRITICAL
    shadowed = [[f for f in h["findings"] if f["id"] == ID] for h in hosts]
    assert [len(x) for x in shadowed] == [1, 0]
    assert shadowed[0][0]["fixes"][0]["params"] == {"entry": OLD}
