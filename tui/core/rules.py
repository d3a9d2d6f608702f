"""The rules: pure functions from facts to findings, one per finding id of CONTRACT.md.

Each interpreter is judged in the environment it really runs under (a serving process beats
the login shell, which beats the SSH session — ``judging_context``). Every finding names that
environment, carries ``evidence`` (the exact paths, versions and variables that made it fire)
and an ``explanation`` that tells the causal chain. Thresholds and tables are data in
``tui.core.compat``, ``tui.core.ptxas_targets`` and ``tui.core.flashinfer_eras``; fixes are
added later by ``tui.core.diagnosis`` (what-if), so findings here have none.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from packaging.version import Version

from tui.core import compat, ptxas_targets, rules_container, rules_current, torch_arch
from tui.core.cuda_versions import driver_max_cuda
from tui.core.facts import EnvContext, Facts, PythonEnv, Toolkit
from tui.core.findings import SEVERITY_ORDER, Finding, FlashInferReplay, Severity
from tui.core.flashinfer_eras import SM120_CUDA128_FIXED_IN
from tui.core.flashinfer_replay import (
    ReplayInput,
    ReplayTrace,
    find_cuda_home,
    replay_input,
    trace,
    visible_devices,
)
from tui.core.rulekit import cc_text as _cc
from tui.core.rulekit import finding as _finding
from tui.core.rulekit import gpu_evidence as _gpu_evidence
from tui.core.rulekit import gpu_names as _gpu_names
from tui.core.rulekit import toolkit_evidence as _toolkit_evidence
from tui.core.rules_compat import rule_compat_shadows
from tui.core.rules_driver_ptx import rule_driver_ptx
from tui.core.rules_extensions import rule_extension_abi
from tui.core.rules_flashinfer_extra import rule_flashinfer_outside_table
from tui.core.rules_headers import rule_headers_mismatch
from tui.core.rules_jit import rule_jit_nvcc_missing
from tui.core.rules_libs import rule_library_shadowed
from tui.core.rules_mig import rule_mig_not_selected
from tui.core.rules_torch_cpu import rule_torch_cpu_build
from tui.core.rules_triton import rule_triton_ptxas

# whose environment judges a python ("current": the `local` target's own environment)
CONTEXT_PRIORITY = ("process", "unit", "current", "login", "ssh")
BROKEN_DRIVER = {  # driver state → what it means
    "no-driver": "no NVIDIA kernel driver is installed or loaded (nvidia-smi cannot run)",
    "not-loaded": "the NVIDIA userspace is installed but the kernel module is not loaded",
    "no-nvml": "nvidia-smi cannot find libnvidia-ml.so (the driver's userspace is missing)",
    "version-mismatch": "the loaded kernel module and the userspace libraries are different "
    "driver versions (typically after a driver upgrade without a reboot)",
}
SAMPLER_OFF_ENV = ("VLLM_USE_FLASHINFER_SAMPLER", "0")
SAMPLER_OFF_FLAGS = ("--sampling-backend pytorch", "--sampling-backend=pytorch")


# -- what the rules look at ------------------------------------------------------------------


@dataclass(frozen=True)
class Subject:
    """One interpreter judged in one environment (or, with no interpreter, the host shell)."""

    python: PythonEnv | None
    context: EnvContext | None
    devices: tuple[tuple[int, int], ...]  # GPUs visible in that environment, CUDA order
    replay_in: ReplayInput | None  # what FlashInfer's replay read
    trace: ReplayTrace | None  # FlashInfer's decisions, when FlashInfer is installed
    jit_nvcc: str | None  # the nvcc a JIT build would run
    jit_origin: str  # how that toolkit was chosen
    jit_toolkit: Toolkit | None

    @property
    def replay(self) -> FlashInferReplay | None:
        return self.trace.replay if self.trace else None

    @property
    def jit_version(self) -> str | None:
        tk = self.jit_toolkit
        if tk is None or not tk.exists or not tk.executable or not tk.version:
            return None
        return tk.version


def judging_context(facts: Facts, python: PythonEnv) -> EnvContext | None:
    """The environment ``python`` runs under: its serving process, else the login shell,
    else the SSH session (a process's environment beats any shell's)."""
    own = [
        c
        for p in facts.pythons
        if p.path == python.path
        for c in (facts.context(p.context),)
        if c is not None and p.context is not None
    ]
    own += [c for c in facts.contexts if c.kind in ("process", "unit") and c.exe == python.path]
    for kind in CONTEXT_PRIORITY[:2]:
        for c in own:
            if c.kind == kind:
                return c
    for kind in CONTEXT_PRIORITY[2:]:
        for c in facts.contexts:
            if c.kind == kind:
                return c
    return facts.context(None)


def toolkit_by_nvcc(facts: Facts, nvcc: str | None) -> Toolkit | None:
    if not nvcc:
        return None
    norm = posixpath.normpath(nvcc)
    for tk in facts.toolkits:
        if norm in (posixpath.normpath(tk.nvcc), posixpath.join(tk.home.rstrip("/"), "bin/nvcc")):
            return tk
    return None


def toolkit_identity(tk: Toolkit) -> str:
    return (tk.realpath or tk.home).rstrip("/") or "/"


def subjects(facts: Facts) -> tuple[Subject, ...]:
    seen: set[str] = set()
    out = []
    for py in facts.pythons:
        if py.path in seen or not py.exists:
            continue
        seen.add(py.path)
        ctx = judging_context(facts, py)
        out.append(_subject(facts, py, ctx))
    if not out:
        ctx = next(
            (c for kind in ("current", "login") for c in facts.contexts if c.kind == kind),
            facts.context(None),
        )
        out.append(_subject(facts, None, ctx))
    return tuple(out)


def _subject(facts: Facts, py: PythonEnv | None, ctx: EnvContext | None) -> Subject:
    env = dict(ctx.vars) if ctx else {}
    devices = visible_devices(facts, env) if facts.driver.state == "ok" else ()
    inp = replay_input(facts, py, ctx) if py is not None and py.flashinfer_version else None
    tr = trace(inp) if inp is not None else None
    if tr is not None and tr.era is not None:
        nvcc, origin = tr.replay.nvcc_invoked, tr.origin
    else:
        which = ctx.which_nvcc[0] if ctx and ctx.which_nvcc else None
        usr_local = ctx.usr_local_cuda_exists if ctx else facts.usr_local_cuda is not None
        home, origin = find_cuda_home(env, which, usr_local)
        nvcc = posixpath.join(home, "bin/nvcc") if home is not None else None
    return Subject(py, ctx, devices, inp, tr, nvcc, origin, toolkit_by_nvcc(facts, nvcc))


# -- small text helpers (tui.core.rulekit) --------------------------------------------------


def _sampler_off(subject: Subject) -> bool:
    ctx = subject.context
    if ctx is None:
        return False
    name, value = SAMPLER_OFF_ENV
    words = ctx.words
    given = {" ".join(words[i : i + 2]) for i in range(len(words))} | set(words)
    return ctx.vars.get(name) == value or any(flag in given for flag in SAMPLER_OFF_FLAGS)


# -- the rules -------------------------------------------------------------------------------


def rule_no_driver(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    d = facts.driver
    meaning = BROKEN_DRIVER.get(d.state)
    if meaning is None or rules_container.applies(facts):  # the container runtime, not a driver
        return
    runtime = [
        *(f"torch {p.torch_version} (CUDA {p.torch_cuda})" for p in facts.pythons if p.torch_cuda),
        *(f"FlashInfer {p.flashinfer_version}" for p in facts.pythons if p.flashinfer_version),
    ]
    toolkits = [f"CUDA toolkit at {t.home}" for t in facts.toolkits if t.exists]
    severity: Severity = "critical"
    tail = (
        " Nothing that uses CUDA can run here: torch sees no GPU (or fails with "
        "cudaErrorInsufficientDriver, error 35), and FlashInfer detects no architecture. "
        "Install or load the driver (or reboot after a driver upgrade) before anything else; "
        "the other checks are meaningless until then."
    )
    if d.state == "no-driver" and not runtime:  # nothing here needs a GPU at run time
        severity = "warning" if toolkits else "info"
        tail = (
            " Only a CUDA toolkit is installed: fine for a build-only machine (nvcc needs no "
            "driver), but nothing compiled here can run on this host."
            if toolkits
            else " No CUDA software was found either; if this host is not meant to have a GPU, "
            "ignore this."
        )
    evidence = [f"driver state: {d.state}"]
    if d.smi_exit is not None:
        evidence.append(f"nvidia-smi exit status {d.smi_exit}")
    if d.message:
        evidence.append(f"nvidia-smi: {d.message.strip().splitlines()[0]}")
    evidence.append(
        f"/proc/driver/nvidia/version: {d.proc_version}"
        if d.proc_version
        else "/proc/driver/nvidia/version absent"
    )
    evidence += (runtime + toolkits)[:4]
    yield _finding(
        "no-nvidia-driver",
        severity,
        f"No working NVIDIA driver ({d.state})",
        f"On this host {meaning}.{tail}",
        evidence,
    )


def _upgrade_advice(subject: Subject) -> str:
    """'FlashInfer ≥ 0.7.1 would accept this' — checked by replaying that version."""
    tr, inp = subject.trace, subject.replay_in
    if tr is None or tr.era is None or inp is None:
        return ""
    if Version(tr.era.first) >= Version(SM120_CUDA128_FIXED_IN):
        return ""
    newer = trace(replace(inp, version=SM120_CUDA128_FIXED_IN)).replay
    if newer.check_cuda_arch == "pass" and not _uncovered(newer, subject.devices):
        return (
            f" Upgrading flashinfer-python to ≥ {SM120_CUDA128_FIXED_IN} alone would also fix "
            "this: from that release SM 12.0 builds as 12.0a with CUDA 12.8 (flashinfer PR "
            "#3633)."
        )
    return ""


def _covers(target: str, cc: tuple[int, int]) -> bool:
    """Does a FlashInfer target tuple ("12.0a", "12.0f", "8.9") give code a GPU can run?"""
    major_s, _, minor = target.partition(".")
    digits = "".join(ch for ch in minor if ch.isdigit())
    suffix = minor[len(digits) :]
    if not major_s.isdigit() or not digits or int(major_s) != cc[0]:
        return False
    m = int(digits)
    if suffix == "a":
        return m == cc[1]
    if suffix in ("", "f"):
        return m <= cc[1]
    return False


def _uncovered(replayed: FlashInferReplay, devices: Sequence[tuple[int, int]]) -> tuple:
    return tuple(
        dict.fromkeys(
            cc for cc in devices if not any(_covers(t, cc) for t in replayed.target_cuda_archs)
        )
    )


def rule_flashinfer_arch(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        r, tr = s.replay, s.trace
        if r is None or tr is None or tr.era is None or not s.devices:
            continue  # (no era: prebuilt or unknown releases, tui.core.rules_flashinfer_extra)
        if s.python is not None and s.python.torch_version is None and not s.python.torch_cuda:
            continue  # torch unread: which GPUs FlashInfer would see is unknown
        if r.import_error is None and r.check_cuda_arch == "pass" and not _uncovered(r, s.devices):
            continue
        evidence = [f"FlashInfer {r.version} in {s.python.path if s.python else '?'}", tr.origin]
        if r.jit_cuda:
            via = "nvcc" if r.jit_cuda_source == "nvcc" else "torch.version.cuda fallback"
            evidence.append(f"CUDA version {r.jit_cuda} (from {via})")
        evidence.append(_toolkit_evidence(s.jit_toolkit, s.jit_nvcc))
        listed = s.context.vars.get("FLASHINFER_CUDA_ARCH_LIST") if s.context else None
        if listed is not None:
            evidence.append(f"FLASHINFER_CUDA_ARCH_LIST={listed!r}")
        evidence += _gpu_evidence(facts, s.devices)
        evidence.append(f"TARGET_CUDA_ARCHS = {list(r.target_cuda_archs)}")
        chain = _arch_chain(s, r, tr)
        unsupported = [cc for cc in s.devices if not compat.flashinfer_supports_cc(cc)]
        severity: Severity = "critical"
        title = f"FlashInfer {r.version} has no usable target for {_gpu_names(facts, s.devices)}"
        if r.import_error:
            title = f"`import flashinfer` fails ({r.version}): {r.import_error}"
        elif unsupported and len(unsupported) == len(s.devices):
            severity = "info"
            chain += (
                " This is not a version problem: FlashInfer's JIT supports SM 7.5 and newer "
                "only, so no toolkit or FlashInfer version changes it. Serve without FlashInfer "
                "kernels (e.g. --sampling-backend pytorch)."
            )
        elif r.check_cuda_arch == "pass":
            severity = "warning"
            missing = _uncovered(r, s.devices)
            title = f"FlashInfer {r.version} builds nothing for {_gpu_names(facts, missing)}"
        if _sampler_off(s) and severity != "info":
            severity = "info"
            chain += (
                " The serving engine here samples without FlashInfer "
                "(VLLM_USE_FLASHINFER_SAMPLER=0 or --sampling-backend pytorch), so sampling is "
                "not affected; other FlashInfer "
                "JIT kernels would still fail the same way."
            )
        yield _finding(
            "flashinfer-arch-rejected",
            severity,
            title,
            chain + _upgrade_advice(s),
            evidence,
            s,
        )


def _arch_chain(s: Subject, r: FlashInferReplay, tr: ReplayTrace) -> str:
    era = tr.era.name if tr.era else r.version
    order_note = ""
    steps = [f"FlashInfer {r.version} resolves its toolkit from {tr.origin}"]
    if r.jit_cuda_source == "nvcc":
        steps.append(f"nvcc {r.jit_cuda}")
    elif r.jit_cuda_source == "torch":
        steps.append(
            f"no usable nvcc at {r.cuda_home}/bin/nvcc, so it takes torch.version.cuda {r.jit_cuda}"
        )
    if r.import_error:
        listed = s.context.vars.get("FLASHINFER_CUDA_ARCH_LIST") if s.context else None
        steps.append(f"FLASHINFER_CUDA_ARCH_LIST={listed!r} is parsed at import")
        steps.append(f"`import flashinfer` itself raises {r.import_error}")
        return " → ".join(steps) + "."
    if tr.drop_error:
        first = tr.dropped[0]
        later = " and every GPU enumerated after it" if len(tr.dropped) > 1 else ""
        if "requires CUDA" in tr.drop_error:
            why = f"SM {_cc(first)} is refused in FlashInfer {era} ('{tr.drop_error}')"
        else:
            why = f"choosing a target for SM {_cc(first)} fails ('{tr.drop_error}')"
        steps.append(f"{why} → that GPU{later} is dropped")
        order = s.context.vars.get("CUDA_DEVICE_ORDER") if s.context else None
        if len(set(s.devices)) > 1 and order != "PCI_BUS_ID":
            order_note = (
                " (Which GPUs come after it depends on CUDA's enumeration order, fastest first "
                "unless CUDA_DEVICE_ORDER=PCI_BUS_ID; nvidia-smi's order was assumed.)"
            )
    if s.replay_in is not None and not s.replay_in.devices and s.python is not None:
        steps.append(
            f"torch {s.python.torch_version} is a CPU build, so torch.cuda.device_count() is 0 "
            "and no GPU is looked at"
        )
    archs = list(r.target_cuda_archs)
    steps.append(f"TARGET_CUDA_ARCHS is {archs if archs else 'empty'}")
    if r.check_cuda_arch == "fail":
        message = (r.check_message or "").removeprefix("RuntimeError: ").rstrip(".")
        steps.append(
            f"the first JIT build (in SGLang/vLLM: the first top-k/top-p sampling call) raises "
            f"'{message}'"
        )
    else:
        missing = _uncovered(r, s.devices)
        steps.append(
            f"kernels are built only for {', '.join(archs)}, so SM "
            f"{', '.join(_cc(c) for c in missing)} gets none ('no kernel image is available')"
        )
    return " → ".join(steps) + "." + order_note


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
        yield _finding("nvcc-too-old-for-gpu", severity, title, explanation, evidence, s)


def rule_major_mismatch(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        py, v = s.python, s.jit_version
        if py is None or not py.torch_cuda or v is None:
            continue
        if compat.cuda_major(py.torch_cuda) == compat.cuda_major(v):
            continue
        yield _finding(
            "nvcc-torch-major-mismatch",
            "warning",
            f"nvcc is CUDA {v} but torch {py.torch_version} is built for CUDA {py.torch_cuda}",
            f"torch {py.torch_version} was built with CUDA {py.torch_cuda}, but the toolkit a "
            f"JIT build uses comes from {s.jit_origin} and is CUDA {v} — a different major "
            "version. torch's BuildExtension refuses that combination ('The detected CUDA "
            "version mismatches the version that was used to compile PyTorch'), and JIT "
            "modules compiled by it link a different CUDA runtime than torch loads. Point "
            f"CUDA_HOME at a CUDA {compat.cuda_major(py.torch_cuda)}.x toolkit and clear the "
            "FlashInfer JIT cache afterwards.",
            [
                f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})",
                s.jit_origin,
                _toolkit_evidence(s.jit_toolkit, s.jit_nvcc),
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
        if compat.driver_runs_cuda(driver, d.driver_cuda, py.torch_cuda) is not False:
            continue
        floor = compat.driver_floor_for(py.torch_cuda)
        have = compat.parse_cc(d.driver_cuda)  # "12.8" → 12080, as the CUDA API reports it
        found = f"{have[0] * 1000 + have[1] * 10}" if have else "?"
        yield _finding(
            "driver-too-old-for-torch",
            "critical",
            f"Driver {driver} (CUDA {driver_max_cuda(facts) or '?'}) cannot run torch built for "
            f"CUDA {py.torch_cuda}",
            f"torch {py.torch_version} needs a driver that supports CUDA {py.torch_cuda}; with "
            f"minor-version compatibility any CUDA {compat.cuda_major(py.torch_cuda)}.x build "
            f"runs on driver ≥ {floor}, but this driver is {driver} (highest CUDA "
            f"{driver_max_cuda(facts) or '?'}). torch.cuda.is_available() is False and CUDA "
            f"initialisation warns 'The NVIDIA driver on your system is too old (found version "
            f"{found})'. Upgrade the driver to ≥ {floor}, or install a torch built for the "
            f"driver's CUDA (e.g. a cu128 wheel).",
            [
                f"driver {driver}",
                f"nvidia-smi CUDA Version {d.driver_cuda or 'unknown'}",
                f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})",
            ],
            s,
        )


def rule_driver_nvcc(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    d = facts.driver
    driver_cuda = driver_max_cuda(facts)
    if d.state != "ok" or driver_cuda is None:
        return
    seen: set[str] = set()
    for s in subs:
        v = s.jit_version
        if v is None or s.jit_toolkit is None:
            continue
        key = toolkit_identity(s.jit_toolkit)
        if key in seen or Version(v) <= Version(driver_cuda):
            continue
        seen.add(key)
        major_gap = compat.cuda_major(v) != compat.cuda_major(driver_cuda)
        severity: Severity = "critical" if major_gap else "warning"
        consequence = (
            "code it builds links a CUDA runtime the driver cannot serve: "
            "'CUDA driver version is insufficient for CUDA runtime version' (error 35)"
            if major_gap
            else "SASS it builds runs (minor-version compatibility), but PTX it emits cannot be "
            "JIT-compiled by this driver: 'the provided PTX was compiled with an unsupported "
            "toolchain' (error 222)"
        )
        yield _finding(
            "driver-too-old-for-nvcc",
            severity,
            f"nvcc {v} is newer than the driver's CUDA {driver_cuda}",
            f"The JIT toolkit ({s.jit_origin}) is CUDA {v}, but driver "
            f"{d.driver_version or d.proc_version} supports CUDA {driver_cuda} at most: "
            f"{consequence}. Upgrade the driver (CUDA {v} needs ≥ "
            f"{compat.TOOLKIT_MIN_DRIVER.get(_mm(v), compat.driver_floor_for(v))}) or use a "
            f"toolkit no newer than CUDA {driver_cuda}.",
            [
                f"driver {d.driver_version or d.proc_version} (CUDA {driver_cuda})",
                s.jit_origin,
                _toolkit_evidence(s.jit_toolkit, s.jit_nvcc),
            ],
            s,
        )


def _mm(version: str) -> str:
    v = Version(version)
    return f"{v.major}.{v.minor}"


def rule_torch_arch(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        py = s.python
        if py is None or not py.torch_cuda or not s.devices:
            continue
        listed = py.torch_arch_list
        source = "read from libtorch_python.so"
        if listed is None:
            found = torch_arch.arch_list(py.torch_version, py.torch_cuda, facts.host.arch)
            if found is None:
                continue
            listed, source = found
        missing = tuple(
            dict.fromkeys(cc for cc in s.devices if not compat.torch_runs_on(listed, cc))
        )
        if not missing:
            continue
        yield _finding(
            "torch-lacks-gpu-arch",
            "critical",
            f"torch {py.torch_version} has no kernels for {_gpu_names(facts, missing)}",
            f"torch {py.torch_version} was compiled for {' '.join(listed)} ({source}); none of "
            f"those runs on SM {', '.join(_cc(c) for c in missing)}. torch warns 'sm_"
            f"{missing[0][0]}{missing[0][1]} is not compatible with the current PyTorch "
            "installation' and the first kernel fails with 'no kernel image is available for "
            "execution on the device' (error 209). Install a torch build whose CUDA variant "
            "includes this GPU (Blackwell needs cu128 or newer).",
            [
                f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})",
                f"arch list {' '.join(listed)} ({source})",
                *_gpu_evidence(facts, missing),
            ],
            s,
        )


def rule_toolkit_shadowed(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    distinct = {toolkit_identity(t): t for t in facts.toolkits if t.exists and t.version}
    if len({t.version for t in distinct.values()}) < 2:
        return
    seen: set[str] = set()
    for s in subs:
        ctx = s.context
        if ctx is None or ctx.label in seen:
            continue
        seen.add(ctx.label)
        pointers: list[tuple[str, Toolkit]] = []
        home = ctx.vars.get("CUDA_HOME")
        if home:
            tk = toolkit_by_nvcc(facts, posixpath.join(home, "bin/nvcc"))
            if tk is not None:
                pointers.append((f"CUDA_HOME={home}", tk))
        if ctx.which_nvcc:
            tk = toolkit_by_nvcc(facts, ctx.which_nvcc[0])
            if tk is not None and tk.wrapper_of:
                tk = toolkit_by_nvcc(facts, tk.wrapper_of) or tk
            if tk is not None:
                pointers.append((f"`which nvcc` = {ctx.which_nvcc[0]}", tk))
        if ctx.usr_local_cuda_exists and facts.usr_local_cuda:
            tk = toolkit_by_nvcc(facts, posixpath.join(facts.usr_local_cuda, "bin/nvcc"))
            if tk is not None:
                pointers.append((f"/usr/local/cuda → {facts.usr_local_cuda}", tk))
        versions = {tk.version for _, tk in pointers}
        if len(versions) < 2:
            continue
        used = pointers[0][1]
        newer = [
            p
            for p in pointers
            if p[1].version and Version(p[1].version) > Version(used.version or "0")
        ]
        severity: Severity = (
            "warning" if newer and pointers[0][0].startswith("CUDA_HOME") else "info"
        )
        listing = "; ".join(f"{name} gives CUDA {tk.version}" for name, tk in pointers)
        explanation = (
            f"In the {ctx.label} environment the toolkit pointers disagree: {listing}. "
            f"FlashInfer and torch take {pointers[0][0]} first, so they build with CUDA "
            f"{used.version}, whatever `nvcc --version` in a shell says."
        )
        if severity == "info":
            explanation += (
                " Nothing resolves to an older toolkit than the shell suggests, so this is "
                "only a tidiness issue."
            )
        yield Finding(
            id="toolkit-shadowed",
            severity=severity,
            title=f"Several CUDA toolkits, and the {ctx.label} points at different ones",
            explanation=explanation,
            evidence=tuple(
                [f"{name} → {tk.home} (CUDA {tk.version})" for name, tk in pointers]
                + [f"installed: {t.home} (CUDA {t.version})" for t in distinct.values()]
            ),
            python=s.python.path if s.python else None,
        )


Rule = Callable[[Facts, Sequence[Subject]], Iterable[Finding]]

RULES: tuple[tuple[str, Rule], ...] = (
    ("no-nvidia-driver", rule_no_driver),
    ("flashinfer-arch-rejected", rule_flashinfer_arch),
    ("nvcc-too-old-for-gpu", rule_nvcc_too_old),
    ("nvcc-torch-major-mismatch", rule_major_mismatch),
    ("driver-too-old-for-torch", rule_driver_torch),
    ("driver-too-old-for-nvcc", rule_driver_nvcc),
    ("torch-lacks-gpu-arch", rule_torch_arch),
    ("toolkit-shadowed", rule_toolkit_shadowed),
    ("jit-nvcc-missing", rule_jit_nvcc_missing),
    ("extension-torch-abi-mismatch", rule_extension_abi),
    ("torch-cpu-build", rule_torch_cpu_build),
    ("container-without-gpu-runtime", rules_container.rule_container_runtime),
    ("mig-device-not-selected", rule_mig_not_selected),
    ("cuda-compat-shadows-driver", rule_compat_shadows),
    ("triton-ptxas-too-old", rule_triton_ptxas),
    ("cuda-library-shadowed", rule_library_shadowed),
    ("toolkit-headers-mismatch", rule_headers_mismatch),
    ("driver-too-old-for-torch", rule_driver_ptx),  # the PTX-only (error 222) case
    ("flashinfer-arch-rejected", rule_flashinfer_outside_table),  # before 0.2, after the table
    ("toolkit-shadowed", rules_current.rule_current_vs_login),  # `local`: current vs login
)


def evaluate(facts: Facts) -> tuple[tuple[Finding, ...], tuple[FlashInferReplay, ...]]:
    """All findings (without fixes), most severe first, and the FlashInfer replays."""
    subs = subjects(facts)
    findings = [f for _id, rule in RULES for f in rule(facts, subs)]
    findings = rules_current.annotate(facts, subs, findings)
    findings.sort(key=lambda f: SEVERITY_ORDER[f.severity])
    replays = tuple(s.replay for s in subs if s.replay is not None)
    return tuple(findings), replays
