"""An ELF stand-in for nvcc or ptxas, built here with gcc: its ``.rodata`` holds the banner
lines of ../shared/fixtures/nvcc/nvcc-12.8.93.txt the way the real nvcc holds them (the
release and build lines as one string, next to the copyright format), and running it creates
a marker file."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

RELEASE = "Cuda compilation tools, release 12.8, V12.8.93"
PATTERN = "Cuda compilation tools, release [0-9][0-9.]*, V[0-9][0-9.]*"
# nvcc's own layout: the printf format, then the release and build lines as one string
SOURCE = r"""
#include <stdio.h>
static const char copy[] = "Copyright (c) 2005-%s NVIDIA Corporation\n";
static const char banner[] =
    "Cuda compilation tools, release 12.8, V12.8.93\nBuild cuda_12.8.r12.8/compiler.35583870_0";
int main(int argc, char **argv) {
    FILE *f = fopen(MARK, "w");
    if (f) fclose(f);
    printf(copy, "2025");
    puts(banner);
    return 0;
}
"""

HAS_GCC = shutil.which("gcc") is not None
needs_gcc = pytest.mark.skipif(not HAS_GCC, reason="building the ELF needs gcc")


def elf_nvcc(path: Path, mark: Path) -> None:
    """The stand-in nvcc at ``path``: an x86-64 ELF that creates ``mark`` when it runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    src = path.with_suffix(".c")
    src.write_text(SOURCE)
    subprocess.run(["gcc", "-O1", f'-DMARK="{mark}"', "-o", str(path), str(src)], check=True)
    src.unlink()
