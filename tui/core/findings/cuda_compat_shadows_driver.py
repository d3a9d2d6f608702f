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

from tui.core.findings.record import FindingRecord
from tui.core.rules_compat import rule_compat_shadows

ID = "cuda-compat-shadows-driver"


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
