"""A throwaway venv in the test cache (never the repo) with the real fleet engines from the
package index: ClusterShell (``clush``, ``nodeset``), ansible-core (``ansible``,
``ansible-inventory``, ``ansible-playbook``) and ansible-runner. Used by the slow tests only.
Built once, reused while the three still import."""

from __future__ import annotations

import subprocess
import sys
import zipfile
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


ANSIBLE_WHEEL = "ansible==12.3.0"  # the community package whose ansible.posix matches core 2.19
COLLECTIONS = CACHE / "collections"


def posix_collection() -> Path:
    """A collections path holding ``ansible.posix`` (its ``json`` stdout callback is no longer in
    ansible-core), taken from the ``ansible`` wheel on the package index: only that collection
    is unpacked, the wheel stays in the test cache."""
    callback = COLLECTIONS / "ansible_collections/ansible/posix/plugins/callback/json.py"
    if callback.is_file():
        return COLLECTIONS
    wheels = CACHE / "wheels"
    pip = [str(engines_bin() / "python"), "-m", "pip", "download", "-q", "--no-deps"]
    subprocess.run([*pip, ANSIBLE_WHEEL, "-d", str(wheels)], check=True, timeout=900)
    (wheel,) = wheels.glob("ansible-12.3.0-*.whl")
    prefix = "ansible_collections/ansible/posix/"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(COLLECTIONS, [n for n in z.namelist() if n.startswith(prefix)])
    return COLLECTIONS
