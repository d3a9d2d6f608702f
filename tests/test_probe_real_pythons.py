"""The probe against real interpreter layouts: pyenv builds, venvs, uv, conda-like prefixes.

The fake hosts elsewhere symlink the test runner's own interpreter, so a packaging quirk of a
real layout is invisible there. Here every interpreter is a real CPython run by the real probe
at its real path (no DT_ROOT), with fake-but-realistic package files in its site dirs. Each
layout is also checked against the interpreter itself: the site dirs the probe computes (it runs
``python -E -S``) must be the ``sys.path`` entries after the stdlib that a normal start of the
same interpreter sets up. Nothing is written outside ``tmp_path``: a "bare" build with its own
site-packages is a copy of a pyenv build's binary in a temp prefix (the stdlib symlinked in).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from real_pythons import (
    MINORS,
    RUN_S,
    STACK,
    SYSTEM_PYTHON,
    TORCH,
    TORCH_VERSION_PY,
    UV_CANDIDATES,
    assert_stack,
    clean_env,
    dist,
    make_venv,
    need_build,
    plant_stack,
    probed,
    real_sites,
    relocated_build,
    run_probe,
    user_site,
    venv_site,
)

# 1. pyenv builds: the build itself, a build with its own site-packages, a venv from each


@pytest.mark.parametrize("minor", MINORS)
def test_pyenv_build_as_installed(minor: str, home: Path) -> None:
    exe = need_build(minor)
    py = probed(exe, home)
    assert py.version is not None and py.version.startswith(minor + "."), py
    assert py.prefix == str(exe.parent.parent), py
    assert py.site_packages == real_sites(exe, home), py
    assert str(exe.parent.parent / "lib" / f"python{minor}" / "site-packages") in py.site_packages


@pytest.mark.parametrize("minor", MINORS)
def test_bare_build_with_its_own_packages(minor: str, tmp_path: Path, home: Path) -> None:
    exe = relocated_build(need_build(minor), tmp_path / "opt" / f"py{minor}")
    site = tmp_path / "opt" / f"py{minor}" / "lib" / f"python{minor}" / "site-packages"
    plant_stack(site)
    py = probed(exe, home)
    assert py.prefix == str(tmp_path / "opt" / f"py{minor}"), py
    assert py.site_packages == (str(site),) == real_sites(exe, home), py
    assert_stack(py)


@pytest.mark.parametrize("minor", MINORS)
def test_venv_from_a_pyenv_build(minor: str, tmp_path: Path, home: Path) -> None:
    python = make_venv(need_build(minor), tmp_path / "venv")
    site = venv_site(tmp_path / "venv", python)
    plant_stack(site)
    py = probed(python, home)
    assert py.version is not None and py.version.startswith(minor + "."), py
    assert py.prefix == str(tmp_path / "venv"), py
    assert py.site_packages == (str(site),) == real_sites(python, home), py
    assert_stack(py)


# 2. system site packages and the user site


def test_system_site_venv_splits_packages_and_the_venv_wins(tmp_path: Path, home: Path) -> None:
    """torch in the base prefix, FlashInfer in both: the venv's FlashInfer is the one imported."""
    base = relocated_build(need_build("3.12"), tmp_path / "base")
    base_site = tmp_path / "base" / "lib" / "python3.12" / "site-packages"
    plant_stack(base_site, flashinfer="0.5.3")
    python = make_venv(base, tmp_path / "venv", "--system-site-packages")
    site = venv_site(tmp_path / "venv", python)
    dist(site, "flashinfer-python", "0.6.8")
    py = probed(python, home)
    assert py.prefix == str(tmp_path / "venv"), py
    assert py.site_packages == (str(site), str(base_site)) == real_sites(python, home), py
    assert (py.torch_version, py.torch_cuda) == TORCH, py
    assert py.packages["flashinfer-python"] == "0.6.8", py
    assert py.packages["nvidia-cuda-runtime"] == STACK["nvidia-cuda-runtime"], py


def test_pyvenv_cfg_without_the_system_site_key_includes_the_system_site(
    tmp_path: Path, home: Path
) -> None:
    """site.venv() reads a pyvenv.cfg with no include-system-site-packages line as "true"
    (hand-written and tool-written cfgs omit it); the probe used to read it as false and missed
    everything installed in the base prefix."""
    base = relocated_build(need_build("3.12"), tmp_path / "base")
    base_site = tmp_path / "base" / "lib" / "python3.12" / "site-packages"
    plant_stack(base_site)
    python = make_venv(base, tmp_path / "venv")
    cfg = tmp_path / "venv" / "pyvenv.cfg"
    lines = cfg.read_text().splitlines()
    cfg.write_text(
        "".join(f"{line}\n" for line in lines if not line.startswith("include-system-site"))
    )
    site = venv_site(tmp_path / "venv", python)
    py = probed(python, home)
    assert py.site_packages == (str(site), str(base_site)) == real_sites(python, home), py
    assert_stack(py)


def test_user_site_of_a_bare_build_comes_first(tmp_path: Path, home: Path) -> None:
    """``pip install --user``: the user site (from HOME, which -E does not hide) precedes the
    prefix's site-packages."""
    exe = relocated_build(need_build("3.12"), tmp_path / "base")
    base_site = tmp_path / "base" / "lib" / "python3.12" / "site-packages"
    dist(base_site, "flashinfer-python", "0.5.3")
    usite = user_site(home, exe)
    plant_stack(usite)
    py = probed(exe, home)
    assert py.site_packages == (str(usite), str(base_site)) == real_sites(exe, home), py
    assert_stack(py)


def test_user_site_counts_in_a_system_site_venv_only(tmp_path: Path, home: Path) -> None:
    base = need_build("3.12")
    usite = user_site(home, base)
    plant_stack(usite)
    shared = make_venv(base, tmp_path / "shared", "--system-site-packages")
    isolated = make_venv(base, tmp_path / "isolated")
    facts = run_probe([shared, isolated], home)
    by_path = {p.path: p for p in facts.pythons}
    with_user = by_path[str(shared)]
    assert with_user.site_packages == real_sites(shared, home), with_user
    assert str(usite) in with_user.site_packages
    assert_stack(with_user)
    alone = by_path[str(isolated)]
    assert (
        alone.site_packages
        == real_sites(isolated, home)
        == (str(venv_site(tmp_path / "isolated", isolated)),)
    ), alone
    assert alone.torch_version is None and not alone.packages, alone


@pytest.mark.skipif(not SYSTEM_PYTHON.is_file(), reason="no /usr/bin/python3")
def test_distro_python_system_site_venv_and_user_site(tmp_path: Path, home: Path) -> None:
    """The distribution's Python (Debian: dist-packages; never written to here): a
    --system-site-packages venv sees its own site, the user site, then the system dirs."""
    python = make_venv(SYSTEM_PYTHON, tmp_path / "venv", "--system-site-packages")
    site = venv_site(tmp_path / "venv", python)
    plant_stack(site)
    usite = user_site(home, python)
    dist(usite, "sglang", "0.5.6")
    py = probed(python, home)
    assert py.prefix == str(tmp_path / "venv"), py
    assert py.site_packages == real_sites(python, home), py
    assert py.site_packages[:2] == (str(site), str(usite)), py
    assert py.packages["sglang"] == "0.5.6", py
    assert (py.torch_version, py.torch_cuda) == TORCH, py
    bare = probed(SYSTEM_PYTHON, home)
    assert bare.site_packages == real_sites(SYSTEM_PYTHON, home), bare
    assert bare.site_packages[0] == str(usite), bare


# 3. uv


def find_uv() -> str | None:
    """uv on PATH, or in the test cache — installed there from the package index the first
    time (about 20 MB, outside the repo), so CI checks uv's venv layout too."""
    found = shutil.which("uv") or next((str(p) for p in UV_CANDIDATES if p.is_file()), None)
    if found:
        return found
    target = UV_CANDIDATES[0].parent.parent
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--target", str(target), "uv"],
        capture_output=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    return next((str(p) for p in UV_CANDIDATES if p.is_file()), None)


@pytest.mark.parametrize("flags", [(), ("--system-site-packages",)])
def test_uv_venv(flags: tuple[str, ...], tmp_path: Path, home: Path) -> None:
    uv = find_uv()
    if uv is None:
        pytest.skip(f"uv is not installed (on PATH or {UV_CANDIDATES[0]})")
    base = relocated_build(need_build("3.12"), tmp_path / "base")
    base_site = tmp_path / "base" / "lib" / "python3.12" / "site-packages"
    dist(base_site, "triton", "3.5.1")
    env = {
        **clean_env(home),
        "UV_OFFLINE": "1",
        "UV_NO_CACHE": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_CONFIG": "1",
    }
    subprocess.run(
        [uv, "venv", "--quiet", "--python", str(base), *flags, str(tmp_path / "venv")],
        check=True,
        capture_output=True,
        env=env,
        timeout=RUN_S,
    )
    assert "uv =" in (tmp_path / "venv" / "pyvenv.cfg").read_text()
    python = tmp_path / "venv" / "bin" / "python"
    site = venv_site(tmp_path / "venv", python)
    plant_stack(site)
    py = probed(python, home)
    assert py.prefix == str(tmp_path / "venv"), py
    assert py.site_packages == real_sites(python, home), py
    assert (py.site_packages[-1] == str(base_site)) == bool(flags), py
    assert (py.torch_version, py.torch_cuda) == TORCH, py
    assert py.flashinfer_version == STACK["flashinfer-python"], py
    assert ("triton" in py.packages) == bool(flags), py


# 4. symlink chains, a renamed venv, a venv whose base is gone


def test_symlink_chain_into_a_venv(tmp_path: Path, home: Path) -> None:
    """venv/bin/python3 → python → the build, and links from outside the venv to it: a link
    outside the venv is not the venv (Python looks for pyvenv.cfg next to the name it was
    started by), and the probe says the same as the interpreter."""
    python = make_venv(need_build("3.12"), tmp_path / "venv")
    site = venv_site(tmp_path / "venv", python)
    plant_stack(site)
    inside = tmp_path / "venv" / "bin" / "python-serve"
    inside.symlink_to("python3")
    (tmp_path / "tools").mkdir()
    outside = tmp_path / "tools" / "py"
    outside.symlink_to(tmp_path / "tools" / "py-link")
    (tmp_path / "tools" / "py-link").symlink_to(inside)
    facts = run_probe([inside, outside], home)
    by_path = {p.path: p for p in facts.pythons}
    assert by_path[str(inside)].prefix == str(tmp_path / "venv")
    assert by_path[str(inside)].site_packages == (str(site),) == real_sites(inside, home)
    assert_stack(by_path[str(inside)])
    assert by_path[str(outside)].site_packages == real_sites(outside, home)
    assert by_path[str(outside)].prefix != str(tmp_path / "venv")


def test_venv_renamed_after_creation(tmp_path: Path, home: Path) -> None:
    """pyvenv.cfg still names the old command line; the venv is where the cfg is now."""
    make_venv(need_build("3.12"), tmp_path / "old")
    (tmp_path / "old").rename(tmp_path / "new")
    python = tmp_path / "new" / "bin" / "python3"
    site = venv_site(tmp_path / "new", python)
    plant_stack(site)
    assert str(tmp_path / "old") in (tmp_path / "new" / "pyvenv.cfg").read_text()
    py = probed(python, home)
    assert py.prefix == str(tmp_path / "new"), py
    assert py.site_packages == (str(site),) == real_sites(python, home), py
    assert_stack(py)


def test_venv_whose_base_python_is_gone(tmp_path: Path, home: Path) -> None:
    """The base Python removed after the venv was made (a pyenv uninstall, a distro upgrade):
    bin/python3 is a dangling link. The probe reports it missing, it does not hang or crash,
    and the other interpreter is still probed."""
    base = relocated_build(need_build("3.12"), tmp_path / "base")
    python = make_venv(base, tmp_path / "venv")
    shutil.rmtree(tmp_path / "base")
    other = make_venv(need_build("3.12"), tmp_path / "other")
    plant_stack(venv_site(tmp_path / "other", other))
    facts = run_probe([python, other], home)
    by_path = {p.path: p for p in facts.pythons}
    assert by_path[str(python)].exists is False, by_path[str(python)]
    assert_stack(by_path[str(other)])


# 5. conda-like prefix


def test_conda_like_env(tmp_path: Path, home: Path) -> None:
    """No pyvenv.cfg: sys.prefix is the env itself (conda-meta/ beside bin/)."""
    env = tmp_path / "miniforge3" / "envs" / "serve"
    python = relocated_build(need_build("3.12"), env)
    (env / "conda-meta").mkdir()
    (env / "conda-meta" / "history").write_text("==> 2026-01-01 00:00:00 <==\n")
    site = env / "lib" / "python3.12" / "site-packages"
    plant_stack(site)
    py = probed(python, home)
    assert py.prefix == str(env), py
    assert py.site_packages == (str(site),) == real_sites(python, home), py
    assert_stack(py)


# 6. .pth files


@pytest.mark.parametrize("minor", ("3.8", "3.12"))
def test_pth_paths_followed_and_import_lines_never_run(
    minor: str, tmp_path: Path, home: Path
) -> None:
    python = make_venv(need_build(minor), tmp_path / "venv")
    site = venv_site(tmp_path / "venv", python)
    plant_stack(site)
    src = tmp_path / "src" / "flashinfer"
    (src / "flashinfer").mkdir(parents=True)
    (src / "flashinfer" / "_build_meta.py").write_text('__version__ = "0.6.9.dev0"\n')
    (src / "flashinfer_python.egg-info").mkdir()
    (src / "flashinfer_python.egg-info" / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: flashinfer-python\nVersion: 0.6.9.dev0\n"
    )
    shutil.rmtree(site / "flashinfer")
    shutil.rmtree(site / "flashinfer_python-0.6.8.dist-info")
    (site / "__editable__.flashinfer_python-0.6.9.dev0.pth").write_text(f"{src}\n")
    (tmp_path / "extra").mkdir()
    marker = tmp_path / "pth-code-ran"
    (site / "zz-extra.pth").write_text(
        f"# a comment\n\nimport os; open({str(marker)!r}, 'w').close()\n../../../../extra\n"
    )
    py = probed(python, home)
    assert not marker.exists(), "the probe ran a .pth import line"
    assert py.site_packages == (str(site), str(src), str(tmp_path / "extra")), py
    assert py.site_packages == real_sites(python, home)
    assert marker.exists()
    assert py.flashinfer_version == "0.6.9.dev0", py
    assert py.packages["flashinfer-python"] == "0.6.9.dev0", py
    assert (py.torch_version, py.torch_cuda) == TORCH, py


# 7. editable installs


def test_editable_installs_through_setuptools_finders(tmp_path: Path, home: Path) -> None:
    """``pip install -e`` of a project setuptools cannot expose with a path line (FlashInfer's
    package-dir mapping, a PyTorch checkout) leaves a finder module with the package→checkout
    MAPPING and a .pth that imports it. The probe used to miss torch/version.py and
    flashinfer/_build_meta.py there (a source-built CUDA torch looked like a CPU build)."""
    editable_wheel = pytest.importorskip("setuptools.command.editable_wheel")
    finder_template = getattr(editable_wheel, "_finder_template", None)
    make_identifier = getattr(editable_wheel, "_make_identifier", None)
    if finder_template is None or make_identifier is None:
        pytest.skip("this setuptools writes its editable finders differently")
    python = make_venv(need_build("3.12"), tmp_path / "venv")
    site = venv_site(tmp_path / "venv", python)
    torch_src = tmp_path / "pytorch" / "torch"
    torch_src.mkdir(parents=True)
    (torch_src / "__init__.py").write_text("")
    (torch_src / "version.py").write_text(
        TORCH_VERSION_PY.read_text().replace(TORCH[0], "2.11.0a0+git70d99e9")
    )
    fi_src = tmp_path / "flashinfer" / "flashinfer"
    fi_src.mkdir(parents=True)
    (fi_src / "__init__.py").write_text("")
    (fi_src / "_build_meta.py").write_text('__version__ = "0.6.9.dev0+g1234abc"\n')
    for dist_name, version, pkg, src in (
        ("torch", "2.11.0a0+git70d99e9", "torch", torch_src),
        ("flashinfer-python", "0.6.9.dev0", "flashinfer", fi_src),
    ):
        dist(site, dist_name, version)
        name = f"{dist_name.replace('-', '_')}-{version.replace('+', '_')}"
        finder = make_identifier(f"__editable__.{name}.finder")
        (site / f"{finder}.py").write_text(finder_template(name, {pkg: str(src)}, {}))
        (site / f"__editable__.{name}.pth").write_text(f"import {finder}; {finder}.install()")
    py = probed(python, home)
    assert py.site_packages == (str(site),), py
    real = subprocess.run(
        [
            str(python),
            "-c",
            "import torch.version as t, flashinfer._build_meta as f;"
            "print(t.__version__, t.cuda, f.__version__)",
        ],
        capture_output=True,
        text=True,
        env=clean_env(home),
        check=True,
        timeout=RUN_S,
    ).stdout.split()
    assert [py.torch_version, py.torch_cuda, py.flashinfer_version] == real, py
    assert real == ["2.11.0a0+git70d99e9", "13.0", "0.6.9.dev0+g1234abc"]
