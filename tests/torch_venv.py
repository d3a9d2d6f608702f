"""A test venv with CPU torch and the real FlashInfer wheel, in the test cache (never the repo).

Used by the sampling tests that need torch (the remote harness on CPU) and the real FlashInfer
("no GPU" path). Built once, reused while ``import torch, flashinfer.sampling`` works in it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

CACHE = Path.home() / ".cache" / "detective-tui-tests"
VENV = CACHE / "validate-venv"
TORCH = "torch==2.13.0"  # resolves to the CPU build here
FLASHINFER = "flashinfer-python==0.7.2.post1"
# what `import flashinfer` needs besides torch (the wheel is installed --no-deps)
FLASHINFER_DEPS = (
    "apache-tvm-ffi<0.2,>=0.1.11",
    "packaging",
    "requests",
    "nvidia-ml-py",
    "tqdm",
    "numpy",
)


@functools.cache  # the check imports torch and FlashInfer (seconds): once per test session
def validate_venv_python() -> str:
    """The venv's interpreter, building the venv first when it is missing or broken."""
    python = VENV / "bin" / "python"
    check = [str(python), "-c", "import torch, flashinfer.sampling"]
    if python.exists() and subprocess.run(check, capture_output=True, check=False).returncode == 0:
        return str(python)
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=300)
    pip = [str(python), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, TORCH, *FLASHINFER_DEPS], check=True, timeout=1800)
    subprocess.run([*pip, "--no-deps", FLASHINFER], check=True, timeout=600)
    broken = subprocess.run(check, capture_output=True, text=True, check=False)
    if broken.returncode != 0:
        raise RuntimeError(f"the validate venv at {VENV} does not import: {broken.stderr[-2000:]}")
    return str(python)


def torch_python() -> str:
    """An interpreter with torch: $DETECTIVE_TUI_TORCH_PYTHON, this one, or the test venv."""
    explicit = os.environ.get("DETECTIVE_TUI_TORCH_PYTHON")
    if explicit:
        return explicit
    if importlib.util.find_spec("torch") is not None:
        return sys.executable
    return validate_venv_python()
