"""The cuDNN 9 sub-libraries an interpreter's wheel cuDNN gets from another cuDNN.

torch's cuDNN frontend is always the wheel's (``libtorch_cuda.so``'s ``DT_RPATH`` names
``nvidia/cudnn/lib``; torch ≥ 2.10 also preloads it from there), but its sub-libraries are
opened by name (``tui.core.tables.cudnn_sublibs``): for a running server, what
``/proc/PID/maps`` shows; otherwise resolved as the loader would — the caller's own directory
first when it has a ``DT_RPATH``, else ``LD_LIBRARY_PATH`` first, then the wheel's directory,
then ld.so.cache. Only a copy of another cuDNN version (or of an unknown one) is kept.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tui.core.facts import EnvContext, Facts, LibFile, PythonEnv
from tui.core.findings import Finding
from tui.core.rules.rulekit import finding
from tui.core.rules.subject import Subject
from tui.core.tables.cudnn_sublibs import (
    CudnnRelease,
    first_shipping,
    opened_by,
    release_for,
)

_SUB = re.compile(r"^(libcudnn_[a-z_]+)\.so\.(9(?:\.\d+)*)$")
_DIST = re.compile(r"nvidia-cudnn(-cu\d+)?")


@dataclass(frozen=True)
class SubShadow:
    stem: str  # "libcudnn_engines_tensor_ir"
    path: str  # the file the loader takes (or the process mapped)
    version: str | None  # its cuDNN version from the file name ("9.23.2"), None: unknown
    wheel_version: str  # the wheel's cuDNN ("9.20.0.48")
    dist: str  # "nvidia-cudnn-cu13"
    caller: str  # the library that opens it: "libcudnn_graph"
    entry: str | None  # the LD_LIBRARY_PATH directory (None: ld.so.cache, or mapped)
    mapped: bool
    in_wheel: bool  # the wheel's directory has it too (LD_LIBRARY_PATH came first)
    row: CudnnRelease


def _version(name: str) -> str | None:
    m = _SUB.match(posixpath.basename(name))
    if m is None or m.group(2).count(".") < 2:
        return None  # libcudnn_graph.so.9 names only the major
    return m.group(2)


def _same(a: str | None, b: str) -> bool:
    return a is not None and a.split(".")[:3] == b.split(".")[:3]


def _frontend(py: PythonEnv) -> tuple[str, str, str] | None:
    """(its directory, the distribution, its version) of the wheel's ``libcudnn.so.9``."""
    path = next((p for p in py.cuda_libs if posixpath.basename(p) == "libcudnn.so.9"), None)
    if path is None:
        return None
    owners = {d for p, d in py.lib_owners if posixpath.normpath(p) == posixpath.normpath(path)}
    named = owners or {d for d in py.packages if _DIST.fullmatch(d)}
    if len(named) != 1:
        return None
    dist = next(iter(named))
    version = py.packages.get(dist)
    return (posixpath.dirname(posixpath.normpath(path)), dist, version) if version else None


def _from_path(ctx: EnvContext, name: str, own: str) -> tuple[str, LibFile] | None:
    files = {posixpath.normpath(f.path): f for f in ctx.ld_libs}
    for d in (ctx.vars.get("LD_LIBRARY_PATH") or "").split(":"):
        if not d.startswith("/") or posixpath.normpath(d) == own:
            continue
        f = files.get(posixpath.normpath(posixpath.join(d, name)))
        if f is not None:
            return d, f
    return None


def sub_shadows(facts: Facts, s: Subject) -> tuple[SubShadow, ...]:
    py, ctx = s.python, s.context
    if py is None or ctx is None or not py.torch_cuda:
        return ()
    front = _frontend(py)
    if front is None:
        return ()
    own, dist, wheel_version = front
    row = release_for(wheel_version)
    if row is None:
        return ()
    have = {posixpath.basename(p) for p in py.cuda_libs if posixpath.dirname(p) == own}
    mapped = [m for m in ctx.mapped_libs if _SUB.match(posixpath.basename(m))]
    out: list[SubShadow] = []
    for stem, caller, own_first in opened_by(row):
        name = f"{stem}.so.9"
        in_wheel = name in have
        hit = next((m for m in mapped if posixpath.basename(m).startswith(name)), None)
        if hit is not None:  # loaded beats installed
            if posixpath.dirname(posixpath.normpath(hit)) == own:
                continue
            entry = next(
                (
                    posixpath.dirname(x.path)
                    for x in ctx.ld_libs
                    if posixpath.basename(x.path) == name and hit in (x.path, x.target)
                ),
                None,
            )
            f, is_mapped = LibFile(hit), True
        else:
            taken = None if own_first and in_wheel else _from_path(ctx, name, own)
            if taken is None and in_wheel:
                continue
            cached = next((c for c in facts.ld_cache if posixpath.basename(c.path) == name), None)
            if taken is not None:
                entry, f = taken
            elif cached is not None:
                entry, f = None, cached
            else:
                continue
            is_mapped = False
        version = _version(f.target or f.path)
        if _same(version, wheel_version):
            continue
        out.append(
            SubShadow(
                stem, f.path, version, wheel_version, dist, caller, entry, is_mapped, in_wheel, row
            )
        )
    return tuple(out)


def chain(x: SubShadow, label: str) -> str:
    """The causal chain of one sub-library, in words."""
    name = f"{x.stem}.so.9"
    theirs = f"cuDNN {x.version}" if x.version else "cuDNN version unknown"
    if x.mapped:
        through = f", through LD_LIBRARY_PATH entry {x.entry}" if x.entry else ""
        where = f"{label} has {x.path} mapped ({theirs}){through}"
    elif x.entry:
        why = (
            f"the wheel's directory has one too, but {x.caller}.so.9 finds it through its "
            "RUNPATH, which LD_LIBRARY_PATH precedes"
            if x.in_wheel
            else "the wheel's directory has none"
        )
        where = (
            f"the loader takes it from LD_LIBRARY_PATH entry {x.entry}: {x.path} ({theirs}); {why}"
        )
    else:
        lacks = (
            f"the {x.dist} {x.wheel_version} wheel does not ship it (its file list: {x.row.source})"
            if x.stem not in x.row.ships
            else "this install of the wheel lacks it"
        )
        where = f"{lacks}, so the loader takes it from ld.so.cache: {x.path} ({theirs})"
    breaks = (
        f"cuDNN {x.wheel_version} refuses a sub-library of cuDNN {x.version}: convolutions, SDPA "
        "and the other cuDNN calls fail with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"
        if x.version
        else "unless it is the same cuDNN release, cuDNN calls fail with "
        "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"
    )
    return f"{x.caller}.so.9 of {x.dist} {x.wheel_version} opens {name} by name; {where} → {breaks}"


def evidence_line(x: SubShadow) -> str:
    theirs = f"cuDNN {x.version}" if x.version else "cuDNN version unknown"
    return f"{x.path}: {theirs} (wheel {x.dist} {x.wheel_version})"


def advice(found: tuple[SubShadow, ...]) -> str:
    """What to do for the sub-libraries no LD_LIBRARY_PATH entry gives (ld.so.cache, mapped)."""
    cached = [x for x in found if not x.entry]
    if not cached:
        return ""
    x = cached[0]
    row = first_shipping(x.stem, x.wheel_version)
    which = f" ({row.source}, does)" if row else ""
    return (
        f" Install an {x.dist} release whose wheel ships {x.stem}{which}, or remove the system "
        f"cuDNN that gives {x.path} (`dpkg -S {x.path}` names its package) if nothing else on the "
        "host needs it."
    )


def rule_cudnn_sublibs(
    finding_id: str, facts: Facts, subs: Sequence[Subject], files: Sequence[str]
) -> Iterable[Finding]:
    """``cuda-library-shadowed`` for cuDNN 9's sub-libraries (``files``: what set the
    subject's LD_LIBRARY_PATH)."""
    for s in subs:
        found = sub_shadows(facts, s)
        if not found or s.python is None or s.context is None:
            continue
        py, ctx = s.python, s.context
        evidence = [f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})"]
        value = ctx.vars.get("LD_LIBRARY_PATH")
        if value:
            evidence.append(
                f"LD_LIBRARY_PATH={value}" + (f" (set in {', '.join(files)})" if files else "")
            )
        evidence += [evidence_line(x) for x in found]
        drop = sorted({x.entry for x in found if x.entry})
        text = ". ".join(chain(x, ctx.label) for x in found) + "."
        if drop:
            text += (
                f" Remove {', '.join(drop)} from LD_LIBRARY_PATH"
                + (f" where it is set ({', '.join(files)})" if files else "")
                + " so the wheel's own copies load."
            )
        text += advice(found)
        first = found[0]
        verb = "has loaded" if first.mapped else "loads"
        title = (
            f"cuDNN {first.wheel_version} {verb} {first.stem} {first.version or ''} from "
            f"{posixpath.dirname(first.path)}, not its own"
        ).replace("  ", " ")
        severity = "critical" if any(x.version for x in found) else "warning"
        yield finding(finding_id, severity, title, text, evidence, s)
