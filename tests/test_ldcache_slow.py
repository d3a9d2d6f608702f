"""ld.so.cache as the probe reads it: the real ldconfig over a real CUDA library.

Downloads NVIDIA's ``nvidia-cuda-runtime`` 13.0.96 wheel (2 MB) into the test cache, puts its
``libcudart.so.13`` where a runfile toolkit puts it, builds the tree's ld.so.cache with this
machine's real ``ldconfig -r``, and gives the tree an ``sbin/ldconfig`` that runs the real one
on that cache — so the probe's ``ldconfig -p`` step reads real output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from probes import probe_env, probe_script
from tui.core.facts import LibFile
from tui.core.facts.build import facts_from_output

pytestmark = pytest.mark.slow

CACHE = Path.home() / ".cache" / "detective-tui-tests" / "nvidia-runtime"
LIB = "/usr/local/cuda-13.0/targets/x86_64-linux/lib"


def test_probe_reads_the_real_ld_so_cache(tmp_path: Path) -> None:
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.access(p, os.X_OK)), None
    )
    if ldconfig is None:
        pytest.skip("no ldconfig on this machine")
    if not sorted(CACHE.glob("nvidia_cuda_runtime-13.0.96-*.whl")):
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "nvidia-cuda-runtime==13.0.96",
             "--no-deps", "--only-binary=:all:", "--platform", "manylinux2014_x86_64",
             "--platform", "manylinux_2_17_x86_64", "-d", str(CACHE)],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    (wheel,) = sorted(CACHE.glob("nvidia_cuda_runtime-13.0.96-*.whl"))
    root = tmp_path / "root"
    lib = root / LIB.lstrip("/")
    lib.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as zf:
        (lib / "libcudart.so.13.0.96").write_bytes(zf.read("nvidia/cu13/lib/libcudart.so.13"))
    (root / "etc").mkdir()
    (root / "etc" / "ld.so.conf").write_text(LIB + "\n")
    made = subprocess.run([ldconfig, "-r", str(root)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"ldconfig -r cannot build a cache here: {made.stderr.strip()}")
    (root / "sbin").mkdir()
    wrapper = root / "sbin" / "ldconfig"
    wrapper.write_text(f'#!/bin/sh\nexec {ldconfig} -C "${{0%/*}}/../etc/ld.so.cache" "$@"\n')
    wrapper.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "HOME": "/root", "SHELL": "/bin/sh", "LANG": "C"}
    env.update(probe_env((), root=str(root), tree_exec=True, step_timeout_s=10))
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), env=env, capture_output=True, text=True, timeout=120
    ).stdout
    facts = facts_from_output(out)
    assert facts.ld_cache == (LibFile(f"{LIB}/libcudart.so.13", f"{LIB}/libcudart.so.13.0.96"),)
