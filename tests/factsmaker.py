"""Build ``Facts`` for rule/what-if/report tests: one call describes a host in a line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tui.core.facts import DriverInfo, EnvContext, Facts, Gpu, HostInfo, PythonEnv, Toolkit

PY = "/venv/bin/python3"
AUTO = "auto"
SERVICE = "pid 4242 sglang.launch_server"
GPU_NAMES = {
    "12.0": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    "12.1": "NVIDIA GB10",
    "9.0": "NVIDIA H100 80GB HBM3",
    "10.0": "NVIDIA B200",
    "10.3": "NVIDIA B300",
    "7.0": "Tesla V100-SXM2-32GB",
    "8.9": "NVIDIA L40S",
}
DRIVER_CUDA = {"570.148.08": "12.8", "575.57.08": "12.9", "580.95.05": "13.0", "525.60.13": "12.0"}


def toolkit(home: str, version: str, **kw: object) -> Toolkit:
    return Toolkit(home=home, nvcc=f"{home}/bin/nvcc", version=version, **kw)  # type: ignore[arg-type]


def make_facts(
    *,
    gpus: Sequence[str] = ("12.0",),
    driver: str | None = "580.95.05",
    driver_state: str = "ok",
    toolkits: Sequence[tuple[str, str]] = (("/usr/local/cuda-12.8", "12.8"),),
    extra_toolkits: Sequence[Toolkit] = (),
    usr_local_cuda: str | None = None,
    env: Mapping[str, str] | None = None,
    which: Sequence[str] | None = None,
    torch_cuda: str | None = "13.0",
    torch_version: str | None = "auto",  # None: the probe could not read it
    torch_arch_list: tuple[str, ...] | None = None,
    flashinfer: str | None = "0.6.8",
    jit_cache: str | None = None,
    jit_cache_dirs: tuple[str, ...] = (),
    packages: Mapping[str, str] | None = None,
    service_env: Mapping[str, str] | None = None,
    service_cmdline: str | None = None,
    python: bool = True,
) -> Facts:
    """Default: the reference host (SM 12.0, driver 580 / CUDA 13.0, only CUDA 12.8 and
    CUDA_HOME pointing at it, torch cu130, FlashInfer 0.6.8), seen from the SSH session."""
    env = dict(env if env is not None else {"CUDA_HOME": toolkits[0][0] if toolkits else ""})
    if which is None:
        home = env.get("CUDA_HOME")
        which = (f"{home}/bin/nvcc",) if home else ()
    tks = tuple(toolkit(h, v) for h, v in toolkits) + tuple(extra_toolkits)
    if usr_local_cuda:
        target = next(t for t in tks if t.home == usr_local_cuda)
        tks += (
            Toolkit(
                home="/usr/local/cuda",
                nvcc="/usr/local/cuda/bin/nvcc",
                version=target.version,
                realpath=usr_local_cuda,
            ),
        )
    contexts = [
        EnvContext(
            kind="ssh",
            label="ssh session",
            vars={"HOME": "/root", **env},
            which_nvcc=tuple(which),
            usr_local_cuda_exists=usr_local_cuda is not None,
        )
    ]
    pythons: list[PythonEnv] = []
    if python:
        tv = torch_version
        if tv == AUTO:
            tv = f"2.9.1+cu{torch_cuda.replace('.', '')}" if torch_cuda else "2.9.1+cpu"
        common = dict(
            path=PY,
            prefix="/venv",
            version="3.12.3",
            site_packages=("/venv/lib/python3.12/site-packages",),
            torch_version=tv,
            torch_cuda=torch_cuda,
            torch_arch_list=torch_arch_list,
            flashinfer_version=flashinfer,
            flashinfer_jit_cache_version=jit_cache,
            packages=dict(packages or {}),
            jit_cache_dirs=jit_cache_dirs,
        )
        pythons.append(PythonEnv(source="inventory", context="ssh session", **common))  # type: ignore[arg-type]
        if service_env is not None:
            contexts.append(
                EnvContext(
                    kind="process",
                    label=SERVICE,
                    vars={"HOME": "/root", **service_env},
                    which_nvcc=(
                        (f"{service_env['CUDA_HOME']}/bin/nvcc",)
                        if service_env.get("CUDA_HOME")
                        else ()
                    ),
                    pid=4242,
                    exe=PY,
                    cmdline=service_cmdline or f"{PY} -m sglang.launch_server --tp 8",
                    unit="sglang.service",
                )
            )
            pythons.append(PythonEnv(source="process", context=SERVICE, **common))  # type: ignore[arg-type]
    if driver_state == "ok" and driver:
        drv = DriverInfo(state="ok", driver_version=driver, driver_cuda=DRIVER_CUDA.get(driver))
    else:
        drv = DriverInfo(state=driver_state, smi_exit=9, message="NVIDIA-SMI has failed")  # type: ignore[arg-type]
    return Facts(
        host=HostInfo(
            hostname="h",
            os_id="ubuntu",
            os_version_id="22.04",
            arch="x86_64",
            user="root",
            is_root=True,
        ),
        driver=drv,
        gpus=tuple(
            Gpu(index=i, name=GPU_NAMES.get(cc, f"GPU SM {cc}"), compute_cap=cc, uuid=f"GPU-{i}")
            for i, cc in enumerate(gpus if driver_state == "ok" else ())
        ),
        toolkits=tks,
        usr_local_cuda=usr_local_cuda,
        contexts=tuple(contexts),
        pythons=tuple(pythons),
    )
