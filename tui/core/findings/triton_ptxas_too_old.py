"""The ptxas Triton runs for a visible GPU cannot target it. Triton assembles every kernel with
`ptxas --gpu-name=sm_<cc>a` (plain `sm_<cc>` below SM 9.0; before 3.3 only SM 9.0 got the `a`),
and it picks that ptxas itself: the one its override variable names, when that file runs and
prints its release, else the one in its wheel (`triton/backends/nvidia/bin/`). From 3.3 the
wheels carry a second one, `ptxas-blackwell`, for GPUs from SM 10.0 (from SM 9.0 in 3.9), with
its own variable. Which binary, which variable and which ptxas releases each Triton accepts are
a table read from the real wheels 3.0.0 – 3.9.0 (`tui/core/tables/triton_ptxas.py`; the slow test
`tests/test_triton_ptxas_wheels_slow.py` downloads them, runs their ptxas and their own
selection code):

| triton | bundled `ptxas` | `ptxas-blackwell` (override) | ptxas CUDA it accepts |
|---|---|---|---|
| 3.0.0, 3.1.0 | 12.4.99 | — | 10.0 – 12.x |
| 3.2.0 | 12.4.99 | — | 10.0 – 12.6 |
| 3.3.0, 3.3.1 | 12.4.99 | 12.8.61, SM ≥ 10.0 (`TRITON_PTXAS-BLACKWELL_PATH`: no shell can set it) | 10.0 – 12.x |
| 3.4.0 | 12.8.93 | — | 10.0 – 12.x |
| 3.5.0, 3.5.1 | 12.8.93 | — | any |
| 3.6.0 | 12.8.93 | 12.9.86, SM ≥ 10.0 (`TRITON_PTXAS_BLACKWELL_PATH`) | any |
| 3.7.0, 3.7.1 | 12.8.93 | 13.1.80, SM ≥ 10.0 | any |
| 3.8.0 | 12.9.86 | 13.3.33, SM ≥ 10.0 | any |
| 3.9.0 | 12.9.86 | 13.4.59, SM ≥ 9.0 | any |

The probe runs each bundled ptxas and each `TRITON_PTXAS*` override it finds (`--version`,
under the step deadline); a binary that cannot run here — another machine's architecture, a
noexec mount — is read instead (its `Cuda compilation tools, release …` string), and without
the file the table's version is used; the evidence says which. The ptxas target table is
`tui/core/tables/ptxas_targets.py` (from real `ptxas --help`). `critical` when vLLM or SGLang is
installed in that interpreter (their Triton kernels run while serving), `warning` otherwise
(torch.compile and direct Triton users). It also fires when an override names a ptxas whose
CUDA release that Triton has no PTX version for (a CUDA 13 ptxas under triton ≤ 3.4: every
compile raises `Triton only support CUDA 10.0 or higher, but got CUDA version: 13.0`).

Example — the demo host `spark-01` (DGX Spark, GB10 = SM 12.1, CUDA 13.0 installed, vLLM as a
systemd service, triton 3.5.1):

```
[critical] Triton 3.5.1's ptxas 12.8 cannot build for NVIDIA GB10 (SM 12.1)
Triton 3.5.1 assembles every kernel for SM 12.1 with ptxas --gpu-name=sm_121a → it runs its bundled
ptxas /home/ml/venv/lib/python3.11/site-packages/triton/backends/nvidia/bin/ptxas (CUDA 12.8.93, ran
--version) because TRITON_PTXAS_PATH is not set in this environment → ptxas 12.8 does not know
sm_121a (first in CUDA 12.9) → every Triton kernel fails with "ptxas fatal : Value 'sm_121a' is not
defined for option 'gpu-name'" → torch.compile and the Triton kernels of vLLM/SGLang fail while eager
torch works. Fix: point TRITON_PTXAS_PATH at the ptxas of a CUDA toolkit ≥ 12.9 (Triton 3.5.1 accepts
ptxas of any CUDA ≥ 10.0), or upgrade Triton to ≥ 3.6.0, whose bundled ptxas builds sm_121a. (Judged
in the pid 5151 vllm.entrypoints.openai.api_server environment.)
evidence: triton 3.5.1 in /home/ml/venv/bin/python3 · …/triton/backends/nvidia/bin/ptxas: CUDA
          12.8.93 (ran --version) · TRITON_PTXAS_PATH not set · target sm_121a · GPU0 NVIDIA GB10 SM 12.1
fixes:    use-toolkit-ptxas-for-triton path=/usr/local/cuda-13.0/bin/ptxas
```

In the wild: triton-lang/triton#8539 — on a DGX Spark, torch 2.10 nightly with pytorch-triton
3.5.0 fails with `ptxas fatal : Value 'sm_121a' is not defined for option 'gpu-name'` (repro
command: Triton's own `…/triton/backends/nvidia/bin/ptxas`); the maintainers' answer is "use
the PTXAS shipped with CUDA 13 … setting `TRITON_PTXAS_PATH` to `/usr/local/cuda/bin/ptxas`",
which a user confirms fixed it. vllm-project/vllm PR #31338 documents the same error for
`sm_110a` (Jetson Thor).

The fix `use-toolkit-ptxas-for-triton` sets the variable that release reads for the failing
GPUs (`TRITON_PTXAS_PATH`, or `TRITON_PTXAS_BLACKWELL_PATH` for a 3.6+ `ptxas-blackwell`) to
an installed toolkit's `bin/ptxas` that builds every such GPU and that Triton accepts — in the
serving unit's drop-in and the venv's `activate` (or the login profile), with backups and
undo like every environment fix; the what-if proves the finding is gone before it is offered.
For triton 3.3's `TRITON_PTXAS-BLACKWELL_PATH` it is not offered: upgrade Triton instead.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tui.core.facts import EnvContext, Facts, PythonEnv
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding as _finding
from tui.core.rules.rulekit import gpu_evidence as _gpu_evidence
from tui.core.rules.rulekit import gpu_names as _gpu_names
from tui.core.rules.subject import Subject
from tui.core.tables import ptxas_targets
from tui.core.tables.triton_ptxas import (
    RELEASES,
    ReleaseMatch,
    TritonRelease,
    release_for,
    sm_of,
)

# The rule, in short:
# ``triton-ptxas-too-old``: the ptxas Triton runs for a GPU cannot target it.
#
# Triton compiles every kernel to PTX and assembles it with a ptxas it picks itself: the one its
# override variable names (``TRITON_PTXAS_PATH``, or the Blackwell one of 3.3+), else the one in
# its wheel (``tui.core.tables.triton_ptxas``, read from the real wheels). A ptxas that predates a GPU's
# ``sm_XYa`` fails every Triton kernel — torch.compile, and the Triton kernels of vLLM and
# SGLang — while eager torch works. The same happens when the override names a ptxas whose CUDA
# release this Triton has no PTX version for (``ptx_get_version`` raises).

ID = "triton-ptxas-too-old"

SERVING_PACKAGES = ("vllm", "sglang")
TRITON_DISTS = ("triton", "pytorch-triton")  # pytorch-triton: the nightly torch builds' Triton


def triton_version(py: PythonEnv) -> str | None:
    return next((py.packages[d] for d in TRITON_DISTS if d in py.packages), None)


SHELL_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True)
class PtxasVersion:
    version: str | None  # "12.8"
    full: str | None  # "12.8.93"
    how: str  # where the version comes from, for the evidence


@dataclass(frozen=True)
class UsedPtxas:
    """The ptxas Triton runs for one GPU in one environment."""

    binary: str  # "ptxas" or "ptxas-blackwell"
    var: str  # the override variable of that binary
    path: str | None  # None: bundled, but where the wheel lies is unknown
    version: PtxasVersion
    overridden: bool  # the override variable named a ptxas that runs
    note: str | None = None  # an override that Triton ignores, and why


def ptxas_version(facts: Facts, path: str) -> PtxasVersion | None:
    """The version of the ptxas at ``path``: as the probe ran (or read) it, else its toolkit's."""
    norm = posixpath.normpath(path)
    for p in facts.ptxas:
        if posixpath.normpath(p.path) == norm:
            if not p.exists or p.version is None:
                return None
            how = "ran --version" if p.version_source == "run" else "read from the binary"
            return PtxasVersion(p.version, p.full_version, how)
    for tk in facts.toolkits:
        own = tk.ptxas or posixpath.join(tk.home, "bin/ptxas")
        if tk.ptxas and tk.version and posixpath.normpath(own) == norm:
            return PtxasVersion(tk.version, tk.full_version, f"the CUDA toolkit at {tk.home}")
    return None


def _override_missing(facts: Facts, path: str) -> str:
    for p in facts.ptxas:
        if posixpath.normpath(p.path) == posixpath.normpath(path):
            return "does not exist" if not p.exists else "does not run and print its release"
    return "was not found by the probe"


def used_ptxas(
    facts: Facts, py: PythonEnv, rel: TritonRelease, ctx: EnvContext | None, sm: int
) -> UsedPtxas:
    binary = rel.binary_for(sm)
    var = rel.override_var(binary)
    value = ctx.vars.get(var) if ctx is not None else None
    note = None
    if value:
        found = ptxas_version(facts, value)
        if found is not None:
            return UsedPtxas(binary, var, value, found, True)
        note = f"{var}={value} {_override_missing(facts, value)}, so Triton ignores it"
    path = posixpath.join(py.triton_bin_dir, binary) if py.triton_bin_dir else None
    found = ptxas_version(facts, path) if path else None
    if found is None:
        full = rel.bundled.get(binary)
        major_minor = ".".join(full.split(".")[:2]) if full else None
        found = PtxasVersion(
            major_minor, full, f"what the triton {rel.wheels} wheels bundle; the probe saw no file"
        )
    return UsedPtxas(binary, var, path, found, False, note)


@dataclass(frozen=True)
class Broken:
    cc: tuple[int, int]
    target: str  # "121a"
    used: UsedPtxas
    rejected: bool  # Triton refuses the ptxas release itself (not the target)


def broken_gpus(facts: Facts, py: PythonEnv, ctx: EnvContext | None, devices: Sequence) -> tuple:
    """(the Triton release match, the GPUs whose ptxas fails) for one interpreter."""
    match = release_for(triton_version(py))
    if match is None:
        return None, ()
    rel = match.release
    out = []
    for cc in dict.fromkeys(devices):
        sm = sm_of(cc)
        used = used_ptxas(facts, py, rel, ctx, sm)
        version = used.version.version
        if version is None:
            continue
        target = rel.target(sm)
        if rel.accepts_ptxas(version) is False:
            out.append(Broken(cc, target, used, True))
        elif ptxas_targets.accepts(version, target) is False:
            out.append(Broken(cc, target, used, False))
    return match, tuple(out)


def override_vars(facts: Facts, python: str | None) -> tuple[str, ...]:
    """The override variables whose ptxas fails for a visible GPU of ``python`` (its subject)."""
    from tui.core.rules.subject import subjects  # the subjects are the rules' own view of the host

    for s in subjects(facts):
        if s.python is None or (python is not None and s.python.path != python):
            continue
        _match, broken = broken_gpus(facts, s.python, s.context, s.devices)
        if broken:
            return tuple(dict.fromkeys(b.used.var for b in broken))
    return ()


def plan_vars(facts: Facts, python: str | None) -> tuple[str, ...]:
    """The override variables a fix sets: those of the failing GPUs, else (nothing fails) the
    main one."""
    return override_vars(facts, python) or ("TRITON_PTXAS_PATH",)


def is_shell_name(name: str) -> bool:
    return bool(name) and not name[0].isdigit() and set(name) <= SHELL_NAME_CHARS


def _fixed_in(rel: TritonRelease, cc: tuple[int, int]) -> str | None:
    """The first Triton release whose bundled ptxas for this GPU builds it (from the table)."""
    sm = sm_of(cc)
    for row in RELEASES:
        if tuple(int(x) for x in row.first.split(".")) <= tuple(
            int(x) for x in rel.first.split(".")
        ):
            continue
        full = row.bundled.get(row.binary_for(sm))
        if full and ptxas_targets.accepts(full, row.target(sm)):
            return row.first
    return None


def _describe(used: UsedPtxas, triton: str) -> str:
    v = used.version
    what = used.version.full or used.version.version or "?"
    if used.overridden:
        return f"the ptxas {used.var}={used.path} names (CUDA {what}, {v.how})"
    where = used.path or f"triton/backends/nvidia/bin/{used.binary}"
    return f"its bundled {used.binary} {where} (CUDA {what}, {v.how})"


def _chain(s: Subject, match: ReleaseMatch, triton: str, b: Broken) -> str:
    rel, used = match.release, b.used
    gpu = f"SM {b.cc[0]}.{b.cc[1]}"
    steps = [
        f"Triton {triton} assembles every kernel for {gpu} with ptxas --gpu-name=sm_{b.target}",
        f"it runs {_describe(used, triton)}"
        + ("" if used.overridden else f" because {used.var} is not set in this environment"),
    ]
    if used.note:
        steps[-1] += f" ({used.note})"
    version = used.version.version or "?"
    if b.rejected:
        steps.append(
            f"Triton {triton} has no PTX version for a CUDA {version} ptxas: every compile "
            f"raises 'RuntimeError: Triton only support CUDA 10.0 or higher, but got CUDA "
            f"version: {version}'"
        )
    else:
        first = ptxas_targets.first_toolkit_for(b.target)
        steps.append(
            f"ptxas {version} does not know sm_{b.target}"
            + (f" (first in CUDA {first})" if first else "")
        )
        steps.append(
            f"every Triton kernel fails with \"ptxas fatal : Value 'sm_{b.target}' is not "
            "defined for option 'gpu-name'\""
        )
    steps.append("torch.compile and the Triton kernels of vLLM/SGLang fail while eager torch works")
    advice = []
    if is_shell_name(used.var):
        accepted = rel.accepted_ptxas()
        need = ptxas_targets.first_toolkit_for(b.target)
        advice.append(
            f"point {used.var} at the ptxas of a CUDA toolkit"
            + (f" ≥ {need}" if need else "")
            + f" (Triton {triton} accepts ptxas of {accepted})"
        )
    else:
        advice.append(f"Triton {triton} reads {used.var}, a name no shell or systemd unit can set")
    fixed = _fixed_in(rel, b.cc)
    if fixed:
        advice.append(f"upgrade Triton to ≥ {fixed}, whose bundled ptxas builds sm_{b.target}")
    return " → ".join(steps) + ". Fix: " + ", or ".join(advice) + "."


def rule_triton_ptxas(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        py = s.python
        if py is None or not s.devices:
            continue
        match, broken = broken_gpus(facts, py, s.context, s.devices)
        if match is None or not broken:
            continue
        triton = triton_version(py) or "?"
        serving = [name for name in SERVING_PACKAGES if name in py.packages]
        severity: Severity = "critical" if serving else "warning"
        explanation = " ".join(_chain(s, match, triton, b) for b in _one_per_ptxas(broken))
        if not serving:
            explanation += (
                " No vLLM or SGLang is installed here, so only torch.compile and direct Triton "
                "users are affected."
            )
        evidence = [f"triton {triton} in {py.path}"]
        if match.newer_than_known:
            evidence.append(
                f"triton {triton} is newer than the newest release read ({RELEASES[-1].first}): "
                "judged by that release's rules"
            )
        for b in broken:
            used = b.used
            where = used.path or f"bundled {used.binary}"
            evidence.append(
                f"{where}: CUDA {used.version.full or used.version.version} ({used.version.how})"
            )
            ctx_var = s.context.vars.get(used.var) if s.context else None
            evidence.append(f"{used.var}={ctx_var}" if ctx_var else f"{used.var} not set")
            evidence.append(f"target sm_{b.target}")
        evidence += _gpu_evidence(facts, [b.cc for b in broken])
        ccs = [b.cc for b in broken]
        title = (
            f"Triton {triton} cannot use its ptxas (CUDA {broken[0].used.version.version})"
            if all(b.rejected for b in broken)
            else f"Triton {triton}'s ptxas {broken[0].used.version.version} cannot build for "
            f"{_gpu_names(facts, ccs)}"
        )
        yield _finding(ID, severity, title, explanation, evidence, s)


def _one_per_ptxas(broken: Sequence[Broken]) -> list[Broken]:
    """One causal chain per (ptxas, failure kind): eight identical GPUs tell it once."""
    seen: dict[tuple, Broken] = {}
    for b in broken:
        seen.setdefault((b.used.path, b.used.var, b.rejected, b.target), b)
    return list(seen.values())


FINDING = FindingRecord(
    id=ID,
    title="Triton's ptxas cannot target a visible GPU",
    severities=("critical", "warning"),
    reads=(
        "pythons.packages",
        "pythons.triton_bin_dir",
        "ptxas.version",
        "contexts.vars",
        "gpus.compute_cap",
    ),
    rules=(rule_triton_ptxas,),
    fixes=("use-toolkit-ptxas-for-triton",),
    cause="SM {sm} + Triton's ptxas",
    consequence="Triton kernels fail to compile",
    fires_when=(
        "the ptxas Triton runs for a GPU (its bundled one — per release, from the real wheels — "
        "unless `TRITON_PTXAS_PATH`/`TRITON_PTXAS_BLACKWELL_PATH` names one) cannot target it, or is "
        "a release that Triton rejects"
    ),
    example=(
        "GB10 (SM 12.1) with triton 3.5.1: bundled ptxas 12.8.93 has no `sm_121a` → every Triton "
        "kernel fails"
    ),
    doc=__doc__ or "",
    examples=("triton-lang/triton#8539", "vllm-project/vllm#31338"),
)
