"""Fake hosts for the failure classes next to the reference case, each with a near miss.

Every preset here is a ``FakeHostSpec`` built from real captures (``tui/demo/fixtures``): one
host shape where a finding must fire and, by a keyword, the closest shape where it must not.
The demo fleet (``tui.demo.fleet``) shows the firing shapes; the tests probe both, locally and
over a real sshd.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from tui.demo.fakehost import (
    UBUNTU_2204,
    DriverSpec,
    FakeHostSpec,
    GpuSpec,
    ProcessSpec,
    ToolkitSpec,
    VenvSpec,
    h200_driver_550_cu128,
    healthy_h100,
    mig_uuid,
    pypi_torch_arch_flags,
)
from tui.demo.journal import journal_path, vllm_mig_device_assert, vllm_system_not_ready

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
RTX_PRO_6000_WS = GpuSpec("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0", 97887)
WORKSTATION_580 = DriverSpec(
    table_fixture="nvidia-smi/nvidia-smi-rtxpro6000-workstation-580.95.05.txt",
    proc_fixture="proc/proc-driver-nvidia-version-580.95.05-open-x86_64.txt",
)
TORCH_211_CU130 = "torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py"


def served(
    python: str, module: str, args: tuple[str, ...], env: Mapping[str, str], unit: str
) -> tuple[tuple[ProcessSpec, ...], dict[str, str]]:
    """A server started by a systemd unit: its process (pid 5151) and its unit file, whose
    ``Environment=`` lines give the process its environment."""
    argv = (python, "-m", module, *args)
    lines = "".join(f'Environment="{k}={v}"\n' for k, v in env.items() if k != "HOME")
    unit_file = (
        f"[Unit]\nDescription={module}\n\n[Service]\n{lines}"
        f"ExecStart={' '.join(argv)}\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n"
    )
    process = ProcessSpec(pid=5151, argv=argv, environ=dict(env), exe=python, unit=unit)
    return (process,), {f"/etc/systemd/system/{unit}": unit_file}


def jit_without_nvcc(
    *,
    jit_cache: str | None = None,
    cuda_home: str | None = None,
    runtime_cuda: bool = False,
    flashinfer: str = "0.6.8",
) -> FakeHostSpec:
    """``jit-nvcc-missing``: an RTX PRO 6000 workstation (SM 12.0, driver 580.95.05 / CUDA
    13.0) serving SGLang from a venv with torch 2.11.0+cu130 and FlashInfer 0.6.8, and no CUDA
    toolkit anywhere — CUDA comes only from torch's pip wheels. FlashInfer falls back to torch's
    CUDA 13.0, builds ``12.0f``, and the first sampling call finds no nvcc.

    ``jit_cache="0.6.8+cu130"`` is the near miss (prebuilt modules for that version);
    ``cuda_home`` sets a (malformed) ``CUDA_HOME`` for the server; ``runtime_cuda`` adds a
    runtime-only ``/usr/local/cuda-13.0`` with ``/usr/local/cuda`` → it (a runtime image)."""
    venv = "/opt/sglang"
    py = f"{venv}/bin/python3"
    env = {"PATH": f"{venv}/bin:{SYSTEM_PATH}", "HOME": "/root"}
    if cuda_home is not None:
        env["CUDA_HOME"] = cuda_home
    dists = [
        ("torch", "2.11.0"),
        ("sglang", "0.5.9"),
        ("triton", "3.6.0"),
        ("nvidia-cuda-runtime", "13.0.96"),
        ("nvidia-cuda-nvrtc", "13.0.88"),
    ]
    if jit_cache is not None:
        dists.append(("flashinfer-jit-cache", jit_cache))
    processes, files = served(
        py,
        "sglang.launch_server",
        ("--model-path", "/models/Qwen3-8B", "--port", "30000"),
        env,
        "sglang.service",
    )
    return FakeHostSpec(
        hostname="pro6000-no-nvcc",
        os_release=UBUNTU_2204,
        gpus=(RTX_PRO_6000_WS,),
        driver=WORKSTATION_580,
        toolkits=(
            (
                ToolkitSpec(
                    "/usr/local/cuda-13.0", "nvcc/nvcc-13.0.88.txt", "13.0.96", runtime_only=True
                ),
            )
            if runtime_cuda
            else ()
        ),
        usr_local_cuda="/usr/local/cuda-13.0" if runtime_cuda else None,
        venvs=(
            VenvSpec(
                path=venv,
                dists=tuple(dists),
                torch_version_py=TORCH_211_CU130,
                torch_arch_flags=pypi_torch_arch_flags("2.11.0+cu130"),
                flashinfer=flashinfer,
            ),
        ),
        processes=processes,
        env={"HOME": "/root", "USER": "root", "PATH": f"{venv}/bin:{SYSTEM_PATH}"},
        files=files,
    )


def extension_for_other_torch(*, matching: bool = False) -> FakeHostSpec:
    """``extension-torch-abi-mismatch``: the healthy H100 node (torch 2.8.0+cu128, vLLM) after
    someone installed torchvision 0.24.1, which requires torch 2.9.1 (its real METADATA line
    ``Requires-Dist: torch (==2.9.1)``). ``matching=True`` is the near miss: torchvision 0.23.0,
    whose METADATA requires ``torch (==2.8.0)``."""
    spec = healthy_h100()
    (venv,) = spec.venvs
    version, torch = ("0.23.0", "2.8.0") if matching else ("0.24.1", "2.9.1")
    venv = replace(
        venv,
        dists=(*venv.dists, ("torchvision", version)),
        requires={"torchvision": ("numpy", f"torch (=={torch})", "pillow (!=8.3.*,>=5.3.0)")},
    )
    name = "h100-torchvision" if not matching else "h100-torchvision-ok"
    return replace(spec, hostname=name, venvs=(venv,))


def cpu_torch_on_gpus(*, cuda_torch: bool = False) -> FakeHostSpec:
    """``torch-cpu-build``: the H100 node's vLLM venv with torch 2.13.0+cpu (the real
    ``torch/version.py`` of the CPU wheel: ``cuda = None``) — a requirements file resolved
    against the cpu index. ``cuda_torch=True`` is the near miss: the PyPI 2.8.0+cu128 build."""
    spec = healthy_h100()
    if cuda_torch:
        return replace(spec, hostname="h100-cuda-torch")
    (venv,) = spec.venvs
    venv = replace(
        venv,
        dists=(("torch", "2.13.0+cpu"), ("vllm", "0.10.1"), ("triton", "3.4.0")),
        torch_version_py="torch/torch-version.py-2.13.0+cpu-x86_64.py",
        torch_arch_flags=None,
        flashinfer=None,
    )
    return replace(spec, hostname="h100-cpu-torch", venvs=(venv,))


RUNTIME_FILES = {  # what the NVIDIA Container Toolkit mounts into a container given GPUs
    "/dev/nvidiactl": "",
    "/dev/nvidia-uvm": "",
    "/dev/nvidia0": "",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.1": "",
    "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1": "",
}


def container_without_gpus(
    *, runtime: bool = False, kubernetes: bool = False, host_module_visible: bool = True
) -> FakeHostSpec:
    """``container-without-gpu-runtime``: the H100 node's vLLM image started as a container
    (``/.dockerenv``) without ``--gpus``: no ``/dev/nvidia*``, no ``libcuda.so.1``, no
    ``nvidia-smi``, while the host's kernel module shows through ``/proc/driver/nvidia/version``.
    ``runtime=True`` is the near miss (device nodes, driver libraries and nvidia-smi
    injected); ``kubernetes=True`` makes it a pod (a service-account token instead);
    ``host_module_visible=False`` hides ``/proc/driver/nvidia`` (then the driver state is
    ``no-driver``, which ``no-nvidia-driver`` alone would blame on the host)."""
    spec = healthy_h100()
    marker = (
        {"/var/run/secrets/kubernetes.io/serviceaccount/token": "stand-in\n"}
        if kubernetes
        else {"/.dockerenv": ""}
    )
    if runtime:
        return replace(
            spec, hostname="vllm-ctr-gpus", files={**spec.files, **marker, **RUNTIME_FILES}
        )
    return replace(
        spec,
        hostname="vllm-pod-no-gpus" if kubernetes else "vllm-ctr-no-gpus",
        driver=replace(
            spec.driver,
            installed=False,
            proc_version=spec.driver.proc_version if host_module_visible else None,
        ),
        files={**spec.files, **marker},
    )


RTX_PRO_6000_MIG = GpuSpec(  # four 1g.24gb instances (aws/sagemaker-hyperpod-cli#403's profiles)
    "NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", 97887, mig=("1g.24gb",) * 4
)


def mig_without_selection(*, visible: str | None = "0") -> FakeHostSpec:
    """``mig-device-not-selected``: an RTX PRO 6000 Server in MIG mode (the real R610 table,
    "MIG M. Enabled", driver 610.43.02) split into four 1g.24gb MIG devices, serving vLLM from a
    unit whose ``CUDA_VISIBLE_DEVICES`` is ``visible``: ``"0"`` (the GPU, not a MIG device),
    ``None`` (unset), or ``"mig"`` — the near miss: the first MIG device's UUID."""
    venv = "/opt/vllm"
    py = f"{venv}/bin/python3"
    env = {"PATH": f"{venv}/bin:{SYSTEM_PATH}", "HOME": "/root"}
    hostname = "pro6000-mig"
    if visible == "mig":
        env["CUDA_VISIBLE_DEVICES"] = mig_uuid(hostname, 0, 0)
    elif visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    processes, files = served(
        py,
        "vllm.entrypoints.openai.api_server",
        ("--model", "/models/Qwen3-8B"),
        env,
        "vllm.service",
    )
    if visible != "mig":  # the service died at torch's first device query
        files[journal_path("vllm.service")] = vllm_mig_device_assert(hostname, py, 5151)
    return FakeHostSpec(
        hostname=hostname,
        os_release=UBUNTU_2204,
        gpus=(RTX_PRO_6000_MIG,),
        driver=DriverSpec(
            table_fixture="nvidia-smi/nvidia-smi-rtxpro6000-server-610.43.02-mig-kmd-umd-header.txt",
            proc_version="610.43.02",
        ),
        venvs=(
            VenvSpec(
                path=venv,
                dists=(("torch", "2.11.0"), ("vllm", "0.12.0"), ("triton", "3.6.0")),
                torch_version_py=TORCH_211_CU130,
                torch_arch_flags=pypi_torch_arch_flags("2.11.0+cu130"),
            ),
        ),
        processes=processes,
        env={"HOME": "/root", "USER": "root", "PATH": f"{venv}/bin:{SYSTEM_PATH}"},
        files=files,
    )


def compat_over_driver(*, case: str = "older") -> FakeHostSpec:
    """``cuda-compat-shadows-driver``: a vLLM image's CUDA forward-compatibility libcuda in the
    loader's path ahead of the driver's (the shape of gpustack/gpustack#4678: vLLM ≥ 0.15
    images add an ld.so.conf entry; on driver 580 hosts CUDA then fails with error 803).

    ``case``: ``"older"`` — 12.9's compat libcuda 575.57.08 named by
    ``/etc/ld.so.conf.d/00-cuda-compat.conf`` on an RTX PRO 6000 workstation with driver
    580.95.05 (error 803); ``"unsupported"`` — 13.1's 590.44.01 through the unit's
    ``LD_LIBRARY_PATH`` on the same workstation GPU (error 804); ``"forward"`` — the near miss:
    575.57.08 through ``LD_LIBRARY_PATH`` on the H100 node's driver 570.148.08 (forward
    compatibility as designed); ``"unused"`` — the compat directory exists, nothing names it."""
    lib = "/usr/lib/x86_64-linux-gnu"
    compat, version = (
        ("/usr/local/cuda-13.1/compat", "590.44.01")
        if case == "unsupported"
        else (
            "/usr/local/cuda-12.9/compat",
            "575.57.08",
        )
    )
    files = {f"{compat}/libcuda.so.{version}": "", f"{compat}/libcuda.so.1": ""}
    files["/etc/ld.so.conf.d/x86_64-linux-gnu.conf"] = (
        f"# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n{lib}\n"
    )
    if case == "older":
        files["/etc/ld.so.conf.d/00-cuda-compat.conf"] = f"{compat}\n"
    if case == "forward":
        spec = healthy_h100()
        files[f"{lib}/libcuda.so.570.148.08"] = ""
        (venv,) = spec.venvs
        env = {"PATH": f"{venv.path}/bin:{SYSTEM_PATH}", "HOME": "/root", "LD_LIBRARY_PATH": compat}
        processes, units = served(
            venv.python,
            "vllm.entrypoints.openai.api_server",
            ("--model", "/m"),
            env,
            "vllm.service",
        )
        return replace(
            spec,
            hostname="h100-compat-fwd",
            processes=processes,
            files={**spec.files, **files, **units},
        )
    files[f"{lib}/libcuda.so.580.95.05"] = ""
    spec = jit_without_nvcc()
    if case == "unsupported":
        (proc,) = spec.processes
        env = {**proc.environ, "LD_LIBRARY_PATH": compat}
        processes, units = served(
            proc.exe, "sglang.launch_server", proc.argv[3:], env, "sglang.service"
        )
        spec = replace(spec, processes=processes, files={**spec.files, **units})
    return replace(
        spec,
        hostname="pro6000-compat" if case == "older" else f"pro6000-compat-{case}",
        venvs=tuple(
            replace(v, dists=(*v.dists, ("flashinfer-jit-cache", "0.6.8+cu130")))
            for v in spec.venvs
        ),
        files={**spec.files, **files},
    )


def container_lost_gpus(*, lost: bool = True) -> FakeHostSpec:
    """``container-lost-gpu-access``: the vLLM container given the H100 node's GPUs (device
    nodes, driver libraries, nvidia-smi injected) after its device cgroup lost them: every
    nvidia-smi call prints "Failed to initialize NVML: Unknown Error" and exits 255
    (NVIDIA/nvidia-docker#1671). ``lost=False`` is the near miss: the same container working."""
    spec = container_without_gpus(runtime=True)
    if not lost:
        return spec
    return replace(spec, driver=replace(spec.driver, failure="nvml-unknown-error"))


def visible_devices_server(visible: str) -> FakeHostSpec:
    """``cuda-visible-devices-selects-no-gpu``: the H100 node (4 GPUs, the real capture)
    serving vLLM from a unit whose ``CUDA_VISIBLE_DEVICES`` is ``visible`` — ``"4"`` (past the
    last GPU), ``"-1"``, ``"all"``, a stale ``GPU-`` UUID; the near misses ``"3"``, ``"1,0"``
    and the first GPU's UUID select GPUs."""
    spec = healthy_h100()
    venv = spec.venvs[0].path
    env = {
        "PATH": f"{venv}/bin:{SYSTEM_PATH}",
        "HOME": "/root",
        "CUDA_HOME": "/usr/local/cuda",
        "CUDA_VISIBLE_DEVICES": visible,
    }
    processes, files = served(
        f"{venv}/bin/python3",
        "vllm.entrypoints.openai.api_server",
        ("--model", "/models/Qwen3-8B"),
        env,
        "vllm.service",
    )
    return replace(spec, processes=processes, files={**spec.files, **files})


def stub_on_library_path(ld_path: str) -> FakeHostSpec:
    """``libcuda-stub-on-library-path``: the H100 node serving vLLM from a unit whose
    ``LD_LIBRARY_PATH`` is ``ld_path`` — with the toolkit's ``lib64/stubs`` (the stub
    ``libcuda.so`` is in the tree) it fires; the near miss is ``/usr/local/cuda-12.8/lib64``."""
    spec = healthy_h100()
    venv = spec.venvs[0].path
    env = {"PATH": f"{venv}/bin:{SYSTEM_PATH}", "HOME": "/root", "LD_LIBRARY_PATH": ld_path}
    processes, files = served(
        f"{venv}/bin/python3",
        "vllm.entrypoints.openai.api_server",
        ("--model", "/models/Qwen3-8B"),
        env,
        "vllm.service",
    )
    stub = {"/usr/local/cuda-12.8/lib64/stubs/libcuda.so": ""}
    return replace(spec, processes=processes, files={**spec.files, **files, **stub})


# dpkg's status entry of NVIDIA's fabric manager package (the layout of /var/lib/dpkg/status;
# the package is named for its driver branch, as in NVIDIA's CUDA repositories)
DPKG_FABRICMANAGER = """Package: nvidia-fabricmanager-{branch}
Status: install ok installed
Priority: optional
Section: multiverse/libs
Architecture: amd64
Version: {version}-1
Description: Fabric Manager for NVSwitch based systems.
"""
FABRIC_MANAGER = "/usr/bin/nv-fabricmanager"


def fabric_manager_stopped(*, case: str = "old-package") -> FakeHostSpec:
    """``fabric-manager-not-running``: an 8× H200 HGX node (the real 550.163.01 table) serving
    vLLM, whose GPUs report fabric.state ``In Progress`` (NVIDIA/gpu-operator#2511) — ``case``
    ``"old-package"``: nvidia-fabricmanager-550 at 550.127.05 (left behind by a driver
    upgrade) and not running; ``"stopped"``: at the driver's version but not running;
    ``"stale-registered"``: the GPUs registered, the package still at 550.127.05 (a warning).
    Near misses: ``"running"`` (registered, the fabric manager running at the driver's version)
    and ``"pcie"`` (GPUs in no fabric, N/A)."""
    driver = "550.163.01"
    package = driver if case in ("stopped", "running") else "550.127.05"
    venv = "/opt/venv"
    py = f"{venv}/bin/python3"
    hostname = "h200-hgx"
    env = {"PATH": f"{venv}/bin:{SYSTEM_PATH}", "HOME": "/root"}
    processes, files = served(
        py,
        "vllm.entrypoints.openai.api_server",
        ("--model", "/models/Qwen3-8B"),
        env,
        "vllm.service",
    )
    registered = case in ("running", "stale-registered")
    if case == "running":
        fm = ProcessSpec(
            pid=2210,
            argv=(FABRIC_MANAGER, "-c", "/usr/share/nvidia/nvswitch/fabricmanager.cfg"),
            environ={},
            exe=FABRIC_MANAGER,
            unit="nvidia-fabricmanager.service",
        )
        processes = (*processes, fm)
    if not registered and case != "pcie":
        files[journal_path("vllm.service")] = vllm_system_not_ready(hostname, 5151)
    if case != "pcie":
        files["/var/lib/dpkg/status"] = DPKG_FABRICMANAGER.format(branch="550", version=package)
    fabric = (
        None
        if case == "pcie"
        else ("Completed", "Success")
        if registered
        else (
            "In Progress",
            "N/A",
        )
    )
    base = h200_driver_550_cu128()
    torch = VenvSpec(
        path=venv,
        dists=(("torch", "2.6.0"), ("vllm", "0.8.5")),
        torch_version_py="torch/torch-version.py-2.6.0+cu124-x86_64-pypi.py",
        torch_arch_flags=pypi_torch_arch_flags("2.6.0+cu124"),
    )
    return replace(
        base,
        hostname=hostname,
        driver=replace(base.driver, fabric=fabric),
        venvs=(torch,),
        processes=processes,
        env={"HOME": "/root", "USER": "root", "PATH": f"{venv}/bin:{SYSTEM_PATH}"},
        files={**base.files, **files},
    )
