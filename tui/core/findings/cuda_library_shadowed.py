"""A CUDA library torch loads is not the one it was built with, in a way that breaks it. For a
running server, `/proc/PID/maps` says what it really loaded (loaded beats installed); otherwise
the library is resolved as the dynamic loader would in that environment. torch's own
libraries carry a `DT_RPATH` naming the wheels' `nvidia/*/lib` (searched *before*
`LD_LIBRARY_PATH`), so `libcudart`, `libcublas`, `libcudnn`, `libnccl` are pinned; three are
not — `libnvJitLink` (cuSPARSE has no RPATH for it), `libcublasLt` (cuBLAS finds it through
its `RUNPATH`, which `LD_LIBRARY_PATH` precedes) and `libnvrtc` (cuDNN `dlopen`s it) — unless
torch loads them itself from the wheels right after `libtorch_global_deps.so`. Which it does
per release is a table read from the real wheels (`tui/core/torch_libs.py`; the slow test
`tests/test_torch_libs_wheels_slow.py`):

| torch | loads from the wheels itself | so `LD_LIBRARY_PATH` can shadow |
|---|---|---|
| 2.5.x (2.5.1 read) | nothing (only after a failed load) | nvJitLink, cuBLASLt, NVRTC |
| 2.6 – 2.8 (2.6.0, 2.8.0 read) | NVRTC, nvJitLink (when the wheels' cudart is loaded) | cuBLASLt |
| 2.9 (2.9.0 read) | NVRTC, nvJitLink | cuBLASLt |
| 2.10, 2.11 (read) | all of them, cuBLASLt before cuBLAS | nothing |

Without a library in the wheels, the next place is ld.so.cache (`ldconfig -p`, read by the
probe). It fires, `critical`, only where the difference breaks something: a library of another
CUDA major in the process (two runtimes), an nvJitLink or cuBLASLt older than the one the
wheels' cuSPARSE/cuBLAS need (`import torch` fails with `undefined symbol: … version
libnvJitLink.so.12`), or an NVRTC older than a visible GPU needs (runtime compilation — cuDNN's
runtime-fusion engines, torch's jiterator — cannot target it). The evidence names the
`LD_LIBRARY_PATH` entry and the unit or profile file that set it.

Example — the demo host `rtxpro-04` (8× RTX PRO 6000, torch 2.8.0+cu128, vLLM as a systemd
unit whose `Environment=` puts an old CUDA 12.4 first on `LD_LIBRARY_PATH`; the running server
has that toolkit's NVRTC mapped):

```
[critical] torch 2.8.0+cu128 has loaded libnvrtc 12.4 from /usr/local/cuda-12.4/targets/x86_64-linux/lib, not its own
pid 6060 vllm.entrypoints.openai.api_server has /usr/local/cuda-12.4/targets/x86_64-linux/lib/libnvrtc.so.12.4.127
mapped (CUDA 12.4, libnvrtc.so.12.4.127), through LD_LIBRARY_PATH entry /usr/local/cuda-12.4/lib64 instead of the
wheels' /opt/venv/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 (CUDA 12.8) → NVRTC 12.4 cannot
compile for SM 12.0 (needs CUDA ≥ 12.8): cuDNN's runtime-compiled engines (SDPA, convolutions), torch's jiterator
and every other runtime compilation fail with 'invalid value for --gpu-architecture'. Remove
/usr/local/cuda-12.4/lib64 from LD_LIBRARY_PATH where it is set (/etc/systemd/system/vllm.service) so the wheels'
own copies load.
evidence: LD_LIBRARY_PATH=/usr/local/cuda-12.4/lib64 (set in /etc/systemd/system/vllm.service) · …
fixes:    drop-shadowing-library-path entry=/usr/local/cuda-12.4/lib64
```

In the wild: infiniflow/ragflow#4466 — `import torch` fails with `…/nvidia/cusparse/lib/
libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12`; the
reporter's `ldd` shows `libnvJitLink.so.12 => /usr/local/cuda-12.1/lib64/libnvJitLink.so.12` and
`echo $LD_LIBRARY_PATH` prints `/usr/local/cuda-12.1/lib64:`. pytorch/pytorch#140797 is the
same with torch 2.5 (`__nvJitLinkComplete_12_4`); pytorch PRs #141063 and #145582 made torch
2.6 load nvJitLink and NVRTC from the wheels itself, which the table above reflects.

The fix `drop-shadowing-library-path` (param `entry`, one or more directories separated by
`:`) sets, for each serving unit, `LD_LIBRARY_PATH` to the value it starts with minus those
directories (a drop-in, or an environment file of its own when the unit reads
`EnvironmentFile=`), and the same for the shell's value in the venv's `activate` or the login
profile; the line that set it stays untouched and undo removes only what the fix wrote. The
what-if forgets a restarted server's mapped libraries (it has loaded nothing yet) and resolves
them as the loader would.
"""

from __future__ import annotations

from tui.core.findings.record import FindingRecord
from tui.core.rules_libs import rule_library_shadowed

ID = "cuda-library-shadowed"


FINDING = FindingRecord(
    id=ID,
    title="A CUDA library torch loads comes from another CUDA",
    severities=("critical",),
    reads=(
        "pythons.torch_version",
        "pythons.torch_cuda",
        "pythons.cuda_libs",
        "contexts.vars",
        "contexts.ld_libs",
        "contexts.mapped_libs",
        "ld_cache.path",
    ),
    rules=(rule_library_shadowed,),
    fixes=("drop-shadowing-library-path",),
    cause="a CUDA library from another CUDA",
    consequence="torch loads the wrong one",
    implicates=("torch",),
    fires_when=(
        "a CUDA library torch loads (a running server's `/proc/PID/maps`, else resolved as the loader "
        "would: `LD_LIBRARY_PATH` for what torch does not pin itself, per release; ld.so.cache) is of "
        "another CUDA major, an nvJitLink/cuBLASLt older than the wheels need, or an NVRTC older than "
        "the GPU needs"
    ),
    example=(
        "torch 2.5.1 + `LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64` → `undefined symbol: "
        "__nvJitLinkComplete_12_4`"
    ),
    doc=__doc__ or "",
    examples=("infiniflow/ragflow#4466", "pytorch/pytorch#140797"),
)
