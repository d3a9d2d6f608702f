"""The finding registry: every finding record, one line each, in evaluation order.

A new finding is one module in this package that defines ``FINDING`` (a ``FindingRecord``),
and one line below (docs/adding-a-finding.md). The id lists, the evaluation order of the
rules, the what-if candidates, the hosts table's reason lines, the CUDA boxes a finding
implicates, docs/findings.md and the README table are all read from ``FINDINGS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from tui.core.findings import (
    container_lost_gpu_access,
    container_without_gpu_runtime,
    cuda_compat_shadows_driver,
    cuda_init_fails,
    cuda_library_shadowed,
    cuda_visible_devices_selects_no_gpu,
    driver_too_old_for_nvcc,
    driver_too_old_for_torch,
    extension_torch_abi_mismatch,
    fabric_manager_not_running,
    flashinfer_arch_rejected,
    flashinfer_replay_disagrees,
    flashinfer_replay_unverified,
    jit_nvcc_missing,
    libcuda_stub_on_library_path,
    mig_device_not_selected,
    no_nvidia_driver,
    nvcc_too_old_for_gpu,
    nvcc_torch_major_mismatch,
    toolkit_headers_mismatch,
    toolkit_shadowed,
    torch_cpu_build,
    torch_lacks_gpu_arch,
    triton_ptxas_too_old,
    wheel_file_conflict,
)
from tui.core.findings.record import FindingRecord, Rule

FINDINGS: tuple[FindingRecord, ...] = (
    no_nvidia_driver.FINDING,
    flashinfer_arch_rejected.FINDING,
    nvcc_too_old_for_gpu.FINDING,
    nvcc_torch_major_mismatch.FINDING,
    driver_too_old_for_torch.FINDING,
    driver_too_old_for_nvcc.FINDING,
    torch_lacks_gpu_arch.FINDING,
    toolkit_shadowed.FINDING,
    jit_nvcc_missing.FINDING,
    extension_torch_abi_mismatch.FINDING,
    torch_cpu_build.FINDING,
    container_without_gpu_runtime.FINDING,
    mig_device_not_selected.FINDING,
    cuda_visible_devices_selects_no_gpu.FINDING,
    container_lost_gpu_access.FINDING,
    libcuda_stub_on_library_path.FINDING,
    fabric_manager_not_running.FINDING,
    cuda_init_fails.FINDING,
    cuda_compat_shadows_driver.FINDING,
    triton_ptxas_too_old.FINDING,
    cuda_library_shadowed.FINDING,
    wheel_file_conflict.FINDING,
    toolkit_headers_mismatch.FINDING,
    flashinfer_replay_unverified.FINDING,
    flashinfer_replay_disagrees.FINDING,
)
BY_ID: Mapping[str, FindingRecord] = MappingProxyType({f.id: f for f in FINDINGS})
if len(BY_ID) != len(FINDINGS):
    raise RuntimeError("two finding records share an id")
FINDING_IDS: tuple[str, ...] = tuple(BY_ID)
# every record's rules in registry order, then the late ones (they refine earlier findings)
RULES: tuple[Rule, ...] = tuple(
    rule for late in (False, True) for f in FINDINGS for rule in (f.late_rules if late else f.rules)
)
