"""FlashInfer will JIT-compile for a visible GPU (its arch check passes) but there is no nvcc at
the toolkit it resolves: no toolkit at all (CUDA only from torch's pip wheels, which ship the
runtime and no compiler), a runtime-only tree (`/usr/local/cuda` of a CUDA *runtime* container
image: `lib64/libcudart.so.*`, no `bin/nvcc`), or a malformed `CUDA_HOME`/`CUDA_PATH` — a
`:`-separated list, a leading `:` (`export CUDA_HOME=$CUDA_HOME:/usr/local/cuda` with
`CUDA_HOME` unset), a value ending in `/bin` or naming `nvcc` itself, quotes or blanks that
become part of the name. With no nvcc, FlashInfer takes the CUDA version from
`torch.version.cuda`, so nothing fails at import; the first JIT build (the first sampling call
in SGLang/vLLM) does. The replay's `compiles` is `false` (`null` for a relative nvcc path).

- `critical`: no prebuilt module spares the build.
- `warning`: a `flashinfer-jit-cache` of the same version is installed, but the architectures
  it was built for are not recorded for its CUDA variant.
- silent: prebuilt modules cover the case (`tui/core/tables/flashinfer_prebuilt.py`, from
  flashinfer-logic.md §8): 0.2.x AOT wheels (`+cuXYZtorchX.Y`); in 0.4.0 – 0.7.0.post1 a
  `flashinfer-jit-cache` whose version is flashinfer's (or starts with it; any version with
  `FLASHINFER_DISABLE_VERSION_CHECK=1`); from 0.7.1 one whose build (`7.5 8.0 8.9 9.0a 10.0a
  10.3a 12.0f` for cu129/cu130 x86_64, plus `11.0a 12.1a` on aarch64) serves every target arch.

The same holds for builds through `torch.utils.cpp_extension`, judged with torch's own
`_find_cuda_home()` (`CUDA_HOME`, `CUDA_PATH`, `which nvcc`, `/usr/local/cuda`), FlashInfer or
not. DeepSpeed installed from its sdist without `DS_BUILD_OPS=1` prebuilds nothing: its
`setup.py` writes `installed_ops` (all `False`) and `accelerator_name` into
`deepspeed/git_version_info_installed.py`, and `OpBuilder.load()` (`deepspeed/ops/op_builder/
builder.py`, DeepSpeed 0.19.8) imports a prebuilt op only when `installed_ops` says so for the
running accelerator, else `jit_load()`s it — the engine's `Adam`/`AdamW` optimizer is `FusedAdam`
(`deepspeed/runtime/engine.py`, unless `torch_adam` or a CPU optimizer), built on first use. With
no nvcc there its `installed_cuda_version()` raises `MissingCUDAException` (`CUDA_HOME does not
exist, unable to compile CUDA op(s)`, or `Unable to run …/bin/nvcc` for a runtime-only tree):
`critical`.

Fixes: `use-installed-toolkit` (with the corrected path when `CUDA_HOME` was malformed and the
toolkit it meant is installed), `install-cuda-toolkit-pip` (torch built for CUDA 13),
`install-cuda-toolkit-apt`; each is checked by the what-if to make the finding disappear.

Example — the demo host `pro6000-no-nvcc` (RTX PRO 6000 workstation, driver 580.95.05, SGLang
with torch 2.11.0+cu130 and FlashInfer 0.6.8, no toolkit), the shape of vllm-project/vllm#49497
(torch 2.11.0+cu130, `flashinfer-python==0.6.15.post1`, "FlashInfer sampler JIT crashes engine
startup when nvcc isn't discoverable (default precompiled/wheel install)") and of
flashinfer-ai/flashinfer#1781 (vLLM + FlashInfer 0.3.0: `FileNotFoundError: [Errno 2] No such
file or directory: 'nvcc'` from `top_k_top_p_sampling_from_logits`):

```
[critical] FlashInfer 0.6.8 must compile for NVIDIA RTX PRO 6000 Blackwell Workstation Edition (SM 12.0) but finds no nvcc
FlashInfer 0.6.8 finds no toolkit: no CUDA_HOME, CUDA_PATH, nvcc on PATH or /usr/local/cuda → CUDA
here comes only from pip wheels (nvidia-cuda-nvrtc 13.0.88, nvidia-cuda-runtime 13.0.96), which ship
the runtime but no nvcc → get_cuda_version() falls back to torch.version.cuda 13.0, so its arch
check passes (TARGET_CUDA_ARCHS = ['12.0f']) → the first JIT build (in SGLang/vLLM: the first
sampling call) fails: RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda'
doesn't exist. Prebuilt modules: no flashinfer-jit-cache is installed, so nothing spares that build.
Install a CUDA toolkit (install-cuda-toolkit-pip/-apt) or point CUDA_HOME at one already on the
host. Alternatively flashinfer-jit-cache==0.6.8+cu130 (FlashInfer's own wheel index) ships these
modules prebuilt, so no nvcc would be needed. (Judged in the pid 5151 sglang.launch_server
environment.)
evidence: FlashInfer 0.6.8 in /opt/sglang/bin/python3 · no CUDA_HOME, CUDA_PATH, nvcc on PATH or
          /usr/local/cuda · nvidia-cuda-nvrtc 13.0.88 · nvidia-cuda-runtime 13.0.96 · no CUDA
          toolkit found · GPU0 NVIDIA RTX PRO 6000 Blackwell Workstation Edition SM 12.0 ·
          TARGET_CUDA_ARCHS = ['12.0f'] · replay: compiles = false · flashinfer-jit-cache not
          installed
fixes:    install-cuda-toolkit-pip version=13.0.2  ·  install-cuda-toolkit-apt
```
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence

from packaging.version import Version

from tui.core.facts import Facts, PythonEnv
from tui.core.findings import Finding, FlashInferReplay, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.flashinfer_replay import find_cuda_home
from tui.core.rules.rulekit import finding, gpu_evidence, gpu_names, toolkit_evidence
from tui.core.rules.subject import Subject
from tui.core.tables.flashinfer_prebuilt import JIT_CACHE_ERA, coverage, jit_cache_archs, serves

# The rule, in short:
# ``jit-nvcc-missing``: FlashInfer will JIT-compile for a visible GPU and finds no nvcc.
#
# FlashInfer's check can pass without any compiler: with no nvcc it takes the CUDA version from
# ``torch.version.cuda`` (flashinfer-logic.md §3), so ``TARGET_CUDA_ARCHS`` is fine and the
# failure waits for the first JIT build — in SGLang/vLLM the first sampling call. The replay
# knows which nvcc that build would run (``compiles`` is false when it is missing); this rule
# says why it is missing (a malformed ``CUDA_HOME``, a runtime-only tree, no toolkit at all)
# and whether prebuilt modules (``tui.core.tables.flashinfer_prebuilt``) make the build unnecessary.

ID = "jit-nvcc-missing"

MISSING_STATES = ("missing", "not-executable")
PIP_RUNTIME_PREFIXES = ("nvidia-cuda-runtime", "nvidia-cuda-nvrtc")


def malformed(value: str) -> str | None:
    """Why a ``CUDA_HOME``/``CUDA_PATH`` value cannot name a toolkit directory (None: it can).

    FlashInfer and torch take the value as one directory and append ``bin/nvcc``."""
    if value != value.strip():
        return "has leading or trailing blanks, which become part of the directory name"
    if any(ch in value for ch in "\"'"):
        return "contains quote characters, which become part of the directory name"
    if ":" in value:
        if value.startswith(":") or value.endswith(":") or "::" in value:
            return (
                "is a ':'-separated list with an empty entry (typically "
                "`export CUDA_HOME=$CUDA_HOME:/usr/local/cuda` with CUDA_HOME unset); "
                "FlashInfer and torch read it as one directory name"
            )
        return "is a ':'-separated list, but FlashInfer and torch read it as one directory name"
    if not value.startswith("/"):
        return "is a relative path, resolved from the server's working directory"
    stripped = value.rstrip("/")
    if stripped.endswith("/bin/nvcc"):
        return "names the nvcc program, not the toolkit directory above bin/"
    if stripped.endswith("/bin"):
        return f"ends in /bin, so the nvcc looked for is {stripped}/bin/nvcc"
    return None


def corrected(value: str) -> list[str]:
    """The toolkit directories a malformed value was probably meant to name."""
    out = []
    for entry in value.split(":"):
        entry = entry.strip().strip("\"'").rstrip("/")
        for tail in ("/bin/nvcc", "/bin"):
            entry = entry.removesuffix(tail)
        if entry.startswith("/") and entry not in out:
            out.append(entry)
    return out


def _origin_var(origin: str) -> tuple[str, str] | None:
    for name in ("CUDA_HOME", "CUDA_PATH"):
        if origin.startswith(name + "="):
            return name, origin[len(name) + 1 :]
    return None


def _pip_runtime(py: PythonEnv | None) -> list[str]:
    if py is None:
        return []
    packages = sorted(py.packages.items())
    return [f"{k} {v}" for k, v in packages if k.startswith(PIP_RUNTIME_PREFIXES)]


def _cause(facts: Facts, s: Subject, r: FlashInferReplay, state: str) -> tuple[str, list[str]]:
    """Why no nvcc: one clause for the chain, and evidence lines."""
    env = s.context.vars if s.context else {}
    tr = s.trace
    nvcc = r.nvcc_invoked
    if env.get("FLASHINFER_NVCC") and nvcc == env["FLASHINFER_NVCC"]:
        return f"FLASHINFER_NVCC={nvcc} names no executable nvcc", [f"FLASHINFER_NVCC={nvcc}"]
    if r.cuda_home is None:
        clause = ""
        pip = _pip_runtime(s.python)
        if pip and "nvidia-cuda-nvcc" not in (s.python.packages if s.python else {}):
            clause = (
                f"CUDA here comes only from pip wheels ({', '.join(pip)}), which ship the "
                "runtime but no nvcc"
            )
        return clause, ["no CUDA_HOME, CUDA_PATH, nvcc on PATH or /usr/local/cuda", *pip]
    named = _origin_var(tr.origin) if tr else None
    if named is not None:
        why = malformed(named[1])
        if why is not None:
            fixes = [
                c
                for c in corrected(named[1])
                if (tk := facts.toolkit_at(c)) is not None and tk.exists and tk.executable
            ]
            hint = f" ({named[0]}={fixes[0]} would name the installed toolkit)" if fixes else ""
            return f"{named[0]}={named[1]!r} {why}{hint}", [f"{named[0]}={named[1]!r}"]
    tk = facts.toolkit_at(r.cuda_home)
    if tk is not None and tk.cudart:
        return (
            f"{r.cuda_home} is a CUDA runtime tree without a compiler ({tk.cudart} but no "
            "bin/nvcc — as in the CUDA runtime container images)",
            [f"{tk.cudart} present, {posixpath.join(r.cuda_home, 'bin/nvcc')} absent"],
        )
    if tk is not None and not tk.home_exists:
        return f"{r.cuda_home} does not exist", [f"{r.cuda_home} does not exist"]
    if state == "not-executable":
        return f"{nvcc} is not executable", [f"{nvcc} is not executable"]
    return f"{r.cuda_home} has no bin/nvcc", [f"{nvcc} does not exist"]


def _failure(r: FlashInferReplay, path_error: str | None, state: str) -> str:
    if r.nvcc_invoked is None:
        return path_error or "RuntimeError: Could not find nvcc"
    if state == "not-executable":
        return f"PermissionError: [Errno 13] Permission denied: '{r.nvcc_invoked}'"
    return f"the build cannot run {r.nvcc_invoked} ('No such file or directory')"


def _jit_cache_advice(py: PythonEnv, r: FlashInferReplay, machine: str | None) -> str:
    """Which flashinfer-jit-cache build would serve this case, when one is recorded."""
    if not py.torch_cuda or Version(r.version) < Version(JIT_CACHE_ERA):
        return ""
    variant = "cu" + py.torch_cuda.replace(".", "")
    archs = jit_cache_archs(f"{r.version}+{variant}", machine)
    if archs is None or not all(any(serves(a, t) for a in archs) for t in r.target_cuda_archs):
        return ""
    return (
        f" Alternatively flashinfer-jit-cache=={r.version}+{variant} (FlashInfer's own wheel "
        "index) ships these modules prebuilt, so no nvcc would be needed."
    )


def rule_jit_nvcc_missing(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        r, tr, inp, py = s.replay, s.trace, s.replay_in, s.python
        if r is None or tr is None or tr.era is None or inp is None or py is None:
            continue
        if not s.devices or r.import_error or r.check_cuda_arch != "pass":
            continue  # flashinfer-arch-rejected speaks for those
        state = inp.nvcc(r.nvcc_invoked).state if r.nvcc_invoked else "missing"
        if state not in MISSING_STATES:
            continue
        env: Mapping[str, str] = s.context.vars if s.context else {}
        prebuilt = coverage(
            r.version, py.flashinfer_jit_cache_version, r.target_cuda_archs, facts.host.arch, env
        )
        if prebuilt.covered:
            continue
        severity: Severity = "critical" if prebuilt.covered is False else "warning"
        cause, cause_evidence = _cause(facts, s, r, state)
        steps = [
            f"FlashInfer {r.version} finds no toolkit: no CUDA_HOME, CUDA_PATH, nvcc on PATH "
            "or /usr/local/cuda"
            if r.cuda_home is None
            else f"FlashInfer {r.version} resolves its toolkit from {tr.origin}",
            *([cause] if cause else []),
        ]
        if r.jit_cuda_source == "torch":
            steps.append(
                f"get_cuda_version() falls back to torch.version.cuda {r.jit_cuda}, so its "
                f"arch check passes (TARGET_CUDA_ARCHS = {list(r.target_cuda_archs)})"
            )
        steps.append(
            "the first JIT build (in SGLang/vLLM: the first sampling call) fails: "
            + _failure(r, tr.path_error, state)
        )
        covered = (
            "so nothing spares that build"
            if prebuilt.covered is False
            else "so whether a build is needed cannot be told"
        )
        explanation = (
            " → ".join(steps)
            + f". Prebuilt modules: {prebuilt.reason}, {covered}. Install a CUDA toolkit "
            "(install-cuda-toolkit-pip/-apt) or point CUDA_HOME at one already on the host."
            + _jit_cache_advice(py, r, facts.host.arch)
        )
        evidence = [
            f"FlashInfer {r.version} in {py.path}",
            *([tr.origin] if r.cuda_home is not None else []),
            *cause_evidence,
            toolkit_evidence(s.jit_toolkit, r.nvcc_invoked),
            *gpu_evidence(facts, s.devices),
            f"TARGET_CUDA_ARCHS = {list(r.target_cuda_archs)}",
            f"replay: compiles = {str(r.compiles).lower() if r.compiles is not None else 'null'}",
            prebuilt.evidence or "flashinfer-jit-cache not installed",
        ]
        yield finding(
            ID,
            severity,
            f"FlashInfer {r.version} must compile for {gpu_names(facts, s.devices)} "
            "but finds no nvcc",
            explanation,
            evidence,
            s,
        )


DS_SOURCE = "deepspeed/ops/op_builder/builder.py of the DeepSpeed 0.19.8 sdist"
DS_FIRST_OP = "fused_adam"  # the engine's Adam/AdamW (deepspeed/runtime/engine.py)


def deepspeed_jit_ops(py: PythonEnv) -> tuple[str, ...]:
    """The DeepSpeed ops ``OpBuilder.load()`` would JIT-build on a CUDA GPU: those not
    prebuilt for the ``cuda`` accelerator (``installed_ops`` and ``accelerator_name``)."""
    if py.deepspeed_ops is None:
        return ()
    cuda = py.deepspeed_accelerator == "cuda"
    return tuple(op for op, built in py.deepspeed_ops if not (built and cuda))


def _torch_cuda_home(facts: Facts, s: Subject) -> tuple[str | None, str]:
    ctx = s.context
    which = ctx.which_nvcc[0] if ctx and ctx.which_nvcc else None
    usr_local = ctx.usr_local_cuda_exists if ctx else facts.usr_local_cuda is not None
    return find_cuda_home(dict(ctx.vars) if ctx else {}, which, usr_local)


def rule_cpp_extension_nvcc_missing(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    """DeepSpeed will JIT-build its CUDA ops through torch.utils.cpp_extension, which finds no
    nvcc."""
    for s in subs:
        py = s.python
        if py is None or not py.torch_cuda or not s.devices:
            continue
        ops = deepspeed_jit_ops(py)
        if DS_FIRST_OP not in ops:
            continue
        home, origin = _torch_cuda_home(facts, s)
        tk = facts.toolkit_at(home) if home else None
        if home is not None and (tk is None or (tk.exists and tk.executable)):
            continue  # an nvcc there (or a directory the probe did not see: not judged)
        nvcc = posixpath.join(home, "bin/nvcc") if home else None
        if home is None:
            where = "torch.utils.cpp_extension finds no toolkit: " + origin
            error = "CUDA_HOME does not exist, unable to compile CUDA op(s)"
            evidence = ["no CUDA_HOME, CUDA_PATH, nvcc on PATH or /usr/local/cuda"]
        else:
            assert tk is not None and nvcc is not None
            runtime = (
                f", a CUDA runtime tree without a compiler ({tk.cudart} but no bin/nvcc)"
                if tk.cudart
                else ""
            )
            where = f"torch.utils.cpp_extension takes CUDA_HOME={home} ({origin}){runtime}"
            error = f"Unable to run {nvcc}, unable to compile CUDA op(s)"
            evidence = [f"{tk.cudart} present, {nvcc} absent" if tk.cudart else f"{nvcc} absent"]
        others = [t.home for t in facts.toolkits if t.exists and t.executable and t.version]
        hint = (
            f" A toolkit is installed at {others[0]}, where torch does not look: point CUDA_HOME "
            "at it."
            if others
            else ""
        )
        built_for = py.deepspeed_accelerator or "?"
        explanation = (
            f"DeepSpeed {py.packages.get('deepspeed', '?')} in {py.path} was installed without "
            f"prebuilt ops (git_version_info_installed.py: installed_ops has no op built for the "
            f"cuda accelerator; accelerator_name '{built_for}'), so OpBuilder.load() JIT-builds "
            f"each op on first use ({DS_SOURCE}) — the engine's Adam/AdamW optimizer is FusedAdam "
            f"→ {where} → the build raises MissingCUDAException: {error}. Install a CUDA toolkit "
            "(install-cuda-toolkit-pip/-apt), point CUDA_HOME at one already on the host, or "
            "reinstall DeepSpeed with DS_BUILD_OPS=1 where a toolkit is." + hint
        )
        yield finding(
            ID,
            "critical",
            f"DeepSpeed must build its CUDA ops for {gpu_names(facts, s.devices)} but torch "
            "finds no nvcc",
            explanation,
            [
                f"deepspeed {py.packages.get('deepspeed', '?')} in {py.path}",
                f"JIT-built ops: {', '.join(ops)}",
                origin,
                *evidence,
                toolkit_evidence(tk, nvcc),
                *gpu_evidence(facts, s.devices),
            ],
            s,
        )


FINDING = FindingRecord(
    id=ID,
    title="A needed JIT build finds no nvcc",
    severities=("critical", "warning"),
    reads=(
        "pythons.flashinfer_version",
        "pythons.flashinfer_jit_cache_version",
        "pythons.deepspeed_ops",
        "pythons.deepspeed_accelerator",
        "contexts.vars",
        "toolkits.exists",
        "toolkits.cudart",
        "gpus.compute_cap",
        "host.arch",
    ),
    rules=(rule_jit_nvcc_missing, rule_cpp_extension_nvcc_missing),
    fixes=("use-installed-toolkit", "install-cuda-toolkit-pip", "install-cuda-toolkit-apt"),
    cause="SM {sm} + no nvcc for the JIT",
    consequence="the JIT cannot build",
    fires_when=(
        "FlashInfer must JIT-compile for a visible GPU, no prebuilt `flashinfer-jit-cache` covers "
        "that version and arch, and there is no nvcc where it looks (no toolkit, a runtime-only tree, "
        "a malformed `CUDA_HOME`)"
    ),
    example=(
        "torch 2.11.0+cu130 from pip, no toolkit → FlashInfer falls back to CUDA 13.0, builds `12.0f` "
        "→ the first sampling call raises *Could not find nvcc*"
    ),
    doc=__doc__ or "",
    examples=("vllm-project/vllm#49497", "flashinfer-ai/flashinfer#1781"),
)
