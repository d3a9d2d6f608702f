"""The probe on a venv made from the distribution's own Python (Debian/Ubuntu patch site.py).

GPU servers run Ubuntu or Debian, and their serving venvs are made with ``/usr/bin/python3 -m
venv``. That Python's ``site.getsitepackages(...)`` answers ``dist-packages`` unless
``site.venv()`` already ran — and the probe runs with ``-S``, so it has not. The probe must still
find the venv's ``site-packages`` and the torch and FlashInfer in it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from probes import probe_env, probe_script
from tui.core.facts.build import facts_from_output

SYSTEM_PYTHON = Path("/usr/bin/python3")


def _is_debian_patched(python: Path) -> bool:
    if not python.exists():
        return False
    out = subprocess.run(
        [str(python), "-E", "-S", "-c", "import site; print(site.getsitepackages())"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return out.returncode == 0 and "dist-packages" in out.stdout


pytestmark = pytest.mark.skipif(
    not _is_debian_patched(SYSTEM_PYTHON),
    reason="/usr/bin/python3 is not a Debian/Ubuntu-patched Python",
)


def _make_venv(where: Path) -> tuple[Path, Path]:
    subprocess.run(
        [str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(where)], check=True, timeout=120
    )
    version = subprocess.run(
        [str(where / "bin" / "python3"), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.strip()
    site = where / "lib" / f"python{version}" / "site-packages"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "version.py").write_text(
        "__version__ = '2.9.1+cu130'\ncuda: Optional[str] = '13.0'\n"
    )
    dist = site / "flashinfer_python-0.6.8.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: flashinfer-python\nVersion: 0.6.8\n"
    )
    return where / "bin" / "python3", site


def test_a_distro_python_venv_shows_its_torch_and_flashinfer(tmp_path: Path) -> None:
    python, site = _make_venv(tmp_path / "venv")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"}
    env.update(probe_env([str(python)], step_timeout_s=10))
    proc = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    facts = facts_from_output(proc.stdout)
    py = next(p for p in facts.pythons if p.path == str(python))
    assert py.prefix == str(tmp_path / "venv")
    assert py.site_packages == (str(site),)
    assert (py.torch_version, py.torch_cuda, py.flashinfer_version) == (
        "2.9.1+cu130",
        "13.0",
        "0.6.8",
    ), (py, sys.executable)
