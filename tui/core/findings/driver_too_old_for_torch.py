"""The driver's highest CUDA cannot run torch's CUDA build, minor-version compatibility
considered (CUDA 12.x runs on ≥ 525.60.13, 13.x on ≥ 580.65.06; `tui/core/tables/support_matrix.py`).
`critical`. No fix id changes a driver: the explanation says what to upgrade or reinstall.

```
[critical] Driver 575.57.08 (CUDA 12.9) cannot run torch built for CUDA 13.0
torch 2.11.0+cu130 needs a driver that supports CUDA 13.0; with minor-version compatibility any CUDA
13.x build runs on driver ≥ 580.65.06, but this driver is 575.57.08 (highest CUDA 12.9).
torch.cuda.is_available() is False and CUDA initialisation warns 'The NVIDIA driver on your system is
too old (found version 12090)'. Upgrade the driver to ≥ 580.65.06, or install a torch built for the
driver's CUDA (e.g. a cu128 wheel).
```

`warning` — the PTX case (CONTRACT: error 222): a driver of an older minor of the same
major runs torch's compiled kernels (minor-version compatibility) but cannot JIT-compile PTX
from torch's newer toolchain. Every kernel that reaches the driver as PTX fails — any GPU torch
has no cubin for, and PTX-only kernels of extensions built with that CUDA (vLLM's and
FlashInfer's AOT wheels, sgl-kernel, flash-attn). `critical` instead when a visible GPU gets
torch only through a `compute_XY` entry (no torch kernel runs on it). The explanation names
the driver branch that fixes it (`tui/core/tables/support_matrix.py`'s minimum driver per toolkit, NVIDIA's
table 3). Rule: `tui/core/findings/driver_too_old_for_torch.py`.

```
[warning] Driver 550.163.01 (CUDA 12.4) cannot JIT-compile torch's CUDA 12.8 PTX
torch 2.8.0+cu128 is built with CUDA 12.8; driver 550.163.01 supports CUDA 12.4, so minor-version
compatibility runs its compiled kernels (SASS) — but the driver cannot JIT-compile PTX from the CUDA
12.8 toolchain: every kernel that reaches it as PTX fails with 'the provided PTX was compiled with an
unsupported toolchain' (error 222). That is any GPU torch has no cubin for (only a compute_XY entry),
and PTX-only kernels of extensions built with CUDA ≥ 12.8: vLLM's and FlashInfer's AOT wheels,
sgl-kernel, flash-attn. Install a driver ≥ 570.26 (the CUDA 12.8 branch), or a torch built for CUDA
12.4 or older.
```

The driver's highest CUDA is nvidia-smi's "CUDA Version" — the kernel driver's — unless the
environment judged loads a CUDA forward-compatibility libcuda first (an `ld.so.conf.d` entry or
`LD_LIBRARY_PATH` naming `/usr/local/cuda-X.Y/compat`, newer than the kernel module, on a GPU
forward compatibility supports: the case `cuda-compat-shadows-driver` leaves silent). Then it is
that libcuda's: its version meets the minimum driver of CUDA X.Y, and both rules judge by it,
naming it in the evidence.

In the wild: vllm-project/vllm#28030 — a vLLM nightly built with a newer CUDA 12 minor on a
CUDA 12.8 driver: `torch.AcceleratorError: CUDA error: the provided PTX was compiled with an
unsupported toolchain.`
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from packaging.version import InvalidVersion, Version

from tui.core.facts import Facts, PythonEnv
from tui.core.findings import Finding, Severity
from tui.core.findings.cuda_compat_shadows_driver import forward_compat
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding as _finding
from tui.core.rules.rulekit import gpu_evidence as _gpu_evidence
from tui.core.rules.subject import Subject
from tui.core.tables import support_matrix

# The rule, in short:
# ``driver-too-old-for-torch`` at ``warning``: the driver runs torch's cubins, not newer PTX.
#
# Minor-version compatibility lets a driver of an older minor of the same CUDA major run
# everything compiled to SASS with a newer toolkit of that major — but PTX is compiled by the
# driver, and a driver cannot JIT-compile PTX of a newer ISA than its own CUDA: error 222,
# ``CUDA_ERROR_UNSUPPORTED_PTX_VERSION``, "the provided PTX was compiled with an unsupported
# toolchain" (cuda-facts §3.2; vllm-project/vllm#28030). ``rule_driver_torch``
# reports a driver that cannot run torch at all (``critical``); this rule the case between.
# A GPU that torch reaches only through PTX (a ``compute_XY`` entry, no matching cubin) gets no
# torch kernel at all: then it is ``critical`` too.
#
# Nothing is said when nothing on the host needs such PTX (issue 22 item 1): every GPU has a
# torch cubin, the toolkit a JIT build would use is one the driver runs (its PTX is of the
# driver's CUDA or older), and no installed package ships kernels built with torch's CUDA that
# may reach the driver as PTX (``PTX_SHIPPING``, the extensions the explanation names).

ID = "driver-too-old-for-torch"

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
    return not support_matrix.torch_runs_on(cubins, cc) and support_matrix.torch_runs_on(
        arch_list, cc
    )


def _jit_runs(s: Subject, have: tuple[int, int]) -> bool:
    """The toolkit a JIT build would use exists and its CUDA is the driver's or older."""
    jit = _mm(s.jit_version)
    return jit is not None and jit <= have


def _ptx_shipping(py: PythonEnv) -> list[str]:
    names = {k.lower().replace("_", "-") for k in py.packages}
    return [name for name in PTX_SHIPPING if name in names]


def _effective(facts: Facts, s: Subject) -> tuple[str | None, str | None, list[str]]:
    """(the libcuda version, its highest CUDA, evidence) this subject's processes run on: a
    forward-compatibility libcuda the loader takes first (an ld.so.conf.d entry or
    LD_LIBRARY_PATH) raises the driver's; otherwise the driver's own, as nvidia-smi says."""
    d = facts.driver
    fwd = forward_compat(facts, s.context)
    if fwd is None:
        return d.driver_version or d.proc_version, d.max_cuda, []
    load, cuda = fwd
    return (
        load.version,
        cuda,
        [
            f"forward-compatibility libcuda {load.version} (CUDA {cuda}) from {load.directory} ({load.via})"
        ],
    )


def rule_driver_ptx(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    d = facts.driver
    if d.state != "ok":
        return
    for s in subs:
        driver, driver_cuda, fwd = _effective(facts, s)
        have = _mm(driver_cuda)
        py = s.python
        want = _mm(py.torch_cuda) if py else None
        if py is None or have is None or want is None:
            continue
        if have[0] != want[0] or have >= want:
            continue  # another major is the critical rule's; same or newer minor is fine
        if support_matrix.driver_runs_cuda(driver, driver_cuda, py.torch_cuda or "") is False:
            continue  # below the minor-version floor: the critical rule reports it
        arch = (
            py.torch_arch_list
            or support_matrix.torch_arch_list(py.torch_cuda, facts.host.arch)
            or ()
        )
        ptx_gpus = [cc for cc in dict.fromkeys(s.devices) if _ptx_only(arch, cc)]
        if not ptx_gpus and _jit_runs(s, have) and not _ptx_shipping(py):
            continue  # nothing here hands the driver PTX of torch's newer CUDA
        severity: Severity = "critical" if ptx_gpus else "warning"
        tmm = f"{want[0]}.{want[1]}"
        fixed_by = support_matrix.TOOLKIT_MIN_DRIVER.get(tmm)
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
            ID,
            severity,
            f"Driver {driver} (CUDA {have[0]}.{have[1]}) cannot JIT-compile torch's CUDA {tmm} PTX",
            text,
            [
                f"driver {driver}",
                f"nvidia-smi CUDA Version {d.driver_cuda or 'unknown'}",
                *fwd,
                f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})",
                *(_gpu_evidence(facts, ptx_gpus) if ptx_gpus else []),
                *(
                    f"{name} installed (its kernels may reach the driver as PTX)"
                    for name in _ptx_shipping(py)
                ),
            ],
            s,
        )


def rule_driver_torch(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    d = facts.driver
    if d.state != "ok":
        return
    driver = d.driver_version or d.proc_version
    for s in subs:
        py = s.python
        if py is None or not py.torch_cuda:
            continue
        libcuda, libcuda_cuda, fwd = _effective(facts, s)
        if support_matrix.driver_runs_cuda(libcuda, libcuda_cuda, py.torch_cuda) is not False:
            continue
        floor = support_matrix.driver_floor_for(py.torch_cuda)
        have = support_matrix.parse_cc(d.driver_cuda)  # "12.8" → 12080, as the CUDA API reports it
        found = f"{have[0] * 1000 + have[1] * 10}" if have else "?"
        yield _finding(
            ID,
            "critical",
            f"Driver {driver} (CUDA {facts.driver.max_cuda or '?'}) cannot run torch built for "
            f"CUDA {py.torch_cuda}",
            f"torch {py.torch_version} needs a driver that supports CUDA {py.torch_cuda}; with "
            f"minor-version compatibility any CUDA {support_matrix.cuda_major(py.torch_cuda)}.x build "
            f"runs on driver ≥ {floor}, but this driver is {driver} (highest CUDA "
            f"{facts.driver.max_cuda or '?'}). torch.cuda.is_available() is False and CUDA "
            f"initialisation warns 'The NVIDIA driver on your system is too old (found version "
            f"{found})'. Upgrade the driver to ≥ {floor}, or install a torch built for the "
            f"driver's CUDA (e.g. a cu128 wheel).",
            [
                f"driver {driver}",
                f"nvidia-smi CUDA Version {d.driver_cuda or 'unknown'}",
                *fwd,
                f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})",
            ],
            s,
        )


FINDING = FindingRecord(
    id=ID,
    title="The driver cannot run torch's CUDA build",
    severities=("critical", "warning"),
    reads=(
        "driver.state",
        "driver.driver_version",
        "driver.driver_cuda",
        "pythons.torch_version",
        "pythons.torch_cuda",
        "pythons.torch_arch_list",
        "gpus.compute_cap",
        "gpus.name",
        "loader.ld_conf",
        "loader.libcuda",
        "contexts.vars",
    ),
    rules=(rule_driver_torch,),
    late_rules=(rule_driver_ptx,),
    cause="driver CUDA {driver_cuda} < torch CUDA {torch_cuda}",
    consequence="torch cannot initialise CUDA",
    implicates=("driver",),
    fires_when=(
        "the driver cannot run torch's CUDA build (minor-version compatibility: 12.x ≥ 525.60.13, "
        "13.x ≥ 580.65.06); `warning` when it runs torch's cubins but not PTX from torch's newer "
        "minor (error 222) — unless nothing needs that PTX: every GPU has a torch cubin, the JIT "
        "toolkit is the driver's CUDA or older, and no vLLM, FlashInfer AOT, sgl-kernel or "
        "flash-attn wheel is installed — `critical` again if a GPU gets torch only as PTX"
    ),
    example="driver 575.57.08 (CUDA 12.9) with a cu130 torch; driver 550 (CUDA 12.4) with cu128 → warning",
    doc=__doc__ or "",
    examples=("vllm-project/vllm#28030",),
)
