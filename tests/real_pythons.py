"""Real interpreters for the probe's tests: pyenv builds (a "bare" build is a copy of one's binary
in a temp prefix, the stdlib symlinked in), venvs made by them, fake-but-realistic package files in
their site dirs, and the probe run at their real paths (no DT_ROOT). ``real_sites`` is what a
normal start of the interpreter puts on ``sys.path`` after the stdlib, to check the probe against.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
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


def user_site(home: Path, python: Path | str) -> Path:
    site = home / ".local" / "lib" / f"python{version_of(python)}" / "site-packages"
    site.mkdir(parents=True)
    return site
