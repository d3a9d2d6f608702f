"""``jit-nvcc-missing``: FlashInfer will JIT-compile for a visible GPU and finds no nvcc.

FlashInfer's check can pass without any compiler: with no nvcc it takes the CUDA version from
``torch.version.cuda`` (flashinfer-logic.md §3), so ``TARGET_CUDA_ARCHS`` is fine and the
failure waits for the first JIT build — in SGLang/vLLM the first sampling call. The replay
knows which nvcc that build would run (``compiles`` is false when it is missing); this rule
says why it is missing (a malformed ``CUDA_HOME``, a runtime-only tree, no toolkit at all)
and whether prebuilt modules (``tui.core.flashinfer_prebuilt``) make the build unnecessary.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from packaging.version import Version

from tui.core.facts import Facts, PythonEnv
from tui.core.findings import Finding, FlashInferReplay, Severity
from tui.core.flashinfer_prebuilt import JIT_CACHE_ERA, coverage, jit_cache_archs, serves
from tui.core.rulekit import finding, gpu_evidence, gpu_names, toolkit_evidence

if TYPE_CHECKING:
    from tui.core.subject import Subject

FINDING = "jit-nvcc-missing"
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
            FINDING,
            severity,
            f"FlashInfer {r.version} must compile for {gpu_names(facts, s.devices)} "
            "but finds no nvcc",
            explanation,
            evidence,
            s,
        )
