"""cuDNN 9's sub-libraries in cuda-library-shadowed (issue 21, item 3's last bullet).

The wheels' file lists are real: ``tests/fixtures/packaging/wheel-filelist-nvidia_cudnn_cu13-
9.20.0.48.tsv``, ``…_cu13-9.24.0.43.tsv`` and ``…_cu12-9.10.2.21.tsv`` are the zip directories of
``nvidia_cudnn_cu13-9.20.0.48-py3-none-manylinux_2_27_x86_64.whl`` (sha256 0c45dd8e…),
``nvidia_cudnn_cu13-9.24.0.43-…`` (71f181cd…) and ``nvidia_cudnn_cu12-9.10.2.21-…`` (949452be…),
fetched with ``pip download --no-deps``. The 9.20.0.48 wheel — the one torch 2.12 and 2.13 pin
(``../shared/fixtures/torch/torch-pypi-requires-dist-cuda-deps.txt``) — ships no
``libcudnn_engines_tensor_ir.so.9``, which its ``libcudnn_graph.so.9`` opens by name
(pytorch/pytorch#187824, #188892, #185512): the host's own cuDNN (NVIDIA's apt package
``libcudnn9-cuda-12`` 9.23.2 in the thread) answers from ld.so.cache, and cuDNN stops with
``CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH``. The probe runs for real on fake hosts; ld.so.cache
is built by this machine's real ``ldconfig -r`` over a library compiled with the real soname.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakehost_runs import diagnose_json, entry, probed

from tui.core import exitcodes
from tui.core.facts import Facts
from tui.core.judge.diagnosis import diagnose
from tui.core.judge.whatif import apply_fix
from tui.core.rules.evaluate import evaluate
from tui.core.tables import cudnn_sublibs
from tui.demo import fakehost

ID = "cuda-library-shadowed"
FILELISTS = Path(__file__).parent / "fixtures" / "packaging"
SYSTEM = "/usr/lib/x86_64-linux-gnu"
TENSOR_IR = "libcudnn_engines_tensor_ir.so.9"


def filelist(dist: str, version: str) -> tuple[str, ...]:
    name = f"wheel-filelist-{dist.replace('-', '_')}-{version}.tsv"
    rows = (FILELISTS / name).read_text().splitlines()[1:]
    return tuple(row.split("\t")[1] for row in rows)


def wheel_libs(dist: str, version: str) -> tuple[str, ...]:
    return tuple(p for p in filelist(dist, version) if p.startswith("nvidia/cudnn/lib/lib"))


@pytest.mark.parametrize(
    ("dist", "version"),
    [
        ("nvidia-cudnn-cu12", "9.10.2.21"),
        ("nvidia-cudnn-cu13", "9.20.0.48"),
        ("nvidia-cudnn-cu13", "9.24.0.43"),
    ],
)
def test_the_table_ships_what_the_real_wheels_ship(dist: str, version: str) -> None:
    row = cudnn_sublibs.release_for(version)
    assert row is not None
    shipped = {Path(p).name.split(".so")[0] for p in wheel_libs(dist, version)}
    assert shipped == {"libcudnn", *row.ships}
    assert version in row.source


def test_versions_outside_cudnn_9_are_not_guessed() -> None:
    assert cudnn_sublibs.release_for("8.9.7.29") is None
    assert cudnn_sublibs.release_for("9.0.0.312") is None
    assert cudnn_sublibs.release_for("9.5.1.17") is cudnn_sublibs.RELEASES[0]


def cudnn_host(
    cudnn: tuple[str, str],
    torch: str = "2.12.0+cu130",
    *,
    ld: str | None = None,
    ld_files: tuple[str, ...] = (),
) -> fakehost.FakeHostSpec:
    """ct200's 8× RTX PRO 6000 on 580.95.05 with torch ``torch`` and the real file list of the
    cuDNN wheel ``cudnn`` installed; ``ld``: a LD_LIBRARY_PATH directory holding ``ld_files``."""
    base = fakehost.nvrtc_shadowed_server() if torch.startswith("2.8") else None
    spec = base or fakehost.reference_ct200()
    (venv,) = spec.venvs[:1]
    dist, version = cudnn
    cu13 = torch.endswith("cu130")
    venv = replace(
        venv,
        dists=(("torch", torch.split("+")[0]), (dist, version)),
        records={dist: filelist(dist, version)},
        nvidia_libs=wheel_libs(dist, version),
        torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py"
        if cu13
        else "torch/torch-version.py-2.8.0+cu128-x86_64-pypi.py",
        torch_version=torch,
        torch_arch_flags=fakehost.pypi_torch_arch_flags(torch),
        flashinfer=None,
    )
    env = fakehost.ssh_env(f"{venv.path}/bin:/usr/local/cuda/bin", CUDA_HOME="/usr/local/cuda")
    if ld:
        env["LD_LIBRARY_PATH"] = ld
    return replace(
        spec,
        hostname="cudnn-mixed",
        venvs=(venv,),
        processes=(),
        env=env,
        files={"/root/.bashrc": f"export LD_LIBRARY_PATH={ld}\n"} if ld else {},
        lib_files=ld_files,
        links=(),
    )


def with_system_cudnn(root: Path, version: str, stems: tuple[str, ...]) -> None:
    """The host's own cuDNN in ld.so.cache: libraries with the real sonames, compiled here,
    in /usr/lib/x86_64-linux-gnu, the cache built by the real ``ldconfig -r``, and an
    ``sbin/ldconfig`` that reads that cache (as tests/test_ldcache_slow.py)."""
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.access(p, os.X_OK)), None
    )
    cc = shutil.which("cc")
    if ldconfig is None or cc is None:
        pytest.skip("needs ldconfig and cc")
    lib = root / SYSTEM.lstrip("/")
    lib.mkdir(parents=True, exist_ok=True)
    src = root / "tmp-empty.c"
    src.write_text("int cudnn_sub_library_stand_in;\n")
    for stem in stems:
        out = lib / f"{stem}.so.{version}"
        subprocess.run(
            [cc, "-shared", "-fPIC", f"-Wl,-soname,{stem}.so.9", "-o", str(out), str(src)],
            check=True,
        )
    src.unlink()
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc" / "ld.so.conf").write_text(SYSTEM + "\n")
    made = subprocess.run([ldconfig, "-r", str(root)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"ldconfig -r cannot build a cache here: {made.stderr.strip()}")
    wrapper = root / "sbin" / "ldconfig"
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text(f'#!/bin/sh\nexec {ldconfig} -C "${{0%/*}}/../etc/ld.so.cache" "$@"\n')
    wrapper.chmod(0o755)


def probed_host(tmp_path: Path, spec: fakehost.FakeHostSpec, system: str | None = None) -> Facts:
    fake = fakehost.build_fake_host(tmp_path / "h", spec)
    if system:
        with_system_cudnn(fake.root, system, ("libcudnn_engines_tensor_ir", "libcudnn_graph"))
    return probed(fake)


def shadowed(f: Facts) -> list:
    return [x for x in evaluate(f)[0] if x.id == ID]


def test_the_9_20_wheel_gets_tensor_ir_from_the_systems_cudnn(tmp_path: Path) -> None:
    """pytorch#187824's host: torch 2.12 (+cu130, which preloads cuDNN's frontend itself), the
    9.20.0.48 wheel it pins, and the system's cuDNN 9.23.2 in ld.so.cache."""
    f = probed_host(tmp_path, cudnn_host(("nvidia-cudnn-cu13", "9.20.0.48")), "9.23.2")
    assert any(c.path == f"{SYSTEM}/{TENSOR_IR}" for c in f.ld_cache)
    (py,) = [p for p in f.pythons if p.source == "inventory"]
    assert any(p.endswith("nvidia/cudnn/lib/libcudnn_graph.so.9") for p in py.cuda_libs)
    assert any(d == "nvidia-cudnn-cu13" for _, d in py.lib_owners)
    (x,) = shadowed(f)
    assert x.severity == "critical"
    assert x.title == (
        f"cuDNN 9.20.0.48 loads libcudnn_engines_tensor_ir 9.23.2 from {SYSTEM}, not its own"
    )
    assert (
        f"libcudnn_graph.so.9 of nvidia-cudnn-cu13 9.20.0.48 opens {TENSOR_IR} by name; the "
        "nvidia-cudnn-cu13 9.20.0.48 wheel does not ship it" in x.explanation
    )
    assert f"from ld.so.cache: {SYSTEM}/{TENSOR_IR} (cuDNN 9.23.2)" in x.explanation
    assert "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH" in x.explanation
    assert f"`dpkg -S {SYSTEM}/{TENSOR_IR}`" in x.explanation
    assert "nvidia_cudnn_cu13-9.24.0.43" in x.explanation  # the release read that ships it
    # the graph library is the wheel's own (it ships one), whatever the cache holds
    assert "libcudnn_graph 9.23.2" not in x.explanation


def test_the_wheel_that_ships_it_and_the_same_release_are_silent(tmp_path: Path) -> None:
    full = probed_host(tmp_path / "a", cudnn_host(("nvidia-cudnn-cu13", "9.24.0.43")), "9.23.2")
    assert any(c.path.endswith(TENSOR_IR) for c in full.ld_cache)
    assert shadowed(full) == []
    same = probed_host(tmp_path / "b", cudnn_host(("nvidia-cudnn-cu13", "9.20.0.48")), "9.20.0")
    assert shadowed(same) == []


OLD = "/usr/local/cuda-12.4/targets/x86_64-linux/lib"
ALL_91 = tuple(
    f"{OLD}/{stem}.so.9.1.0"
    for stem in ("libcudnn", *cudnn_sublibs.RELEASES[0].ships, "libcudnn_engines_tensor_ir")
)


def ld_host(version: str) -> fakehost.FakeHostSpec:
    """torch 2.8.0+cu128 with the 9.10.2.21 wheel it pins, and ~/.bashrc putting a CUDA 12.4
    toolkit holding a cuDNN ``version`` tarball first on LD_LIBRARY_PATH."""
    files = tuple(p.replace("9.1.0", version) for p in ALL_91)
    return cudnn_host(("nvidia-cudnn-cu12", "9.10.2.21"), "2.8.0+cu128", ld=OLD, ld_files=files)


def test_ld_library_path_comes_before_the_runpath_of_both_loaders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """9.10's frontend and graph both have a RUNPATH: every sub-library comes from
    LD_LIBRARY_PATH, though the wheel has them all. The fix drops the entry and resolves it;
    the same cuDNN release there is silent."""
    code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "mixed", ld_host("9.1.0")),
        entry(tmp_path, "same", ld_host("9.10.2")),
    )
    assert code == exitcodes.CRITICAL
    assert [[x["id"] for x in h["findings"]] for h in hosts] == [[ID], []]
    (x,) = hosts[0]["findings"]
    assert x["severity"] == "critical"
    opened = cudnn_sublibs.RELEASES[0].frontend_opens + cudnn_sublibs.RELEASES[0].graph_opens
    for stem in opened:
        assert (
            f"{OLD}/{stem}.so.9: cuDNN 9.1.0 (wheel nvidia-cudnn-cu12 9.10.2.21)" in x["evidence"]
        )
    assert "which LD_LIBRARY_PATH precedes" in x["explanation"]
    assert "libcudnn_engines_tensor_ir" not in x["explanation"]  # 9.10 never opens it
    (fix,) = x["fixes"]
    assert (fix["id"], fix["params"]) == ("drop-shadowing-library-path", {"entry": OLD})


def test_the_9_24_frontend_has_an_rpath(tmp_path: Path) -> None:
    """9.24.0.43's libcudnn.so.9 has DT_RPATH $ORIGIN: what it opens stays the wheel's; what
    libcudnn_graph opens (RUNPATH) still comes from LD_LIBRARY_PATH."""
    spec = ld_host("9.1.0")
    (venv,) = spec.venvs
    venv = replace(
        venv,
        dists=(("torch", "2.8.0"), ("nvidia-cudnn-cu13", "9.24.0.43")),
        records={"nvidia-cudnn-cu13": filelist("nvidia-cudnn-cu13", "9.24.0.43")},
        nvidia_libs=wheel_libs("nvidia-cudnn-cu13", "9.24.0.43"),
    )
    f = probed_host(tmp_path, replace(spec, venvs=(venv,)))
    (x,) = shadowed(f)
    row = cudnn_sublibs.release_for("9.24.0.43")
    assert row is not None and row.frontend_rpath
    for stem in row.graph_opens:
        assert f"{OLD}/{stem}.so.9: cuDNN 9.1.0 (wheel nvidia-cudnn-cu13 9.24.0.43)" in x.evidence
    for stem in row.frontend_opens:
        assert not any(e.startswith(f"{OLD}/{stem}.so.9") for e in x.evidence), stem
    fixed = apply_fix(f, "drop-shadowing-library-path", {"entry": OLD}, x.python)
    assert [y for y in diagnose(fixed).findings if y.id == ID] == []


def test_loaded_beats_installed(tmp_path: Path) -> None:
    """A running server that has mapped a sub-library from elsewhere: that one is reported,
    whatever the loader would pick now."""
    f = probed_host(tmp_path, cudnn_host(("nvidia-cudnn-cu13", "9.24.0.43")))
    assert shadowed(f) == []
    (py,) = [p for p in f.pythons if p.source == "inventory"]
    ssh = f.contexts[0]
    own = next(p for p in py.cuda_libs if p.endswith("/libcudnn.so.9"))
    server = dataclasses.replace(
        ssh,
        kind="process",
        label="pid 4242 python",
        pid=4242,
        mapped_libs=(own, f"/opt/cudnn/lib/{TENSOR_IR}.23.2"),
    )
    pys = (*f.pythons, dataclasses.replace(py, source="process", context=server.label))
    (x,) = shadowed(dataclasses.replace(f, contexts=(ssh, server), pythons=pys))
    assert "pid 4242 python has /opt/cudnn/lib/libcudnn_engines_tensor_ir.so.9.23.2 mapped" in (
        x.explanation
    )


@pytest.mark.sshd
def test_over_real_sshd(ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, hosts = diagnose_json(
        tmp_path, capsys, entry(tmp_path, "mixed", ld_host("9.1.0"), ssh=ssh_env.alias)
    )
    assert code == exitcodes.CRITICAL
    assert [x["id"] for x in hosts[0]["findings"]] == [ID]
