"""Fake GPU hosts, the presets: the demo fleet's hosts and the test hosts, each a
``FakeHostSpec`` built from real captures."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace

from tui.demo.fakehost.spec import (
    SYSTEM_PATH,
    DriverSpec,
    FakeHostSpec,
    GpuSpec,
    ProcessSpec,
    ToolkitSpec,
    VenvSpec,
    fixture_text,
)
from tui.demo.journal import journal_path, sglang_flashinfer_rejected

UBUNTU_2204 = (
    'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\n'
    'VERSION="22.04.5 LTS (Jammy Jellyfish)"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\n'
)
RTX_PRO_6000 = GpuSpec("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", 97887)
CUDA_128 = ToolkitSpec("/usr/local/cuda-12.8", "nvcc/nvcc-12.8.93.txt", "12.8.1")
CUDA_130 = ToolkitSpec(
    "/usr/local/cuda-13.0", "nvcc/nvcc-13.0.88.txt", "13.0.2", "nvcc/nvcc-13.0.88-list-gpu-arch.txt"
)


def pypi_torch_arch_flags(torch_version: str) -> str:
    """The arch flags embedded in the PyPI x86_64 wheel of ``torch_version`` (real captures)."""
    table = fixture_text("torch/torch-pypi-wheels-CUDA_ARCH_FLAGS-from-libtorch_python.tsv")
    for line in table.splitlines():
        tag, version, flags = [*line.split("\t"), "", "", ""][:3]
        if version == torch_version and not tag.endswith("-aarch64"):
            return flags
    raise KeyError(f"no captured arch flags for torch {torch_version}")


def ssh_env(path_head: str, **extra: str) -> dict[str, str]:
    """A root login's environment over SSH, with ``path_head`` first on PATH."""
    return {"HOME": "/root", "USER": "root", "PATH": f"{path_head}:{SYSTEM_PATH}", **extra}


def reference_ct200(
    *,
    with_cuda13: bool = False,
    flashinfer: str = "0.6.8",
    service: bool = True,
    cuda: str = "/usr/local/cuda-12.8",
    torch: str = "2.9.1",
) -> FakeHostSpec:
    """The seed case: 8× RTX PRO 6000 (SM 12.0), driver 580.95.05 (CUDA 13.0), only CUDA 12.8
    on disk and in CUDA_HOME, torch 2.9.1+cu130, FlashInfer 0.6.8, SGLang as a systemd service.
    ``cuda`` is the toolkit CUDA_HOME and PATH name (everywhere), ``torch`` torch's version.
    """
    venv = "/root/venv_sglang211"
    py = f"{venv}/bin/python3"
    unit = "sglang.service"
    env_path = f"{cuda}/bin:{venv}/bin:/usr/local/bin:/usr/bin:/bin"
    processes: tuple[ProcessSpec, ...] = ()
    files: dict[str, str] = {
        "/root/.bashrc": f"export CUDA_HOME={cuda}\nexport PATH={cuda}/bin:$PATH\n",
    }
    if service:
        server_env = {
            "PATH": env_path,
            "CUDA_HOME": cuda,
            "HOME": "/root",
            "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
            "HF_TOKEN": "hf_demo_secret_value",
            "SGLANG_API_KEY": "sk-demo-secret-value",
            "LANG": "C.UTF-8",
        }
        processes = (
            ProcessSpec(
                pid=4242,
                argv=(
                    py,
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "/models/Kimi-K2.6",
                    "--tp",
                    "8",
                    "--port",
                    "30000",
                ),
                environ=server_env,
                exe="/usr/bin/python3.12",
                unit=unit,
            ),
            # its tensor-parallel workers retitle themselves (setproctitle); the probe skips them
            *(
                ProcessSpec(
                    pid=4300 + tp,
                    argv=(f"sglang::scheduler_TP{tp}",),
                    environ=server_env,
                    exe="/usr/bin/python3.12",
                    unit=unit,
                    ppid=4242,
                    gpu_memory_mib=88_312,  # SYNTHETIC: weights + KV cache of one TP rank
                    gpu_index=tp,
                )
                for tp in range(8)
            ),
        )
        files[f"/etc/systemd/system/{unit}"] = (
            "[Unit]\nDescription=SGLang server\n\n[Service]\n"
            f"Environment=CUDA_HOME={cuda}\n"
            f'Environment="PATH={env_path}"\n'
            "Environment=CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
            'Environment="HF_TOKEN=hf_demo_secret_value" SGLANG_API_KEY=sk-demo-secret-value\n'
            f"ExecStart={py} -m sglang.launch_server --model-path /models/Kimi-K2.6"
            " --tp 8 --port 30000\n"
            "Restart=always\n\n[Install]\nWantedBy=multi-user.target\n"
        )
        files[journal_path(unit)] = sglang_flashinfer_rejected("ct200", py, 4242)
    return FakeHostSpec(
        hostname="ct200",
        os_release=UBUNTU_2204,
        gpus=(RTX_PRO_6000,) * 8,
        driver=DriverSpec(
            table_fixture="nvidia-smi/SYNTHETIC-nvidia-smi-rtxpro6000-server-x8-580.95.05.txt",
            proc_fixture="proc/proc-driver-nvidia-version-580.95.05-open-x86_64.txt",
        ),
        toolkits=(CUDA_128, CUDA_130) if with_cuda13 else (CUDA_128,),
        venvs=(
            VenvSpec(
                path=venv,
                dists=(
                    ("torch", torch),
                    ("sglang", "0.5.6"),
                    ("sgl-kernel", "0.3.18"),
                    ("triton", "3.5.1"),
                    ("nvidia-cuda-runtime", "13.0.96"),
                    ("nvidia-nccl-cu13", "2.27.7"),
                    # what `python3.12 -m venv` puts there: the pip CPython 3.12.3's ensurepip
                    # bundles (Lib/ensurepip/__init__.py: _PIP_VERSION = "24.0")
                    ("pip", "24.0"),
                ),
                site_files={"pip/__init__.py": '__version__ = "24.0"\n'},
                # torch 2.9.1+cu130's version.py: the real 2.11.0+cu130 file with __version__
                # rewritten (no 2.9.1+cu130 capture exists; the layout is the same apart from
                # the extra rocm field 2.10+ adds).
                torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py",
                torch_version=f"{torch}+cu130",
                # the 2.11.0+cu130 wheel's list, for the same reason as version.py above
                torch_arch_flags=pypi_torch_arch_flags("2.11.0+cu130"),
                flashinfer=flashinfer,
            ),
        ),
        processes=processes,
        env=ssh_env(f"{venv}/bin:{cuda}/bin", CUDA_HOME=cuda, LD_LIBRARY_PATH=f"{cuda}/lib64"),
        files=files,
        jit_cache_dirs=(f"/root/.cache/flashinfer/{flashinfer}",),
    )


def healthy_h100() -> FakeHostSpec:
    """4× H100 (SM 9.0) on driver 570.148.08 (CUDA 12.8; the real 4-GPU capture), nvcc 12.8 at
    /usr/local/cuda-12.8 with /usr/local/cuda → it, torch 2.8.0+cu128, FlashInfer 0.6.8."""
    venv = "/opt/venv"
    return FakeHostSpec(
        hostname="h100-node",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA H100 80GB HBM3", "9.0", 81559),) * 4,
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-h100x4-570.148.08.txt", proc_version="570.148.08"
        ),
        toolkits=(CUDA_128,),
        usr_local_cuda="/usr/local/cuda-12.8",
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.8.0"), ("vllm", "0.10.1"), ("triton", "3.4.0")),
                torch_version_py="torch/torch-version.py-2.8.0+cu128-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.8.0+cu128"),
                flashinfer="0.6.8",
            ),
        ),
        env=ssh_env(f"{venv}/bin:/usr/local/cuda/bin", CUDA_HOME="/usr/local/cuda"),
    )


def b200_old_driver() -> FakeHostSpec:
    """8× B200 (SM 10.0) on driver 575.57.08 (CUDA 12.9, the real capture) with a cu130 torch:
    the driver is too old for torch (13.x needs ≥580); nvcc 13.0 at /usr/local/cuda-13.0."""
    venv = "/opt/venv"
    return FakeHostSpec(
        hostname="b200-old-driver",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA B200", "10.0", 183359),) * 8,
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-b200x8-575.57.08.txt", proc_version="575.57.08"
        ),
        toolkits=(CUDA_130,),
        usr_local_cuda="/usr/local/cuda-13.0",
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.11.0"), ("sglang", "0.5.9"), ("triton", "3.6.0")),
                torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.11.0+cu130"),
                flashinfer="0.7.2",
            ),
        ),
        env=ssh_env(f"{venv}/bin:/usr/local/cuda/bin"),
    )


def rtx5090_cu124_torch() -> FakeHostSpec:
    """RTX 5090 (SM 12.0) on driver 570.124.06 (the real capture) with torch 2.6.0+cu124, which
    has no sm_120 kernels; nvcc 12.8 at /usr/local/cuda-12.8."""
    venv = "/home/ml/venv"
    return FakeHostSpec(
        hostname="rtx5090-cu124",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA GeForce RTX 5090", "12.0", 32607),),
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-rtx5090-570.124.06.txt", proc_version="570.124.06"
        ),
        toolkits=(CUDA_128,),
        usr_local_cuda="/usr/local/cuda-12.8",
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.6.0"), ("vllm", "0.8.1"), ("triton", "3.2.0")),
                torch_version_py="torch/torch-version.py-2.6.0+cu124-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.6.0+cu124"),
            ),
        ),
        env=ssh_env(f"{venv}/bin:/usr/local/cuda/bin"),
    )


def no_driver() -> FakeHostSpec:
    """nvidia-smi present, kernel module not loaded: the real 550.163.01 text, exit 9;
    /proc/driver/nvidia/version absent."""
    return FakeHostSpec(
        hostname="no-driver",
        os_release=UBUNTU_2204,
        gpus=(),
        driver=DriverSpec(failure="not-loaded"),
        toolkits=(CUDA_128,),
        usr_local_cuda="/usr/local/cuda-12.8",
        env=ssh_env("/usr/local/cuda/bin"),
    )


CUDA_130_PTXAS = replace(CUDA_130, ptxas_fixture="ptxas/ptxas-13.0.88-version.txt")
TRITON_351_PTXAS = (("ptxas", "captures/triton/triton-3.5.1-ptxas-version.txt"),)


def gb10_triton_old_ptxas(*, triton: str = "3.5.1", override: bool = False) -> FakeHostSpec:
    """A DGX Spark (GB10, SM 12.1) on driver 580.95.05 (the real capture), CUDA 13.0 installed
    and in CUDA_HOME, torch 2.9.1+cu130 with vLLM as a systemd service — and triton 3.5.1, whose
    bundled ptxas (12.8.93, from the real wheel) predates sm_121a. ``triton="3.6.0"`` bundles
    ptxas-blackwell 12.9.86 (it builds sm_121a); ``override`` sets TRITON_PTXAS_PATH to the
    toolkit's ptxas in the service."""
    venv = "/home/ml/venv"
    py = f"{venv}/bin/python3"
    cuda = "/usr/local/cuda-13.0"
    unit = "vllm.service"
    env_path = f"{venv}/bin:{cuda}/bin:/usr/local/bin:/usr/bin:/bin"
    bundled = (
        TRITON_351_PTXAS
        if triton == "3.5.1"
        else tuple(
            (name, f"captures/triton/triton-{triton}-{name}-version.txt")
            for name in ("ptxas", "ptxas-blackwell")
        )
    )
    server_env = {"PATH": env_path, "CUDA_HOME": cuda, "HOME": "/home/ml", "LANG": "C.UTF-8"}
    extra = {"TRITON_PTXAS_PATH": f"{cuda}/bin/ptxas"} if override else {}
    argv = (py, "-m", "vllm.entrypoints.openai.api_server", "--model", "/models/Qwen3-8B")
    unit_env = "".join(f'Environment="{k}={v}"\n' for k, v in {**server_env, **extra}.items())
    return FakeHostSpec(
        hostname="spark-01",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA GB10", "12.1", None),),
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-gb10-dgx-spark-580.95.05.txt",
            proc_version="580.95.05",
        ),
        toolkits=(CUDA_130_PTXAS,),
        usr_local_cuda=cuda,
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.9.1"), ("vllm", "0.11.0"), ("triton", triton)),
                # as reference_ct200: the real 2.11.0+cu130 version.py and arch list, with
                # __version__ rewritten (sm_120 cubins run on SM 12.1)
                torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py",
                torch_version="2.9.1+cu130",
                torch_arch_flags=pypi_torch_arch_flags("2.11.0+cu130"),
                triton_ptxas=bundled,
            ),
        ),
        processes=(
            ProcessSpec(
                pid=5151,
                argv=argv,
                environ={**server_env, **extra},
                exe="/usr/bin/python3.12",
                unit=unit,
            ),
        ),
        env=ssh_env(f"{venv}/bin:{cuda}/bin", CUDA_HOME=cuda, HOME="/home/ml", USER="ml"),
        files={
            f"/etc/systemd/system/{unit}": "[Unit]\nDescription=vLLM server\n\n[Service]\n"
            + unit_env
            + f"ExecStart={' '.join(argv)}\nRestart=always\n\n"
            "[Install]\nWantedBy=multi-user.target\n",
        },
    )


CUDA_124 = ToolkitSpec("/usr/local/cuda-12.4", "nvcc/nvcc-12.4.131.txt", "12.4.1")
CU12_WHEEL_LIBS = (
    "nvidia/cuda_runtime/lib/libcudart.so.12",
    "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
    "nvidia/nvjitlink/lib/libnvJitLink.so.12",
    "nvidia/cublas/lib/libcublasLt.so.12",
)


def cuda_libs(home: str, version: str, stems: Sequence[str]) -> tuple[str, ...]:
    """A runfile toolkit's libraries: targets/x86_64-linux/lib/<stem>.so.<full version>."""
    return tuple(f"{home}/targets/x86_64-linux/lib/{stem}.so.{version}" for stem in stems)


def nvrtc_shadowed_server() -> FakeHostSpec:
    """8× RTX PRO 6000 (SM 12.0) on driver 580.95.05, torch 2.8.0+cu128 and vLLM as a systemd
    service whose unit puts an old CUDA 12.4 runtime first on LD_LIBRARY_PATH; the running
    server has that toolkit's libnvrtc 12.4 mapped, which cannot compile for SM 12.0."""
    venv = "/opt/venv"
    py = f"{venv}/bin/python3"
    unit = "vllm.service"
    old = "/usr/local/cuda-12.4"
    site = f"{venv}/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    ld = f"{old}/lib64"
    server_env = {
        "PATH": f"{venv}/bin:/usr/local/cuda-12.8/bin:/usr/bin:/bin",
        "CUDA_HOME": "/usr/local/cuda-12.8",
        "LD_LIBRARY_PATH": ld,
        "HOME": "/root",
    }
    argv = (py, "-m", "vllm.entrypoints.openai.api_server", "--model", "/models/Llama-3.3-70B")
    unit_env = "".join(f'Environment="{k}={v}"\n' for k, v in server_env.items())
    old_libs = cuda_libs(old, "12.4.127", ("libcudart", "libnvrtc", "libnvJitLink"))
    return FakeHostSpec(
        hostname="rtxpro-04",
        os_release=UBUNTU_2204,
        gpus=(RTX_PRO_6000,) * 8,
        driver=DriverSpec(
            table_fixture="nvidia-smi/SYNTHETIC-nvidia-smi-rtxpro6000-server-x8-580.95.05.txt",
            proc_fixture="proc/proc-driver-nvidia-version-580.95.05-open-x86_64.txt",
        ),
        toolkits=(CUDA_128, CUDA_124),
        usr_local_cuda="/usr/local/cuda-12.8",
        venvs=(
            VenvSpec(
                path=venv,
                dists=(
                    ("torch", "2.8.0"),
                    ("vllm", "0.10.1"),
                    ("triton", "3.4.0"),
                    ("nvidia-cuda-runtime-cu12", "12.8.90"),
                    ("nvidia-cuda-nvrtc-cu12", "12.8.93"),
                    ("nvidia-nvjitlink-cu12", "12.8.93"),
                    ("nvidia-cublas-cu12", "12.8.4.1"),
                ),
                torch_version_py="torch/torch-version.py-2.8.0+cu128-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.8.0+cu128"),
                nvidia_libs=CU12_WHEEL_LIBS,
            ),
        ),
        processes=(
            ProcessSpec(
                pid=6060,
                argv=argv,
                environ=server_env,
                exe="/usr/bin/python3.12",
                unit=unit,
                mapped=(
                    f"{site}/nvidia/cuda_runtime/lib/libcudart.so.12",
                    f"{old}/targets/x86_64-linux/lib/libnvrtc.so.12.4.127",
                    f"{site}/nvidia/nvjitlink/lib/libnvJitLink.so.12",
                ),
            ),
        ),
        env=ssh_env(f"{venv}/bin:/usr/local/cuda/bin", CUDA_HOME="/usr/local/cuda"),
        files={
            f"/etc/systemd/system/{unit}": "[Unit]\nDescription=vLLM server\n\n[Service]\n"
            + unit_env
            + f"ExecStart={' '.join(argv)}\nRestart=always\n\n"
            "[Install]\nWantedBy=multi-user.target\n",
        },
        lib_files=old_libs,
        links=((f"{old}/lib64", f"{old}/targets/x86_64-linux/lib"),),
    )


def nvjitlink_shadowed_login(torch: str = "2.5.1") -> FakeHostSpec:
    """4× H100 with torch <torch>+cu124 from the wheels and ~/.bashrc exporting
    LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64 (pytorch#140797): 2.5.1 lets cuSPARSE take that
    toolkit's libnvJitLink 12.1; 2.6.0 loads the wheel's own first."""
    venv = "/opt/venv"
    old = "/usr/local/cuda-12.1"
    return FakeHostSpec(
        hostname="h100-ldpath",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA H100 80GB HBM3", "9.0", 81559),) * 4,
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-h100x4-570.148.08.txt", proc_version="570.148.08"
        ),
        toolkits=(CUDA_128,),
        usr_local_cuda="/usr/local/cuda-12.8",
        venvs=(
            VenvSpec(
                path=venv,
                dists=(
                    ("torch", torch),
                    ("nvidia-cuda-runtime-cu12", "12.4.127"),
                    ("nvidia-cuda-nvrtc-cu12", "12.4.127"),
                    ("nvidia-nvjitlink-cu12", "12.4.127"),
                    ("nvidia-cublas-cu12", "12.4.5.8"),
                ),
                torch_version_py="torch/torch-version.py-2.6.0+cu124-x86_64-pypi.py",
                torch_version=f"{torch}+cu124",
                torch_arch_flags=pypi_torch_arch_flags("2.6.0+cu124"),
                nvidia_libs=CU12_WHEEL_LIBS,
            ),
        ),
        env=ssh_env(
            f"{venv}/bin:/usr/local/cuda/bin",
            CUDA_HOME="/usr/local/cuda",
            LD_LIBRARY_PATH=f"{old}/lib64",
        ),
        files={"/root/.bashrc": f"export LD_LIBRARY_PATH={old}/lib64\n"},
        lib_files=cuda_libs(old, "12.1.105", ("libcudart", "libnvrtc", "libnvJitLink")),
        links=((f"{old}/lib64", f"{old}/targets/x86_64-linux/lib"),),
    )


CUDART_130_HEADER = (
    "captures/cuda-headers/nvidia-cuda-runtime-13.0.96-cuda_runtime_api.h-lines-138-139.txt"
)
CUDART_128_HEADER = (
    "captures/cuda-headers/nvidia-cuda-runtime-cu12-12.8.90-cuda_runtime_api.h-lines-138-139.txt"
)


def pip_toolkit_mixed(nvcc: str = "13.3.73") -> FakeHostSpec:
    """8× RTX PRO 6000 on driver 580.95.05, torch 2.11.0+cu130 and FlashInfer 0.6.8 in a venv
    whose CUDA_HOME is the pip toolkit site-packages/nvidia/cu13 — nvcc (and crt, nvvm) from
    nvidia-cuda-nvcc <nvcc>, the runtime headers from nvidia-cuda-runtime 13.0.96, which torch
    pins (flashinfer#3493). ``nvcc="13.0.88"`` is the coherent near miss."""
    venv = "/opt/venv"
    site = f"{venv}/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    home = f"{site}/nvidia/cu13"
    return FakeHostSpec(
        hostname="pip-cuda",
        os_release=UBUNTU_2204,
        gpus=(RTX_PRO_6000,) * 8,
        driver=DriverSpec(
            table_fixture="nvidia-smi/SYNTHETIC-nvidia-smi-rtxpro6000-server-x8-580.95.05.txt",
            proc_fixture="proc/proc-driver-nvidia-version-580.95.05-open-x86_64.txt",
        ),
        venvs=(
            VenvSpec(
                path=venv,
                dists=(
                    ("torch", "2.11.0"),
                    ("nvidia-cuda-runtime", "13.0.96"),
                    ("nvidia-cuda-crt", nvcc),
                    ("nvidia-nvvm", nvcc),
                ),
                torch_version_py="torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.11.0+cu130"),
                flashinfer="0.6.8",
                pip_nvcc_fixture=f"nvcc/nvcc-{nvcc}.txt",
                pip_header_fixture=CUDART_130_HEADER,
            ),
        ),
        env=ssh_env(f"{venv}/bin:{home}/bin", CUDA_HOME=home),
    )


def h200_driver_550_cu128() -> FakeHostSpec:
    """8× H200 (SM 9.0) on driver 550.163.01 (CUDA 12.4, the real capture) with torch
    2.8.0+cu128: minor-version compatibility runs torch's sm_90 cubins, but PTX from the CUDA
    12.8 toolchain cannot be JIT-compiled by this driver (error 222)."""
    venv = "/opt/venv"
    return FakeHostSpec(
        hostname="h200-r550",
        os_release=UBUNTU_2204,
        gpus=(GpuSpec("NVIDIA H200", "9.0", 143771),) * 8,
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-h200x8-550.163.01.txt", proc_version="550.163.01"
        ),
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.8.0"), ("vllm", "0.10.1")),
                torch_version_py="torch/torch-version.py-2.8.0+cu128-x86_64-pypi.py",
                torch_arch_flags=pypi_torch_arch_flags("2.8.0+cu128"),
            ),
        ),
        env=ssh_env(f"{venv}/bin"),
    )
