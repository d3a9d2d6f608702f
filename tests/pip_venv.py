"""Real venvs for the pip tests, without paying ``ensurepip`` per test.

``python -m venv DEST`` spends most of its time in ``ensurepip`` (a pip run that installs and
byte-compiles pip and setuptools: seconds of CPU). ``make_venv(DEST)`` runs ``python -m venv
--without-pip DEST`` (DEST's own ``pyvenv.cfg``, interpreter links and activate scripts) and
copies in what ``ensurepip`` installed into a template venv made once by ``python -m venv`` in
the test cache (outside the repo): site-packages as they are (byte code and RECORDs included),
and the ``bin/pip*`` scripts with the template's path in their ``#!`` line replaced by DEST's
(the byte code keeps the template's file names, which only tracebacks show). The template is
keyed by this interpreter and its bundled pip, and built beside its final name,
then renamed, so concurrent sessions never see half of one.
"""

from __future__ import annotations

import ensurepip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CACHE = Path.home() / ".cache" / "detective-tui-tests"
SITE_REL = f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"


def _key() -> str:
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    text = f"{sys.version}\0{base}\0{ensurepip.version()}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def template() -> Path:
    """A venv made by ``python -m venv`` (with ensurepip's pip), built once per interpreter."""
    final = CACHE / f"pip-venv-template-{_key()}"
    if (final / "venv" / "bin" / "python").exists():
        return final
    CACHE.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=final.name + ".", dir=CACHE))
    venv = building / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600)
    try:
        building.rename(final)  # whole, or not at all
    except OSError:  # another session finished first: use its template
        shutil.rmtree(building, ignore_errors=True)
    return final


def make_venv(dest: Path) -> None:
    """What ``python -m venv DEST`` makes, with the template's pip."""
    source = template() / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True, timeout=300
    )
    shutil.copytree(source / SITE_REL, dest / SITE_REL, symlinks=True, dirs_exist_ok=True)
    for script in sorted((source / "bin").glob("pip*")):
        first, rest = script.read_bytes().split(b"\n", 1)
        built_at = first[2 : first.rindex(b"/bin/")]  # the template's path while it was built
        assert first.startswith(b"#!/") and built_at.endswith(b"/venv"), (script, first)
        target = dest / "bin" / script.name
        target.write_bytes(b"#!" + bytes(dest) + first[2 + len(built_at) :] + b"\n" + rest)
        target.chmod(script.stat().st_mode)
    made = {str(p.relative_to(dest)) for p in dest.rglob("*")}
    expected = {str(p.relative_to(source)) for p in source.rglob("*")}
    assert made == expected, (sorted(made ^ expected), dest)
