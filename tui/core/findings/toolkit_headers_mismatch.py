"""The toolkit a JIT build uses — the one FlashInfer's replay (or torch's `CUDA_HOME` search)
resolves — is assembled from parts of different CUDA releases: its nvcc, the runtime headers
in its `include/` (`CUDART_VERSION` of `cuda_runtime_api.h`, read by the probe, never
compiled), and, for a pip toolkit (`site-packages/nvidia/cu13`), the dist-info versions of
`nvidia-cuda-nvcc`, `-runtime`, `-crt`, `nvidia-nvvm` and `nvidia-cuda-cccl` in that
interpreter. It fires when they disagree in major.minor. When the compiler and the headers
differ, CCCL (CUB/Thrust/libcu++, included by FlashInfer's kernels) stops every build:
`#error "CUDA compiler and CUDA toolkit headers are incompatible, please check your include
paths"` (`cuda/std/__cccl/cuda_toolkit.h` of the 13.0 wheels; the slow test reads it).
`critical` with FlashInfer installed (it JIT-compiles at run time), `warning` otherwise.

Example — a venv whose `CUDA_HOME` is the pip toolkit, with `pip install nvidia-cuda-nvcc`
having brought nvcc 13.3 next to the CUDA 13.0 runtime torch 2.11.0+cu130 pins (test host
`pip_toolkit_mixed`):

```
[critical] The JIT toolkit /opt/venv/lib/python3.11/site-packages/nvidia/cu13 mixes CUDA 13.0 and 13.3
The toolkit a JIT build uses here (CUDA_HOME=/opt/venv/lib/python3.11/site-packages/nvidia/cu13) is assembled from
parts of different CUDA releases: nvcc 13.3; runtime headers 13.0; nvidia-cuda-nvcc 13.3; nvidia-cuda-runtime 13.0;
nvidia-cuda-crt 13.3; nvidia-nvvm 13.3. nvcc 13.3 compiles against the CUDA 13.0 runtime headers of …/nvidia/cu13/
include → CCCL (CUB/Thrust, included by FlashInfer's and most CUDA extensions' kernels) stops every such build with
'#error "CUDA compiler and CUDA toolkit headers are incompatible, please check your include paths"'. Pin the pip
wheels of /opt/venv/bin/python3 to CUDA 13.0 (the runtime torch uses), or point CUDA_HOME at a complete toolkit of
that release.
fixes:    align-cuda-wheels version=13.0.2
```

In the wild: flashinfer-ai/flashinfer#3493 (and vllm-project/vllm#44305) — `CUDA_HOME` at
`site-packages/nvidia/cu13` with nvcc 13.3.33 and torch 2.11.0+cu130 gives "CUDA compiler and
toolkit headers are incompatible" on the first JIT build.

Fixes: `use-installed-toolkit` when a toolkit whose nvcc and headers are one release is on
disk; `align-cuda-wheels` (param `version`, a `cuda-toolkit` release, default the newest of
the runtime's minor) runs `pip install "cuda-toolkit[nvcc,crt,nvvm,cccl]==<release>"` in that
venv — the metapackage pins every part exactly — behind a check that does nothing when every
part is already of that minor; a pip plan like `match-extension-to-torch`'s: its undo puts
back every package as the `pip freeze` recorded before it ran, and the venv's files as they
were (README, *The pip plans*).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from tui.core.facts import Facts, PythonEnv, Toolkit
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding as _finding
from tui.core.rules.subject import Subject, toolkit_identity

# The rule, in short:
# ``toolkit-headers-mismatch``: the parts of the toolkit a JIT build uses disagree.
#
# A JIT build runs ``$CUDA_HOME/bin/nvcc`` and includes ``$CUDA_HOME/include``; when that
# toolkit is assembled from pip wheels (``site-packages/nvidia/cu13``) each part is a wheel of
# its own (``nvidia-cuda-nvcc``, ``-runtime``, ``-crt``, ``nvidia-nvvm``, ``nvidia-cuda-cccl``),
# and pip can leave them at different CUDA minors. CCCL — the CUB/Thrust headers FlashInfer's
# kernels include — compares the compiler with ``CUDART_VERSION`` of the runtime headers and
# stops every build: ``#error "CUDA compiler and CUDA toolkit headers are incompatible, please
# check your include paths"`` (``cuda/std/__cccl/cuda_toolkit.h`` of the 13.0 wheels). The
# probe reads ``CUDART_VERSION`` from ``include/cuda_runtime_api.h`` (never compiles) and the
# wheels' dist-info versions.

ID = "toolkit-headers-mismatch"

# the wheels a pip toolkit (site-packages/nvidia/cu13) is made of: dist → what it brings
PIP_PARTS = {
    "nvidia-cuda-nvcc": "nvcc",
    "nvidia-cuda-runtime": "runtime headers and libcudart",
    "nvidia-cuda-crt": "nvcc's crt headers",
    "nvidia-nvvm": "cicc/libnvvm",
    "nvidia-cuda-cccl": "CCCL (CUB, Thrust, libcu++)",
}
CCCL_ERROR = (
    "CUDA compiler and CUDA toolkit headers are incompatible, please check your include paths"
)


def mm(version: str | None) -> str | None:
    try:
        v = Version(version or "")
    except InvalidVersion:
        return None
    return f"{v.major}.{v.minor}"


@dataclass(frozen=True)
class Part:
    name: str
    version: str  # major.minor
    source: str  # where it was read


def pip_owner(facts: Facts, tk: Toolkit) -> PythonEnv | None:
    """The interpreter whose site-packages holds this (pip) toolkit."""
    home = posixpath.normpath(tk.home)
    for py in facts.pythons:
        for site in py.site_packages:
            if home.startswith(posixpath.normpath(site) + "/nvidia/"):
                return py
    return None


def parts_of(facts: Facts, tk: Toolkit) -> list[Part]:
    parts = []
    if tk.version:
        parts.append(Part("nvcc", tk.version, f"nvcc {tk.full_version or tk.version} at {tk.nvcc}"))
    if tk.headers_version:
        parts.append(
            Part(
                "runtime headers",
                tk.headers_version,
                f"CUDART_VERSION {tk.headers_version} in {tk.home}/include/cuda_runtime_api.h",
            )
        )
    owner = pip_owner(facts, tk)
    if owner is not None:
        for dist in PIP_PARTS:
            version = owner.packages.get(dist)
            if version and mm(version):
                parts.append(Part(dist, mm(version) or "", f"{dist} {version} in {owner.path}"))
    return parts


def mismatched(facts: Facts, tk: Toolkit | None) -> list[Part]:
    """The toolkit's parts when they disagree in major.minor (empty: they agree)."""
    if tk is None or not tk.exists:
        return []
    parts = parts_of(facts, tk)
    return parts if len({p.version for p in parts}) > 1 else []


def target_minor(facts: Facts, tk: Toolkit) -> str | None:
    """The minor the parts should share: the runtime's (torch pins it), else the headers'."""
    owner = pip_owner(facts, tk)
    runtime = mm(owner.packages.get("nvidia-cuda-runtime")) if owner else None
    if runtime:
        return runtime
    if owner is not None and owner.torch_cuda:
        return mm(owner.torch_cuda)
    return tk.headers_version


def rule_headers_mismatch(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    seen: set[tuple[str, str | None]] = set()
    for s in subs:
        tk = s.jit_toolkit
        parts = mismatched(facts, tk)
        if tk is None or not parts:
            continue
        key = (toolkit_identity(tk), s.python.path if s.python else None)
        if key in seen:
            continue
        seen.add(key)
        nvcc = next((p for p in parts if p.name == "nvcc"), None)
        headers = next((p for p in parts if p.name == "runtime headers"), None)
        listing = "; ".join(f"{p.name} {p.version}" for p in parts)
        where = s.jit_origin if tk.home in s.jit_origin else f"{s.jit_origin}: {tk.home}"
        chain = (
            f"The toolkit a JIT build uses here ({where}) is assembled from parts of different "
            f"CUDA releases: {listing}."
        )
        if nvcc and headers and nvcc.version != headers.version:
            chain += (
                f" nvcc {nvcc.version} compiles against the CUDA {headers.version} runtime headers "
                f"of {tk.home}/include → CCCL (CUB/Thrust, included by FlashInfer's and most "
                f"CUDA extensions' kernels) stops every such build with '#error \"{CCCL_ERROR}\"'."
            )
        else:
            chain += (
                " nvcc runs and includes parts of another release (cicc, crt headers, CCCL), "
                "so JIT builds fail with errors that do not name the cause."
            )
        owner = pip_owner(facts, tk)
        target = target_minor(facts, tk)
        if owner is not None and target:
            chain += (
                f" Pin the pip wheels of {owner.path} to CUDA {target} (the runtime torch uses), "
                "or point CUDA_HOME at a complete toolkit of that release."
            )
        else:
            chain += " Point CUDA_HOME at a toolkit whose nvcc and headers are one release."
        severity: Severity = "critical" if s.replay is not None else "warning"
        if s.replay is None:
            chain += (
                " Nothing here JIT-compiles at run time (no FlashInfer), so this matters when "
                "building extensions."
            )
        evidence = [s.jit_origin, *(p.source for p in parts)]
        title = f"The JIT toolkit {tk.home} mixes CUDA " + " and ".join(
            sorted({p.version for p in parts}, key=Version)
        )
        yield _finding(ID, severity, title, chain, evidence, s)


FINDING = FindingRecord(
    id=ID,
    title="The JIT toolkit's nvcc, headers and wheels disagree",
    severities=("critical", "warning"),
    reads=("toolkits.version", "toolkits.headers_version", "pythons.packages", "contexts.vars"),
    rules=(rule_headers_mismatch,),
    fixes=("use-installed-toolkit", "align-cuda-wheels"),
    cause="nvcc {jit} vs its headers/wheels",
    consequence="JIT builds fail in the headers",
    implicates=("jit",),
    fires_when=(
        "the parts of the JIT toolkit disagree in major.minor: nvcc, `CUDART_VERSION` of its "
        "`include/cuda_runtime_api.h`, and for a pip toolkit the "
        "`nvidia-cuda-nvcc`/`-runtime`/`-crt`/`nvidia-nvvm`/`nvidia-cuda-cccl` wheels"
    ),
    example=(
        'pip nvcc 13.3 with the 13.0 runtime headers → CCCL `#error "CUDA compiler and CUDA toolkit '
        'headers are incompatible"`'
    ),
    doc=__doc__ or "",
    examples=("flashinfer-ai/flashinfer#3493", "vllm-project/vllm#44305"),
)
