"""The probe finds the interpreter of a running serving process, as that process itself sees it:
how it was started (a venv's python, a symlink, ``python3 -m`` on PATH, a moved venv), its
PYTHONPATH, its own HOME's user site, a checkout it started in and its script's directory. The
stand-in server is a real interpreter that leaves its ``sys.path`` in a file and sleeps; the probe's
answer must equal that ``sys.path``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from real_pythons import (
    RUN_S,
    TORCH,
    assert_stack,
    clean_env,
    dist,
    make_venv,
    need_build,
    plant_stack,
    relocated_build,
    run_probe,
    user_site,
    venv_site,
)

from tui.core.facts import Facts, PythonEnv

# the stand-in server: leaves its sys.path in syspath-PID.json (in its working directory)
SLEEPER = """import json, os, sys, time
tmp = "syspath-%d.tmp" % os.getpid()
with open(tmp, "w") as fh:
    json.dump(sys.path, fh)
os.rename(tmp, "syspath-%d.json" % os.getpid())
time.sleep(120)
"""


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
