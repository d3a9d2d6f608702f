"""What the rules look at: one interpreter judged in the environment it really runs under.

A ``Subject`` is an interpreter with its judging environment (a serving process beats its
unit, which beats the login shell, which beats the SSH session — ``judging_context``), the GPUs
visible there, FlashInfer's replayed decisions and the toolkit a JIT build would use. It lives
below the rules (``tui.core.findings``), so no rule imports the registry back.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from tui.core.facts import EnvContext, Facts, PythonEnv, Toolkit
from tui.core.findings import FlashInferReplay
from tui.core.rules.flashinfer_replay import (
    ReplayInput,
    ReplayTrace,
    find_cuda_home,
    replay_input,
    trace,
    visible_devices,
)

# whose environment judges a python ("current": the `local` target's own environment)
CONTEXT_PRIORITY = ("process", "unit", "current", "login", "ssh")


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
        out.append(subject_in(facts, py, ctx))
    if not out:
        ctx = next(
            (c for kind in ("current", "login") for c in facts.contexts if c.kind == kind),
            facts.context(None),
        )
        out.append(subject_in(facts, None, ctx))
    return tuple(out)


def subject_in(facts: Facts, py: PythonEnv | None, ctx: EnvContext | None) -> Subject:
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
