"""A throwaway venv in the test cache (never the repo) with the real fleet engines from the
package index: ClusterShell (``clush``, ``nodeset``), ansible-core (``ansible``,
``ansible-inventory``, ``ansible-playbook``) and ansible-runner. Used by the slow tests only.
Built once, reused while the three still import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CACHE = Path.home() / ".cache" / "detective-tui-tests"
VENV = CACHE / "engines-venv"
PACKAGES = ("ClusterShell==1.10.1", "ansible-core==2.19.*", "ansible-runner==2.4.*")
CHECK = "import ClusterShell, ansible, ansible_runner"


def engines_bin() -> Path:
    """The venv's ``bin`` dir, building the venv first when it is missing or broken."""
    python = VENV / "bin" / "python"
    check = [str(python), "-c", CHECK]
    if python.exists() and subprocess.run(check, capture_output=True, check=False).returncode == 0:
        return python.parent
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True, timeout=300)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *PACKAGES], check=True, timeout=1200)
    broken = subprocess.run(check, capture_output=True, text=True, check=False)
    if broken.returncode != 0:
        raise RuntimeError(f"the engines venv at {VENV} does not import: {broken.stderr[-2000:]}")
    return python.parent
