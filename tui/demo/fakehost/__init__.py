"""Fake GPU hosts: directory trees that the real probe inspects through its root prefix.

A fake host is a temp dir holding what the probe looks at — ``usr/bin/nvidia-smi`` and
``…/bin/nvcc`` shims that print real captured outputs (``tui/demo/fixtures/``, copies of
``shared/fixtures/``), toolkit trees with ``version.json``, venv-like trees whose
``bin/python3`` links to this machine's interpreter (so the probe's stdlib snippet runs) with
``torch/version.py`` and ``*.dist-info/METADATA`` files, ``proc/<pid>/…`` of a serving
process, ``proc/driver/nvidia/version``, ``etc/os-release``, unit files and profile files.
Every tree carries ``run/systemd/system`` and a ``usr/bin/systemctl`` shim
(``fake_systemctl``). The host object built for the tree names that shim as its systemctl
stand-in (``FakeHost.standins`` → ``Host.standins``): fixes run it instead of this machine's
``systemctl``, so a restart really gives the tree's processes their unit's new environment.
Nothing in the tree itself makes a fix run anything.

Trees are relocatable (relative symlinks; shims find their data next to ``$0``), so a tree can
be built in a staging dir and renamed. The package: ``spec`` (plain data), ``build`` (a spec
made into a tree), ``presets`` (the demo fleet's and the test hosts' specs); its public names
are all here.
"""

from __future__ import annotations

from tui.demo.fakehost.build import (
    NO_PROCESSES,
    NVCC_SHIM,
    NVIDIA_SMI_SHIM,
    PTXAS_SHIM,
    SYNTHETIC_TEMPERATURE_C,
    SYSTEMCTL_LOG,
    SYSTEMCTL_SHIM,
    build_fake_host,
    fake_systemctl,
    mig_uuid,
    torch_python_lib,
)
from tui.demo.fakehost.presets import (
    CU12_WHEEL_LIBS,
    CUDA_124,
    CUDA_128,
    CUDA_130,
    CUDA_130_PTXAS,
    CUDART_128_HEADER,
    CUDART_130_HEADER,
    RTX_PRO_6000,
    TRITON_351_PTXAS,
    UBUNTU_2204,
    b200_old_driver,
    cuda_libs,
    gb10_triton_old_ptxas,
    h200_driver_550_cu128,
    healthy_h100,
    no_driver,
    nvjitlink_shadowed_login,
    nvrtc_shadowed_server,
    pip_toolkit_mixed,
    pypi_torch_arch_flags,
    reference_ct200,
    rtx5090_cu124_torch,
    ssh_env,
)
from tui.demo.fakehost.spec import (
    CAPTURES,
    FIXTURES,
    PROC_VERSION_TEMPLATE,
    QUOTED_SMI_FAILURES,
    SMI_FAILURES,
    SMI_QUERY_ARGS,
    SMI_STATE_ARGS,
    SYSTEM_PATH,
    DriverSpec,
    FakeHost,
    FakeHostSpec,
    GpuSpec,
    ProcessSpec,
    ToolkitSpec,
    VenvSpec,
    WrapperSpec,
    fixture_text,
    standins,
)

__all__ = [
    "CAPTURES",
    "CU12_WHEEL_LIBS",
    "CUDART_128_HEADER",
    "CUDART_130_HEADER",
    "CUDA_124",
    "CUDA_128",
    "CUDA_130",
    "CUDA_130_PTXAS",
    "FIXTURES",
    "NO_PROCESSES",
    "NVCC_SHIM",
    "NVIDIA_SMI_SHIM",
    "PROC_VERSION_TEMPLATE",
    "PTXAS_SHIM",
    "QUOTED_SMI_FAILURES",
    "RTX_PRO_6000",
    "SMI_FAILURES",
    "SMI_QUERY_ARGS",
    "SMI_STATE_ARGS",
    "SYNTHETIC_TEMPERATURE_C",
    "SYSTEMCTL_LOG",
    "SYSTEMCTL_SHIM",
    "SYSTEM_PATH",
    "TRITON_351_PTXAS",
    "UBUNTU_2204",
    "DriverSpec",
    "FakeHost",
    "FakeHostSpec",
    "GpuSpec",
    "ProcessSpec",
    "ToolkitSpec",
    "VenvSpec",
    "WrapperSpec",
    "b200_old_driver",
    "build_fake_host",
    "cuda_libs",
    "fake_systemctl",
    "fixture_text",
    "gb10_triton_old_ptxas",
    "h200_driver_550_cu128",
    "healthy_h100",
    "mig_uuid",
    "no_driver",
    "nvjitlink_shadowed_login",
    "nvrtc_shadowed_server",
    "pip_toolkit_mixed",
    "pypi_torch_arch_flags",
    "reference_ct200",
    "rtx5090_cu124_torch",
    "ssh_env",
    "standins",
    "torch_python_lib",
]
