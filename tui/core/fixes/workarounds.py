"""Workarounds that leave the toolkit alone: pin FlashInfer's arch list, or sample without it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from tui.core.facts import EnvContext, Facts, PythonEnv
from tui.core.findings import flashinfer_arch_rejected
from tui.core.findings.flashinfer_arch_rejected import SAMPLER_OFF, SAMPLER_OFF_ENV
from tui.core.fixes.env_targets import EnvTargets, env_targets, pick_python, serving_contexts
from tui.core.fixes.envset import EnvChange, dropin_dir, env_change, make_plan
from tui.core.fixes.plan import FixError, FixPlan, Step
from tui.core.fixes.record import Fix, Param
from tui.core.fixes.shell import (
    daemon_reload,
    ensure_file,
    undo_file,
    write_path,
)
from tui.core.fixes.simulate import python_env, with_env, with_vars
from tui.core.hosts import Host
from tui.core.redact import MASK
from tui.core.rules.subject import subjects
from tui.core.systemd_syntax import exec_start_value
from tui.core.tables import ptxas_targets

# FlashInfer splits on single spaces and needs MAJOR.MINOR with an optional letter suffix;
# anything else raises at `import flashinfer` (flashinfer-logic.md §4a).
ARCH_ITEM = re.compile(r"\d+\.\d+[a-z]?")

SGLANG_FLAG = "--sampling-backend"
SGLANG_VALUE = "pytorch"
VLLM_ENV = dict((SAMPLER_OFF_ENV,))
ENGINES = ("sglang", "vllm")


def validate_arch_list(value: str) -> str:
    items = value.split(" ")
    bad = [i for i in items if not ARCH_ITEM.fullmatch(i)]
    if not value or bad:
        raise FixError(
            f"value={value!r} is not a FlashInfer arch list: use MAJOR.MINOR entries with an "
            "optional suffix, separated by single spaces, e.g. value='12.0a' or value='9.0a 12.0a'"
        )
    return value


def set_flashinfer_arch_list(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    value = validate_arch_list(params.get("value", ""))
    py = pick_python(facts, python)
    change = env_change(
        host,
        env_targets(facts, py),
        name="arch-list",
        fix_id="set-flashinfer-arch-list",
        env={"FLASHINFER_CUDA_ARCH_LIST": value},
        stamp=stamp,
    )
    return make_plan(
        facts,
        host,
        "set-flashinfer-arch-list",
        {"value": value},
        py,
        steps=change.steps,
        verify=(flashinfer_arch_rejected.ID,),
        notes=change.notes,
        change=change,
        stamp=stamp,
    )


def _engine(ctx: EnvContext, py: PythonEnv | None) -> str | None:
    """sglang or vllm, from the module or program the process runs (not from its paths)."""
    args = list(ctx.words)
    words = [args[0].rsplit("/", 1)[-1], *args[1:]] if args else []
    for word in words:
        for name in ENGINES:
            if word == name or word.startswith(name + "."):
                return name
    if py is not None:
        for name in ENGINES:
            if name in py.packages:
                return name
    return None


def _with_sampling_flag(args: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == SGLANG_FLAG:
            skip = True
            continue
        if a.startswith(SGLANG_FLAG + "="):
            continue
        out.append(a)
    return [*out, SGLANG_FLAG, SGLANG_VALUE]


def _by_hand(unit: str) -> str:
    return (
        f"Add {SGLANG_FLAG} {SGLANG_VALUE} to the unit's ExecStart yourself "
        f"(systemctl edit {unit}), then restart it."
    )


def _running_args(unit: str, ctx: EnvContext) -> list[str]:
    """The arguments the unit's process runs with, exactly (``argv``); facts from a probe that
    did not record them fall back to the displayed command line split at blanks."""
    by_hand = _by_hand(unit)
    if ctx.argv is None and ctx.argv_note:
        raise FixError(
            f"{unit}: {ctx.label}: {ctx.argv_note}, so its command line cannot be copied into "
            f"a new ExecStart. {by_hand}"
        )
    args = list(ctx.words)
    if not args:
        raise FixError(f"{unit}: the probe saw no command line for {ctx.label}. {by_hand}")
    if any(MASK in a for a in args):
        raise FixError(
            f"{unit}: the running command line has values the probe masked as secrets "
            f"({MASK}), so it cannot be copied into a new ExecStart. {by_hand}"
        )
    return args


def _sglang_unit_step(host: Host, unit: str, ctx: EnvContext, stamp: str) -> Step:
    args = _with_sampling_flag(_running_args(unit, ctx))
    try:
        exec_start = exec_start_value(args)
    except ValueError as e:
        raise FixError(f"{unit}: {e}. {_by_hand(unit)}") from e
    name = "50-detective-tui-sampling.conf"
    content = "\n".join(
        [
            "# Written by detective-tui (fix sampling-backend-fallback). Delete this file to undo.",
            "[Service]",
            "ExecStart=",
            f"ExecStart={exec_start}",
        ]
    )
    directory = write_path(host, dropin_dir(unit))
    suffix = f".detective-tui-{stamp}.bak"
    return Step(
        title=f"Start {unit} with {SGLANG_FLAG} {SGLANG_VALUE}",
        command=ensure_file(directory, name, content, suffix) + "\n" + daemon_reload(host),
        undo=undo_file(directory, name, suffix) + "\n" + daemon_reload(host),
        changes=(
            f"adds the drop-in {dropin_dir(unit)}/{name} replacing ExecStart with the running "
            f"command line plus {SGLANG_FLAG} {SGLANG_VALUE}; {unit} uses it from its next restart"
        ),
        needs_root=True,
    )


def sampling_backend_fallback(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    py = pick_python(facts, python)
    targets = env_targets(facts, py)
    engines = {ctx.label: _engine(ctx, py) for ctx in serving_contexts(facts, py)}
    installed = [n for n in ("vllm", "sglang") if py is not None and n in py.packages]
    engine = params.get("engine") or (installed[0] if installed else None)
    if engine not in (None, "sglang", "vllm"):
        raise FixError(f"engine={engine}: use engine=sglang or engine=vllm")
    sglang_units = tuple((u, c) for u, c in targets.units if engines.get(c.label) == "sglang")
    vllm_units = tuple((u, c) for u, c in targets.units if engines.get(c.label) == "vllm")
    steps: list[Step] = [_sglang_unit_step(host, u, c, stamp) for u, c in sglang_units]
    notes = [
        f"{c.label} is not managed by systemd: restart it with {SGLANG_FLAG} {SGLANG_VALUE} "
        "added to its command line."
        for c in targets.unmanaged
        if engines.get(c.label) == "sglang"
    ]
    vllm = EnvChange()
    if vllm_units or engine == "vllm":
        vllm_targets = EnvTargets(
            units=vllm_units,
            unmanaged=tuple(c for c in targets.unmanaged if engines.get(c.label) == "vllm"),
            activate=targets.activate,
            profile=targets.profile,
            env_files=targets.env_files,
        )
        vllm = env_change(
            host,
            vllm_targets,
            name="sampling",
            fix_id="sampling-backend-fallback",
            env=VLLM_ENV,
            stamp=stamp,
        )
        steps += vllm.steps
        notes += vllm.notes
    elif engine == "sglang" and not sglang_units:
        notes.append(
            f"SGLang takes the sampling backend from its command line only: add {SGLANG_FLAG} "
            f"{SGLANG_VALUE} where you start the server."
        )
    if not steps:
        advice = " ".join(notes) or (
            f"start the server with --sampling-backend pytorch (SGLang) or {SAMPLER_OFF} (vLLM)"
        )
        raise FixError(
            "sampling-backend-fallback found no SGLang systemd unit and no vLLM install to "
            f"change on {host.name}; {advice}"
        )
    notes += [
        f"{u} keeps its old command line until it restarts (systemctl restart {u}); "
        "the restart is offered separately."
        for u, _c in sglang_units
    ]
    notes.append(
        "This is a workaround: FlashInfer still cannot target the GPU, the server just stops "
        "using it for sampling, so the finding stays as information (other FlashInfer JIT "
        "kernels would still fail)."
    )
    change = EnvChange(
        units=(*(u for u, _c in sglang_units), *vllm.units),
        contexts=(*(c.label for _u, c in sglang_units), *vllm.contexts),
        activate=vllm.activate,
        profile=vllm.profile,
        env_keys=vllm.env_keys,
        exec_units=tuple(u for u, _c in sglang_units),
    )
    return make_plan(
        facts,
        host,
        "sampling-backend-fallback",
        {"engine": engine} if engine else {},
        py,
        steps=tuple(steps),
        verify=(flashinfer_arch_rejected.ID,),
        notes=tuple(notes),
        change=change,
        stamp=stamp,
    )


# -- the records: how the what-if tries and simulates each -----------------------------------


def _arch_list_choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    """An arch list the resolved nvcc can build for every visible GPU (``12.0a`` before
    ``12.0``), or none."""
    subject = next((s for s in subjects(facts) if s.python and s.python.path == python), None)
    if subject is None or subject.replay is None or not subject.devices:
        return []
    version = subject.jit_version
    items: list[str] = []
    for major, minor in dict.fromkeys(subject.devices):
        choices = [f"{major}.{minor}a", f"{major}.{minor}"] if major >= 9 else [f"{major}.{minor}"]
        usable = [
            c
            for c in choices
            if version is not None and ptxas_targets.accepts(version, c.replace(".", ""))
        ]
        if not usable:
            return []
        items.append(usable[0])
    return [{"value": " ".join(items)}]


def _simulate_fallback(
    facts: Facts, params: Mapping[str, str], py: PythonEnv | None, labels: set[str]
) -> Facts:
    flag = f"{SGLANG_FLAG} {SGLANG_VALUE}"

    def fallback(ctx: EnvContext) -> EnvContext:
        cmdline = ctx.cmdline
        if cmdline and "sglang" in cmdline and flag not in cmdline:
            cmdline = f"{cmdline} {flag}"
        return dataclasses.replace(ctx, vars={**ctx.vars, **VLLM_ENV}, cmdline=cmdline)

    return with_env(facts, labels, fallback)


def _engine_choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    py = python_env(facts, python)
    engine = next((name for name in ENGINES if py is not None and name in py.packages), None)
    return [{"engine": engine}] if engine else []


ARCH_LIST = Fix(
    id="set-flashinfer-arch-list",
    order=4,
    params=(Param("value", "FLASHINFER_CUDA_ARCH_LIST, e.g. '12.0a'"),),
    plan=set_flashinfer_arch_list,
    simulate=lambda facts, params, py, labels: with_vars(
        facts, labels, FLASHINFER_CUDA_ARCH_LIST=params["value"]
    ),
    choices=_arch_list_choices,
    title=lambda facts, params, python: (
        f"Set FLASHINFER_CUDA_ARCH_LIST={params['value']!r} (what this nvcc can build)"
    ),
)
SAMPLING_FALLBACK = Fix(
    id="sampling-backend-fallback",
    order=5,
    params=(Param("engine", "sglang or vllm"),),
    plan=sampling_backend_fallback,
    simulate=_simulate_fallback,
    choices=_engine_choices,
    title=lambda facts, params, python: (
        f"Sample without FlashInfer (--sampling-backend pytorch / {SAMPLER_OFF})"
    ),
)
