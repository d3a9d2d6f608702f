"""The toolkit a JIT would use cannot emit code for a visible GPU's SM (ptxas target tables in
`tui/core/tables/ptxas_targets.py`, derived from the real `ptxas --help` of each release), or
FlashInfer passes its own check with targets its nvcc cannot build (`12.0f` or `10.3a` with
nvcc 12.8). `critical` when FlashInfer is installed (it JIT-compiles at run time), `warning`
otherwise, `info` when a `flashinfer-jit-cache` would serve the modules without compiling.

```
[critical] nvcc 12.8 cannot build code for NVIDIA B300 (SM 10.3)
The toolkit a JIT build uses here comes from CUDA_HOME=/usr/local/cuda-12.8 and is CUDA 12.8; its
ptxas does not know the GPU (SM 10.3 needs nvcc ≥ 12.9). Every JIT-compiled extension (FlashInfer,
torch.utils.cpp_extension, Triton with this ptxas) fails with 'Unsupported gpu architecture' for it.
```

Toolkits back to CUDA 10.2 are judged: the rows 11.7 and 12.0 come from real ptxas binaries
(the `nvidia-cuda-nvcc-cu11`/`-cu12` wheels), 10.2, 11.0 and 11.1 from cited public sources
(`tui/core/tables/ptxas_targets.py`: NVIDIA's 11.1 release notes, clang's CUDA version table, the LLVM
commit recording that CUDA 11.0 removed sm_30/sm_32, nixpkgs' per-SM CUDA ranges); a release
between two rows is answered where they agree. So an nvcc 11.4 with an L40S or an H100 fires
(`SM 8.9 needs nvcc ≥ 11.8`), and the stated need is never a wrong minimum: a GPU a newer
toolkit dropped asks for an older one (`SM 7.0 was dropped after CUDA 12.9: use nvcc ≤ 12.9`),
and where unrecorded releases lie before the first one known to build a target the text gives
the range (`SM 8.7 needs an nvcc newer than 11.1 (the first one known to build it is 11.7)`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui.core.facts import Facts
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import cc_text as _cc
from tui.core.rules.rulekit import finding as _finding
from tui.core.rules.rulekit import gpu_evidence as _gpu_evidence
from tui.core.rules.rulekit import gpu_names as _gpu_names
from tui.core.rules.rulekit import toolkit_evidence as _toolkit_evidence
from tui.core.rules.subject import Subject
from tui.core.tables import ptxas_targets

ID = "nvcc-too-old-for-gpu"


def rule_nvcc_too_old(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        v = s.jit_version
        if v is None:
            continue
        cannot = [cc for cc in s.devices if ptxas_targets.accepts(v, f"{cc[0]}{cc[1]}") is False]
        r = s.replay
        unbuildable: list[str] = []
        if r is not None and r.check_cuda_arch == "pass" and r.compiles is False:
            unbuildable = [
                t
                for t in r.target_cuda_archs
                if ptxas_targets.accepts(v, t.replace(".", "")) is False
            ]
        if not cannot and not unbuildable:
            continue
        jit_cache = s.python.flashinfer_jit_cache_version if s.python else None
        severity: Severity = "critical" if r is not None else "warning"
        evidence = [s.jit_origin, _toolkit_evidence(s.jit_toolkit, s.jit_nvcc)]
        evidence += _gpu_evidence(facts, cannot or s.devices)
        if cannot:
            needs = ", ".join(
                f"SM {_cc(cc)} {ptxas_targets.toolkit_need(f'{cc[0]}{cc[1]}', v)}" for cc in cannot
            )
            title = f"nvcc {v} cannot build code for {_gpu_names(facts, cannot)}"
            explanation = (
                f"The toolkit a JIT build uses here comes from {s.jit_origin} and is CUDA {v}; "
                f"its ptxas does not know the GPU ({needs}). Every JIT-compiled extension "
                "(FlashInfer, torch.utils.cpp_extension, Triton with this ptxas) fails with "
                "'Unsupported gpu architecture' for it."
            )
        else:
            gencodes = ", ".join(f"compute_{t.replace('.', '')}" for t in unbuildable)
            title = f"nvcc {v} cannot build FlashInfer's targets {', '.join(unbuildable)}"
            explanation = (
                f"FlashInfer {r.version if r else ''} passes its own arch check with "
                f"TARGET_CUDA_ARCHS = {list(r.target_cuda_archs) if r else []}, but the nvcc it "
                f"invokes ({s.jit_nvcc}, CUDA {v}) does not accept {gencodes}: the first JIT "
                "build fails with 'Unsupported gpu architecture'."
            )
            evidence.append(f"TARGET_CUDA_ARCHS = {list(r.target_cuda_archs) if r else []}")
            if jit_cache:
                severity = "info"
                explanation += (
                    f" flashinfer-jit-cache {jit_cache} is installed: modules it ships load "
                    "without compiling, so only modules missing from it are affected."
                )
        if r is None:
            explanation += (
                " Nothing here JIT-compiles at run time (no FlashInfer), so this matters only "
                "for building extensions."
            )
        yield _finding(ID, severity, title, explanation, evidence, s)


FINDING = FindingRecord(
    id=ID,
    title="The JIT toolkit cannot build code for a visible GPU",
    severities=("critical", "warning", "info"),
    reads=(
        "toolkits.version",
        "gpus.compute_cap",
        "contexts.vars",
        "pythons.flashinfer_version",
        "pythons.flashinfer_jit_cache_version",
    ),
    rules=(rule_nvcc_too_old,),
    fixes=(
        "use-installed-toolkit",
        "set-flashinfer-arch-list",
        "install-cuda-toolkit-pip",
        "install-cuda-toolkit-apt",
    ),
    cause="SM {sm} + nvcc {jit}",
    consequence="the JIT cannot build for the GPU",
    implicates=("jit",),
    fires_when="the JIT toolkit cannot emit code for a visible GPU",
    example="nvcc 12.8 and a B300 (SM 10.3 needs ≥ 12.9)",
    doc=__doc__ or "",
)
