"""A fake host that is awkward to probe: the reference CT200 under a directory whose name holds
``$HOME`` and a ``;``, a venv at such a path, a wrapper script, empty and odd variables, secrets on
a command line. The awkward-host tests and the two-path comparison probe it.
"""

from __future__ import annotations

from dataclasses import replace

from tui.demo import fakehost
from tui.demo.fakehost import (
    CUDA_130,
    DriverSpec,
    ProcessSpec,
    ToolkitSpec,
    VenvSpec,
    WrapperSpec,
)

HOSTILE = "odd dir $HOME;echo pwned"
ODD_VENV = f"/opt/{HOSTILE}/venv"


def awkward_spec() -> fakehost.FakeHostSpec:
    base = fakehost.reference_ct200(service=False)
    odd_py = f"{ODD_VENV}/bin/python3"
    return replace(
        base,
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-rtxpro6000-server-610.43.02-mig-kmd-umd-header.txt",
            proc_version="610.43.02",
        ),
        toolkits=(
            CUDA_130,
            ToolkitSpec(
                "/usr/local/cuda-12.8", "nvcc/nvcc-12.8.93.txt", "12.8.1", executable=False
            ),
            ToolkitSpec(
                "/usr/lib/nvidia-cuda-toolkit",
                "nvcc/nvcc-12.4.131.txt",
                "12.4.1",
                "nvcc/nvcc-12.4.131-list-gpu-arch.txt",
            ),
            ToolkitSpec("/opt/cuda", "nvcc/nvcc-12.8.93.txt", "12.8.1"),
            ToolkitSpec("/root/miniconda3/envs/cu", "nvcc/nvcc-13.0.88.txt", "13.0.2"),
        ),
        wrappers=(
            WrapperSpec("/usr/local/bin/nvcc", "/usr/local/cuda-13.0/bin/nvcc"),
            WrapperSpec(
                "/usr/bin/nvcc",
                "/usr/lib/nvidia-cuda-toolkit/bin/nvcc",
                fakehost.fixture_text(
                    "packaging/debian-sid-nvidia-cuda-toolkit-12.4.131-usr-bin-nvcc-wrapper.sh.txt"
                ),
            ),
        ),
        venvs=(
            *base.venvs,
            VenvSpec(
                path=ODD_VENV,
                dists=(("torch", "2.11.0"), ("nvidia-cuda-runtime", "13.0.96")),
                torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py",
                flashinfer="0.7.2",
                pip_nvcc_fixture="nvcc/nvcc-13.0.88.txt",
            ),
        ),
        inventory_pythons=(base.venvs[0].python, odd_py, "/nonexistent/bin/python3"),
        processes=(
            ProcessSpec(
                pid=5151,
                argv=(
                    "python3",
                    "-m",
                    "vllm.entrypoints.openai.api_server",
                    "--api-key",
                    "sk-awkward-secret",
                    "--hf-token=hf_awkward_secret",
                    "--tokenizer-mode",
                    "auto",
                    "--port",
                    "8000",
                ),
                environ={
                    "PATH": f"{ODD_VENV}/bin:/usr/bin:/bin",
                    "VLLM_USE_FLASHINFER_SAMPLER": "1",
                },
                exe="/usr/bin/python3.11",
            ),
        ),
        env={
            "HOME": "/root",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "CUDA_HOME": "",
            "FLASHINFER_CUDA_ARCH_LIST": "12.0f",
        },
        jit_cache_dirs=("/root/.cache/flashinfer/0.7.2/120f",),
    )
