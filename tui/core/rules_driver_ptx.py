"""``driver-too-old-for-torch`` at ``warning``: the driver runs torch's cubins, not newer PTX.

Minor-version compatibility lets a driver of an older minor of the same CUDA major run
everything compiled to SASS with a newer toolkit of that major — but PTX is compiled by the
driver, and a driver cannot JIT-compile PTX of a newer ISA than its own CUDA: error 222,
``CUDA_ERROR_UNSUPPORTED_PTX_VERSION``, "the provided PTX was compiled with an unsupported
toolchain" (cuda-facts §3.2; vllm-project/vllm#28030). ``tui.core.rules.rule_driver_torch``
reports a driver that cannot run torch at all (``critical``); this rule the case between.
A GPU that torch reaches only through PTX (a ``compute_XY`` entry, no matching cubin) gets no
torch kernel at all: then it is ``critical`` too.

Nothing is said when nothing on the host needs such PTX (issue 22 item 1): every GPU has a
torch cubin, the toolkit a JIT build would use is one the driver runs (its PTX is of the
driver's CUDA or older), and no installed package ships kernels built with torch's CUDA that
may reach the driver as PTX (``PTX_SHIPPING``, the extensions the explanation names).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from tui.core import compat
from tui.core.facts import Facts, PythonEnv
from tui.core.findings import Finding, Severity
from tui.core.rulekit import finding as _finding
from tui.core.rulekit import gpu_evidence as _gpu_evidence

if TYPE_CHECKING:
    from tui.core.subject import Subject

FINDING_ID = "driver-too-old-for-torch"
# distributions whose compiled kernels are built with torch's CUDA and carry PTX for the GPUs
# they have no cubin for (the AOT wheels of vLLM and FlashInfer, sgl-kernel — renamed
# sglang-kernel —, flash-attn)
PTX_SHIPPING = ("vllm", "flashinfer-jit-cache", "sgl-kernel", "sglang-kernel", "flash-attn")


def _mm(text: str | None) -> tuple[int, int] | None:
    try:
        v = Version(text or "")
    except InvalidVersion:
        return None
    return v.major, v.minor


def _ptx_only(arch_list: Sequence[str], cc: tuple[int, int]) -> bool:
    """torch reaches this GPU only through a compute_XY (PTX) entry."""
    cubins = [a for a in arch_list if a.startswith("sm_")]
    return not compat.torch_runs_on(cubins, cc) and compat.torch_runs_on(arch_list, cc)


def _jit_runs(s: Subject, have: tuple[int, int]) -> bool:
    """The toolkit a JIT build would use exists and its CUDA is the driver's or older."""
    jit = _mm(s.jit_version)
    return jit is not None and jit <= have


def _ptx_shipping(py: PythonEnv) -> list[str]:
    names = {k.lower().replace("_", "-") for k in py.packages}
    return [name for name in PTX_SHIPPING if name in names]


def rule_driver_ptx(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    d = facts.driver
    if d.state != "ok":
        return
    driver = d.driver_version or d.proc_version
    have = _mm(facts.driver.max_cuda)
    for s in subs:
        py = s.python
        want = _mm(py.torch_cuda) if py else None
        if py is None or have is None or want is None:
            continue
        if have[0] != want[0] or have >= want:
            continue  # another major is the critical rule's; same or newer minor is fine
        if compat.driver_runs_cuda(driver, d.driver_cuda, py.torch_cuda or "") is False:
            continue  # below the minor-version floor: the critical rule reports it
        arch = py.torch_arch_list or compat.torch_arch_list(py.torch_cuda, facts.host.arch) or ()
        ptx_gpus = [cc for cc in dict.fromkeys(s.devices) if _ptx_only(arch, cc)]
        if not ptx_gpus and _jit_runs(s, have) and not _ptx_shipping(py):
            continue  # nothing here hands the driver PTX of torch's newer CUDA
        severity: Severity = "critical" if ptx_gpus else "warning"
        tmm = f"{want[0]}.{want[1]}"
        fixed_by = compat.TOOLKIT_MIN_DRIVER.get(tmm)
        branch = f"a driver ≥ {fixed_by} (the CUDA {tmm} branch)" if fixed_by else "a newer driver"
        text = (
            f"torch {py.torch_version} is built with CUDA {tmm}; driver {driver} supports CUDA "
            f"{have[0]}.{have[1]}, so minor-version compatibility runs its compiled kernels "
            f"(SASS) — but the driver cannot JIT-compile PTX from the CUDA {tmm} toolchain: "
            "every kernel that reaches it as PTX fails with 'the provided PTX was compiled with "
            "an unsupported toolchain' (error 222). That is any GPU torch has no cubin for "
            "(only a compute_XY entry), and PTX-only kernels of extensions built with CUDA "
            f"≥ {tmm}: vLLM's and FlashInfer's AOT wheels, sgl-kernel, flash-attn. Install "
            f"{branch}, or a torch built for CUDA {have[0]}.{have[1]} or older."
        )
        if ptx_gpus:
            names = ", ".join(f"SM {a}.{b}" for a, b in ptx_gpus)
            text += (
                f" torch reaches {names} only through PTX ({' '.join(arch)}): no torch kernel "
                "runs there."
            )
        yield _finding(
            FINDING_ID,
            severity,
            f"Driver {driver} (CUDA {have[0]}.{have[1]}) cannot JIT-compile torch's CUDA {tmm} PTX",
            text,
            [
                f"driver {driver}",
                f"nvidia-smi CUDA Version {d.driver_cuda or 'unknown'}",
                f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})",
                *(_gpu_evidence(facts, ptx_gpus) if ptx_gpus else []),
                *(
                    f"{name} installed (its kernels may reach the driver as PTX)"
                    for name in _ptx_shipping(py)
                ),
            ],
            s,
        )
