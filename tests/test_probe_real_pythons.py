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

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from probes import probe_env, probe_script
from tui.core.facts import Facts, PythonEnv
from tui.core.facts.build import facts_from_output

PYENV = Path(os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))) / "versions"
MINORS = ("3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13")
SYSTEM_PYTHON = Path("/usr/bin/python3")
UV_CANDIDATES = (Path.home() / ".cache" / "detective-tui-tests" / "uv" / "bin" / "uv",)
TORCH_VERSION_PY = (
    Path(__file__).resolve().parent.parent
    / "tui/demo/fixtures/torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py"
)
TORCH = ("2.11.0+cu130", "13.0")
STACK = {
    "torch": "2.11.0+cu130",
    "flashinfer-python": "0.6.8",
    "nvidia-cuda-runtime": "13.0.96",
    "nvidia-cuda-nvrtc": "13.0.88",
}
RUN_S = 60
# the stand-in server: leaves its sys.path in syspath-PID.json (in its working directory)
SLEEPER = """import json, os, sys, time
tmp = "syspath-%d.tmp" % os.getpid()
with open(tmp, "w") as fh:
    json.dump(sys.path, fh)
os.rename(tmp, "syspath-%d.json" % os.getpid())
time.sleep(120)
"""


def pyenv_build(minor: str) -> Path | None:
    """The newest pyenv build of a minor version (its bin/pythonX.Y), if installed."""
    builds = sorted(
        PYENV.glob(f"{minor}.*"),
        key=lambda p: tuple(int(n) if n.isdigit() else -1 for n in p.name.split(".")),
    )
    for build in reversed(builds):
        exe = build / "bin" / f"python{minor}"
        if build.name.replace(".", "").isdigit() and exe.is_file():
            return exe
    return None


def need_build(minor: str) -> Path:
    exe = pyenv_build(minor)
    if exe is None:
        pytest.skip(f"no pyenv CPython {minor} under {PYENV}")
    return exe


def clean_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C", "HOME": str(home)}


def run_probe(pythons: Sequence[Path | str], home: Path) -> Facts:
    env = clean_env(home)
    env.update(probe_env([str(p) for p in pythons], step_timeout_s=20))
    proc = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=RUN_S
    )
    assert proc.returncode == 0, proc.stderr
    return facts_from_output(proc.stdout)


def probed(python: Path | str, home: Path) -> PythonEnv:
    facts = run_probe([python], home)
    return next(p for p in facts.pythons if p.path == str(python) and p.source == "inventory")


def real_sites(python: Path | str, home: Path) -> tuple[str, ...]:
    """What the interpreter itself puts on sys.path after the stdlib (site.py, .pth code run)."""
    proc = subprocess.run(
        [str(python), "-c", "import json, sys; print(json.dumps(sys.path))"],
        capture_output=True,
        text=True,
        env=clean_env(home),
        cwd=str(home),
        timeout=RUN_S,
        check=True,
    )
    path = json.loads(proc.stdout.splitlines()[-1])
    dynload = max(i for i, p in enumerate(path) if p.endswith("lib-dynload"))
    return tuple(path[dynload + 1 :])


def version_of(python: Path | str) -> str:
    return subprocess.run(
        [str(python), "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=RUN_S,
    ).stdout.strip()


def make_venv(base: Path | str, where: Path, *flags: str) -> Path:
    subprocess.run(
        [str(base), "-m", "venv", "--without-pip", *flags, str(where)],
        check=True,
        capture_output=True,
        timeout=RUN_S,
    )
    return where / "bin" / "python3"


def venv_site(venv: Path, python: Path | str) -> Path:
    return venv / "lib" / f"python{version_of(python)}" / "site-packages"


def relocated_build(build_exe: Path, prefix: Path) -> Path:
    """A real CPython whose sys.prefix is ``prefix``: the build's binary copied into
    prefix/bin, its stdlib symlinked entry by entry, and an empty site-packages of its own."""
    minor = build_exe.name[len("python") :]
    stdlib = build_exe.parent.parent / "lib" / f"python{minor}"
    lib = prefix / "lib" / f"python{minor}"
    lib.mkdir(parents=True)
    for entry in stdlib.iterdir():
        if entry.name != "site-packages":
            (lib / entry.name).symlink_to(entry)
    (lib / "site-packages").mkdir()
    (prefix / "bin").mkdir()
    exe = prefix / "bin" / build_exe.name
    shutil.copy2(build_exe, exe)
    (prefix / "bin" / "python3").symlink_to(exe.name)
    return prefix / "bin" / "python3"


def dist(site: Path, name: str, version: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: x\n\nlong text\n"
    )


def plant_stack(site: Path, flashinfer: str = STACK["flashinfer-python"]) -> None:
    """A CUDA 13 torch wheel, FlashInfer and two nvidia-* wheels, as pip leaves them."""
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "version.py").write_text(TORCH_VERSION_PY.read_text())
    (site / "flashinfer").mkdir()
    (site / "flashinfer" / "_build_meta.py").write_text(f'__version__ = "{flashinfer}"\n')
    for name, version in STACK.items():
        dist(site, name, flashinfer if name == "flashinfer-python" else version)


def assert_stack(
    py: PythonEnv, flashinfer: str = STACK["flashinfer-python"], extra: Mapping[str, str] = {}
) -> None:
    assert py.error is None, py
    assert (py.torch_version, py.torch_cuda) == TORCH, py
    assert py.flashinfer_version == flashinfer, py
    assert dict(py.packages) == {**STACK, "flashinfer-python": flashinfer, **extra}, py


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A HOME without a user site, so root's own ~/.local never leaks into a result."""
    h = tmp_path / "home"
    h.mkdir()
    return h


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


def user_site(home: Path, python: Path | str) -> Path:
    site = home / ".local" / "lib" / f"python{version_of(python)}" / "site-packages"
    site.mkdir(parents=True)
    return site


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


# 7. the interpreter of a running serving process


@pytest.fixture
def serving_app(tmp_path: Path) -> Iterator[tuple[Path, list[subprocess.Popen[bytes]]]]:
    """A directory with an ``sglang.launch_server`` module that only sleeps; every process
    started from it is killed at teardown."""
    app = tmp_path / "app"
    (app / "sglang").mkdir(parents=True)
    (app / "sglang" / "__init__.py").write_text("")
    (app / "sglang" / "launch_server.py").write_text(SLEEPER)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        yield app, procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=RUN_S)


def serve(
    procs: list[subprocess.Popen[bytes]],
    argv0: str,
    cwd: Path,
    home: Path,
    path: str,
    **env: str,
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [argv0, "-m", "sglang.launch_server", "--model-path", "m", "--port", "30000"],
        cwd=str(cwd),
        env={**clean_env(home), "PATH": path, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    procs.append(proc)
    return proc


def process_sites(app: Path, proc: subprocess.Popen[bytes]) -> tuple[str, ...]:
    """The running server's own sys.path, less the stdlib and the entries that do not exist (a
    PYTHONPATH entry may name a missing dir; the probe lists only real ones)."""
    done = app / f"syspath-{proc.pid}.json"
    deadline = time.monotonic() + RUN_S
    while not done.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"the stand-in server wrote no {done.name} in {RUN_S} s")
        try:
            code = proc.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            continue
        pytest.fail(f"the stand-in server exited {code} before it started")
    path = json.loads(done.read_text())
    stdlib = next(i for i, p in enumerate(path) if p.endswith(".zip"))
    dynload = max(i for i, p in enumerate(path) if p.endswith("lib-dynload"))
    return tuple(p for p in path[:stdlib] + path[dynload + 1 :] if os.path.isdir(p))


def process_python(facts: Facts, proc: subprocess.Popen[bytes]) -> PythonEnv:
    label = f"pid {proc.pid} sglang.launch_server"
    return next(p for p in facts.pythons if p.source == "process" and p.context == label)


def test_serving_process_interpreter_found_four_ways(
    serving_app: tuple[Path, list[subprocess.Popen[bytes]]], home: Path
) -> None:
    """Started by absolute path, by paths relative to its working directory (the probe used
    to fall back to /proc/PID/exe — the venv's *base* Python, without torch or FlashInfer),
    and by a bare name looked up on the process's own PATH."""
    app, procs = serving_app
    python = make_venv(need_build("3.12"), app / ".venv")
    site = venv_site(app / ".venv", python)
    plant_stack(site)
    system_path = os.environ.get("PATH", "/usr/bin:/bin")
    venv_path = f"{app / '.venv' / 'bin'}:{system_path}"
    expected = {
        serve(procs, str(python), app, home, system_path): str(python),
        serve(procs, ".venv/bin/python3", app, home, system_path): str(python),
        serve(procs, "./.venv/bin/python3", app, home, system_path): str(python),
        serve(procs, "../app/.venv/bin/python3", app, home, system_path): (
            f"{app}/../app/.venv/bin/python3"
        ),
        serve(procs, "python3", app, home, venv_path): str(python),
    }
    facts = run_probe([], home)
    for proc, path in expected.items():
        py = process_python(facts, proc)
        assert py.path == path, py
        assert py.prefix == str(app / ".venv"), py
        # sys.path[0] is the app dir (-m), listed since it holds the sglang package
        assert py.site_packages == (str(app), str(site)) == process_sites(app, proc), py
        assert_stack(py)


def test_serving_process_pythonpath_shadows_the_venv(
    serving_app: tuple[Path, list[subprocess.Popen[bytes]]], tmp_path: Path, home: Path
) -> None:
    """PYTHONPATH=src (a FlashInfer checkout, relative to the server's working directory) comes
    before site-packages in the server, so its FlashInfer is the one imported. The probe runs
    interpreters with -E and used to report the venv's FlashInfer for the server too. The
    same interpreter from the inventory (no PYTHONPATH) keeps the venv's."""
    app, procs = serving_app
    python = make_venv(need_build("3.12"), tmp_path / "venv")
    site = venv_site(tmp_path / "venv", python)
    plant_stack(site)
    src = app / "src"
    (src / "flashinfer").mkdir(parents=True)
    (src / "flashinfer" / "_build_meta.py").write_text('__version__ = "0.6.9.dev0"\n')
    dist(src, "flashinfer-python", "0.6.9.dev0")
    system_path = os.environ.get("PATH", "/usr/bin:/bin")
    proc = serve(procs, str(python), app, home, system_path, PYTHONPATH=f"src:{tmp_path}/none")
    plain = serve(procs, str(python), app, home, system_path)
    facts = run_probe([python], home)
    served = process_python(facts, proc)
    assert served.site_packages == (str(app), str(src), str(site)) == process_sites(app, proc)
    assert served.flashinfer_version == "0.6.9.dev0", served
    assert served.packages["flashinfer-python"] == "0.6.9.dev0", served
    assert (served.torch_version, served.torch_cuda) == TORCH, served
    inventory = next(p for p in facts.pythons if p.source == "inventory")
    assert process_python(facts, plain).site_packages == (str(app), str(site))
    assert inventory.site_packages == (str(site),), inventory
    for py in (process_python(facts, plain), inventory):
        assert_stack(py)


def test_serving_process_user_site_from_its_own_home(
    serving_app: tuple[Path, list[subprocess.Popen[bytes]]], tmp_path: Path, home: Path
) -> None:
    """A server run with another HOME (a service account) imports the torch in *its*
    ~/.local; PYTHONNOUSERSITE turns that off and PYTHONUSERBASE moves it. The probe's own
    HOME used to decide."""
    app, procs = serving_app
    base = relocated_build(need_build("3.12"), tmp_path / "base")
    base_site = tmp_path / "base" / "lib" / "python3.12" / "site-packages"
    dist(base_site, "triton", "3.5.1")
    svc_home = tmp_path / "svc"
    usite = user_site(svc_home, base)
    plant_stack(usite)
    userbase = tmp_path / "userbase"
    ub_site = userbase / "lib" / "python3.12" / "site-packages"
    plant_stack(ub_site, flashinfer="0.6.7")
    system_path = os.environ.get("PATH", "/usr/bin:/bin")
    own = serve(procs, str(base), app, svc_home, system_path)
    off = serve(procs, str(base), app, svc_home, system_path, PYTHONNOUSERSITE="1")
    moved = serve(procs, str(base), app, svc_home, system_path, PYTHONUSERBASE=str(userbase))
    facts = run_probe([], home)
    served = process_python(facts, own)
    assert served.site_packages == (str(app), str(usite), str(base_site)) == process_sites(app, own)
    assert_stack(served, extra={"triton": "3.5.1"})
    py_off = process_python(facts, off)
    assert py_off.site_packages == (str(app), str(base_site)) == process_sites(app, off), py_off
    assert py_off.torch_version is None and dict(py_off.packages) == {"triton": "3.5.1"}
    py_moved = process_python(facts, moved)
    assert (
        py_moved.site_packages
        == (str(app), str(ub_site), str(base_site))
        == process_sites(app, moved)
    )
    assert py_moved.flashinfer_version == "0.6.7", py_moved


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


def test_serving_process_started_inside_a_checkout(
    serving_app: tuple[Path, list[subprocess.Popen[bytes]]], tmp_path: Path, home: Path
) -> None:
    """``cd ~/flashinfer && python -m sglang.launch_server``: sys.path[0] is the working
    directory, so the checkout's FlashInfer shadows the venv's. -P and -I drop sys.path[0];
    -E and -I ignore PYTHONPATH; -s (and -I) the user site."""
    app, procs = serving_app
    python = make_venv(need_build("3.12"), tmp_path / "venv", "--system-site-packages")
    site = venv_site(tmp_path / "venv", python)
    plant_stack(site)
    shutil.copytree(app / "sglang", site / "sglang")
    checkout = tmp_path / "flashinfer"
    (checkout / "flashinfer").mkdir(parents=True)
    (checkout / "flashinfer" / "_build_meta.py").write_text('__version__ = "0.6.9.dev0+gabc"\n')
    other = tmp_path / "other"
    dist(other, "sgl-kernel", "0.3.20")
    usite = user_site(home, python)
    dist(usite, "triton", "3.5.1")
    path = os.environ.get("PATH", "/usr/bin:/bin")
    pyenv_site = str(need_build("3.12").parent.parent / "lib" / "python3.12" / "site-packages")

    def start(*flags: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [str(python), *flags, "-m", "sglang.launch_server", "--port", "30000"],
            cwd=str(checkout),
            env={**clean_env(home), "PATH": path, "PYTHONPATH": str(other)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        procs.append(proc)
        return proc

    expected = {
        (): (str(checkout), str(other), str(site), str(usite), pyenv_site),
        ("-P",): (str(other), str(site), str(usite), pyenv_site),
        ("-E",): (str(checkout), str(site), str(usite), pyenv_site),
        ("-s",): (str(checkout), str(other), str(site), pyenv_site),
        ("-I",): (str(site), pyenv_site),
        ("-sE",): (str(checkout), str(site), pyenv_site),
    }
    started = {flags: start(*flags) for flags in expected}
    facts = run_probe([], home)
    for flags, proc in started.items():
        py = process_python(facts, proc)
        assert py.site_packages == expected[flags] == process_sites(checkout, proc), (flags, py)
        in_checkout = "P" not in "".join(flags) and "I" not in "".join(flags)
        assert py.flashinfer_version == ("0.6.9.dev0+gabc" if in_checkout else "0.6.8"), py
        assert ("sgl-kernel" in py.packages) == (str(other) in expected[flags]), py
        assert ("triton" in py.packages) == (str(usite) in expected[flags]), py


@pytest.mark.parametrize("relative", [True, False])
def test_serving_script_directory_comes_first(
    relative: bool,
    serving_app: tuple[Path, list[subprocess.Popen[bytes]]],
    tmp_path: Path,
    home: Path,
) -> None:
    """``python serve.py`` (or /abs/path/serve.py): sys.path[0] is the script's directory, and a
    torch checkout there shadows the venv's torch."""
    _, procs = serving_app
    python = make_venv(need_build("3.12"), tmp_path / "venv")
    site = venv_site(tmp_path / "venv", python)
    plant_stack(site)
    work = tmp_path / "work"
    (work / "torch").mkdir(parents=True)
    (work / "torch" / "version.py").write_text("__version__ = '2.12.0a0+gitdead'\ncuda = None\n")
    (work / "serve.py").write_text(SLEEPER)
    script = "work/serve.py" if relative else str(work / "serve.py")
    proc = subprocess.Popen(
        [str(python), script, "--port", "30000"],
        cwd=str(tmp_path),
        env=clean_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    procs.append(proc)
    facts = run_probe([], home)
    py = next(p for p in facts.pythons if p.context == f"pid {proc.pid} serve.py")
    assert py.site_packages == (str(work), str(site)) == process_sites(tmp_path, proc), py
    assert (py.torch_version, py.torch_cuda) == ("2.12.0a0+gitdead", None), py
