"""CUDA forward-compatibility libraries (the `cuda-compat-<major>-<minor>` package:
`/usr/local/cuda-X.Y/compat/libcuda.so.<driver version>`) load ahead of the driver's own
`libcuda` where they cannot work. The probe reads `/etc/ld.so.conf` and `ld.so.conf.d/*.conf`
and lists the `libcuda.so.<version>` files in the directories they name, in
`/usr/local/cuda*/compat*` and in the session's `LD_LIBRARY_PATH`. The loader takes the first
`libcuda.so.1` in `LD_LIBRARY_PATH` (each environment's own), then in the configured
directories, files in name order (`00-cuda-compat.conf` before `x86_64-linux-gnu.conf`, where
the container runtime puts the host's `libcuda`). When that first one is a compat build
(`critical`):

- older than the kernel module (`/proc/driver/nvidia/version`): error 803,
  cudaErrorSystemDriverMismatch, *system has unsupported display driver / cuda driver
  combination* — the shape of gpustack/gpustack#4678 (vLLM ≥ 0.15 images add an `ld.so.conf`
  entry; on driver 580 hosts *Error 803*; the workaround put the driver's directory first) and
  llm-d/llm-d#706;
- newer, on a GPU forward compatibility does not support (it "is applicable only for systems
  with NVIDIA Data Center GPUs, select NGC Server Ready SKUs of RTX cards, Jetson boards",
  NVIDIA's CUDA Compatibility guide, Forward Compatibility): error 804,
  cudaErrorCompatNotSupportedOnDevice, *forward compatibility was attempted on non supported HW*.

Silent: a newer compat libcuda on a data-center GPU (forward compatibility as designed), the
same version as the driver, a compat directory nothing names.

Fix `drop-cuda-compat-path`: `LD_LIBRARY_PATH` without its compat directories for the serving
unit (drop-in) and the venv or login profile, and each `ld.so.conf.d` file naming a compat
directory renamed to `….detective-tui-<stamp>.disabled` (never deleted) followed by
`ldconfig` (skipped on a root-prefixed host: that cache belongs to the machine that boots it);
undo renames it back. `tests/test_compat_shadows.py` applies it to a fake host, re-probes
(clean), undoes it and re-probes (the finding is back).

Example — the demo host `pro6000-compat` (an RTX PRO 6000 workstation on driver 580.95.05
running an image whose `/etc/ld.so.conf.d/00-cuda-compat.conf` names 12.9's compat directory;
12.9 U1's driver is 575.57.08, cuda-facts §3.1):

```
[critical] cuda-compat-shadows-driver CUDA compat libcuda 575.57.08 loads instead of driver 580.95.05's
/etc/ld.so.conf.d/00-cuda-compat.conf puts /usr/local/cuda-12.9/compat in the loader's cache ahead
of the driver's libraries, so processes load the CUDA forward-compatibility libcuda from there
instead of the one installed with the driver: the compat libcuda 575.57.08 is older than the kernel
module 580.95.05: CUDA initialisation fails with error 803 ('system has unsupported display driver /
cuda driver combination'; torch: 'Unexpected error from cudaGetDeviceCount() … Error 803'). Forward
compatibility is for running a newer CUDA on an older data-center driver; here it is not needed or
cannot work. Stop loading the compat directory (drop-cuda-compat-path). (Judged in the pid 5151
sglang.launch_server environment.)
evidence: /usr/local/cuda-12.9/compat/libcuda.so.575.57.08 (/etc/ld.so.conf.d/00-cuda-compat.conf) ·
          kernel module 580.95.05 · GPU0 NVIDIA RTX PRO 6000 Blackwell Workstation Edition
fixes: [('drop-cuda-compat-path', ('cuda-compat-shadows-driver',))]
```
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from tui.core.facts import EnvContext, Facts
from tui.core.findings import Finding
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding
from tui.core.rules.subject import Subject
from tui.core.tables.support_matrix import driver_cuda_from_number

# The rule, in short:
# ``cuda-compat-shadows-driver``: CUDA forward-compatibility libraries load ahead of the
# driver's ``libcuda`` where they cannot work.
#
# The ``cuda-compat-<major>-<minor>`` package (``/usr/local/cuda-X.Y/compat``) ships a newer
# ``libcuda.so`` for an older kernel driver. Forward compatibility "is applicable only for
# systems with NVIDIA Data Center GPUs, select NGC Server Ready SKUs of RTX cards, Jetson
# boards" (NVIDIA, CUDA Compatibility: Forward Compatibility). The loader takes the first
# ``libcuda.so.1`` it finds — ``LD_LIBRARY_PATH`` first, then the directories of
# ``/etc/ld.so.conf`` and ``ld.so.conf.d/*.conf`` in file-name order (an image's
# ``00-compat.conf`` sorts before ``x86_64-linux-gnu.conf``, where the runtime puts the host's
# ``libcuda``). A compat ``libcuda`` older than the kernel module gives error 803
# (cudaErrorSystemDriverMismatch, "system has unsupported display driver / cuda driver
# combination"); a newer one on a GPU forward compatibility does not support gives 804
# (cudaErrorCompatNotSupportedOnDevice).

ID = "cuda-compat-shadows-driver"

LIBCUDA = re.compile(r"libcuda\.so\.(\d+\.\d+(?:\.\d+)?)$")
# consumer and workstation boards: not "Data Center GPUs" or "NGC Server Ready" RTX SKUs
NO_FORWARD_COMPAT = ("GeForce", "TITAN", "Workstation", "Max-Q", "Laptop", "Quadro")


@dataclass(frozen=True)
class CompatLoad:
    directory: str
    version: str
    via: str  # "LD_LIBRARY_PATH" or the ld.so.conf.d file naming the directory


def is_compat_dir(directory: str) -> bool:
    return any("compat" in part for part in directory.split("/"))


def without_compat(ld_library_path: str) -> str:
    """``LD_LIBRARY_PATH`` with its compat directories removed."""
    return ":".join(d for d in ld_library_path.split(":") if d and not is_compat_dir(d))


def _versions(facts: Facts) -> dict[str, str]:
    """{directory: libcuda version} of the libcuda builds the probe found."""
    out = {}
    for path in facts.loader.libcuda:
        m = LIBCUDA.search(path)
        if m:
            out.setdefault(posixpath.dirname(path), m.group(1))
    return out


def search_order(facts: Facts, ctx: EnvContext | None) -> list[tuple[str, str]]:
    """(directory, how it is searched) in the loader's order, for ``ctx``'s environment."""
    order = []
    for d in ((ctx.vars.get("LD_LIBRARY_PATH") if ctx else None) or "").split(":"):
        if d.startswith("/"):
            order.append((d.rstrip("/"), "LD_LIBRARY_PATH"))
    confs = sorted(facts.loader.ld_conf, key=lambda fc: (fc[0] != "/etc/ld.so.conf", fc[0]))
    order += [(d.rstrip("/"), f) for f, d in confs if d.startswith("/")]
    return order


def first_compat(facts: Facts, ctx: EnvContext | None) -> CompatLoad | None:
    """The libcuda the loader takes, when it is a compat build."""
    versions = _versions(facts)
    for directory, via in search_order(facts, ctx):
        if directory in versions:
            if not is_compat_dir(directory):
                return None
            return CompatLoad(directory, versions[directory], via)
    return None


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def forward_compat(facts: Facts, ctx: EnvContext | None) -> tuple[CompatLoad, str] | None:
    """The compat libcuda ``ctx``'s processes load when it works as designed — newer than the
    kernel module, on GPUs forward compatibility supports — with the highest CUDA it runs (the
    toolkit whose minimum driver its version meets): nvidia-smi prints the kernel driver's
    CUDA, not this one."""
    have = _version(facts.driver.proc_version or facts.driver.driver_version)
    load = first_compat(facts, ctx)
    compat = _version(load.version) if load else None
    if load is None or compat is None or have is None or compat <= have:
        return None
    if any(w in g.name for g in facts.gpus for w in NO_FORWARD_COMPAT):
        return None
    cuda = driver_cuda_from_number(load.version)
    return (load, cuda) if cuda else None


def rule_compat_shadows(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    kernel = facts.driver.proc_version or facts.driver.driver_version
    have = _version(kernel)
    if have is None:
        return
    seen: set[tuple[str, str]] = set()
    for s in subs:
        load = first_compat(facts, s.context)
        if load is None or (load.directory, load.via) in seen:
            continue
        seen.add((load.directory, load.via))
        compat = _version(load.version)
        if compat is None or compat == have:
            continue
        unsupported = [g for g in facts.gpus if any(w in g.name for w in NO_FORWARD_COMPAT)]
        if compat > have and not unsupported:
            continue  # forward compatibility as designed: a newer libcuda on a data-center GPU
        if compat < have:
            code = (
                f"the compat libcuda {load.version} is older than the kernel module {kernel}: "
                "CUDA initialisation fails with error 803 ('system has unsupported display "
                "driver / cuda driver combination'; torch: 'Unexpected error from "
                "cudaGetDeviceCount() … Error 803')"
            )
        else:
            names = ", ".join(sorted({g.name for g in unsupported}))
            code = (
                f"the compat libcuda {load.version} is newer than the kernel module {kernel}, "
                f"but forward compatibility does not support {names} (only data-center GPUs, "
                "select NGC Server Ready RTX SKUs and Jetson): error 804 ('forward "
                "compatibility was attempted on non supported HW')"
            )
        how = (
            f"LD_LIBRARY_PATH of the {s.context.label} environment lists {load.directory}"
            if load.via == "LD_LIBRARY_PATH" and s.context
            else f"{load.via} puts {load.directory} in the loader's cache ahead of the driver's "
            "libraries"
        )
        yield finding(
            ID,
            "critical",
            f"CUDA compat libcuda {load.version} loads instead of driver {kernel}'s",
            f"{how}, so processes load the CUDA forward-compatibility libcuda from there instead "
            f"of the one installed with the driver: {code}. Forward compatibility is for running "
            "a newer CUDA on an older data-center driver; here it is not needed or cannot work. "
            "Stop loading the compat directory (drop-cuda-compat-path).",
            [
                f"{load.directory}/libcuda.so.{load.version} ({load.via})",
                f"kernel module {kernel}",
                *(f"GPU{g.index} {g.name}" for g in unsupported[:2]),
            ],
            s,
        )


FINDING = FindingRecord(
    id=ID,
    title="CUDA compat libraries load ahead of the driver's libcuda",
    severities=("critical",),
    reads=(
        "loader.ld_conf",
        "loader.libcuda",
        "contexts.vars",
        "driver.driver_version",
        "driver.proc_version",
        "gpus.name",
    ),
    rules=(rule_compat_shadows,),
    fixes=("drop-cuda-compat-path",),
    cause="CUDA compat libs ahead of driver {driver}",
    consequence="CUDA cannot initialise",
    fires_when=(
        "a CUDA forward-compatibility `libcuda` (`/usr/local/cuda-X.Y/compat`) loads ahead of the "
        "driver's — through `LD_LIBRARY_PATH` or an `ld.so.conf.d` entry — while older than the "
        "kernel module (error 803) or on a GPU forward compatibility does not support (804)"
    ),
    example=(
        "a vLLM image's `00-cuda-compat.conf` → 12.9's libcuda 575.57.08 on driver 580.95.05 → *Error "
        "803*"
    ),
    doc=__doc__ or "",
    examples=("gpustack/gpustack#4678", "llm-d/llm-d#706"),
)
