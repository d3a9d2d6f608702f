"""A CUDA library torch loads is not the one it was built with, in a way that breaks it. For a
running server, `/proc/PID/maps` says what it really loaded (loaded beats installed); otherwise
the library is resolved as the dynamic loader would in that environment. torch's own
libraries carry a `DT_RPATH` naming the wheels' `nvidia/*/lib` (searched *before*
`LD_LIBRARY_PATH`), so `libcudart`, `libcublas`, `libcudnn`, `libnccl` are pinned; three are
not — `libnvJitLink` (cuSPARSE has no RPATH for it), `libcublasLt` (cuBLAS finds it through
its `RUNPATH`, which `LD_LIBRARY_PATH` precedes) and `libnvrtc` (cuDNN `dlopen`s it) — unless
torch loads them itself from the wheels right after `libtorch_global_deps.so`. Which it does
per release is a table read from the real wheels (`tui/core/tables/torch_libs.py`; the slow test
`tests/test_torch_libs_wheels_slow.py`):

| torch | loads from the wheels itself | so `LD_LIBRARY_PATH` can shadow |
|---|---|---|
| 2.5.x (2.5.1 read) | nothing (only after a failed load) | nvJitLink, cuBLASLt, NVRTC |
| 2.6 – 2.8 (2.6.0, 2.8.0 read) | NVRTC, nvJitLink (when the wheels' cudart is loaded) | cuBLASLt |
| 2.9 (2.9.0 read) | NVRTC, nvJitLink | cuBLASLt |
| 2.10, 2.11 (read) | all of them, cuBLASLt before cuBLAS | nothing |

Two conditions the table alone does not say. The 2.6–2.9 preloads happen only when
`/proc/self/maps` holds the libcudart string torch checks for (2.6–2.8:
`nvidia/cuda_runtime/lib/libcudart.so`); `libtorch_global_deps.so`'s `DT_RPATH` names the wheels'
`nvidia/cuda_runtime/lib`, so without that wheel the libcudart comes from `LD_LIBRARY_PATH` and
nothing is preloaded: all three can be shadowed. And a preload answers only its soname
(`libnvrtc.so.12`): code that opens the unversioned `libnvrtc.so` (`ctypes.CDLL("libnvrtc.so")`)
gets an old toolkit's dev link on `LD_LIBRARY_PATH` whatever torch loaded — a `warning`, since the
probe cannot tell whether such code runs here.

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

torch 1.x links cuDNN into `libtorch_global_deps.so` itself (`DT_NEEDED libcudnn.so.8` in the
PyPI wheel 1.13.1+cu117), found through that file's search path: a `DT_RPATH` naming the wheels'
`nvidia/cudnn/lib` is searched before `LD_LIBRARY_PATH`, a `DT_RUNPATH` (`$ORIGIN`: the "fat"
wheels' copies bundled in `torch/lib`, as 1.12.1+cu102's `libcublas.so.10`) after it. Without the
`nvidia-cudnn-cu11` wheel torch pins (`Requires-Dist … (==8.5.0.96)`), an older cuDNN first on
`LD_LIBRARY_PATH` is the one loaded, and torch's own check (`torch/backends/cudnn/__init__.py`:
the same major, a minor at least the build's) raises `cuDNN version incompatibility` at its first
use: `critical` (`tui/core/rules/cudnn_runtime.py`).

cuDNN 9's frontend is always the wheel's, but it opens its sub-libraries by name
(`libcudnn_graph` in turn the engines): which names, and whether the caller's own directory
comes before `LD_LIBRARY_PATH` (a `DT_RPATH`, only 9.24's frontend; the rest have a `RUNPATH`),
is a table read from the real `nvidia-cudnn-*` wheels (`tui/core/tables/cudnn_sublibs.py`). A
sub-library of another cuDNN release — from `LD_LIBRARY_PATH`, from ld.so.cache when the wheel
lacks it, or mapped by the server — is `critical` (cuDNN stops with
`CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH`), with no version in its name a `warning`, whatever
the torch (`tui/core/rules/cudnn_sublibs.py`). pytorch/pytorch#187824: torch 2.12.1+cu130 pins
`nvidia-cudnn-cu13==9.20.0.48`, whose wheel ships no `libcudnn_engines_tensor_ir.so.9`; the
host's `libcudnn9-cuda-12` 9.23.2 answers from ld.so.cache:
`[critical] cuDNN 9.20.0.48 loads libcudnn_engines_tensor_ir 9.23.2 from /usr/lib/x86_64-linux-gnu, not its own`.

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

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from tui.core.facts import EnvContext, Facts, LibFile, PythonEnv
from tui.core.findings import Finding
from tui.core.findings.record import FindingRecord
from tui.core.rules import cudnn_runtime, cudnn_sublibs
from tui.core.rules.rulekit import finding as _finding
from tui.core.rules.rulekit import gpu_evidence as _gpu_evidence
from tui.core.rules.subject import Subject
from tui.core.tables import ptxas_targets
from tui.core.tables.torch_libs import (
    CUDA_LIBS,
    DISTS,
    UNPINNED,
    loader_for,
    preloads_skipped,
    unpinned,
)

# The rule, in short:
# ``cuda-library-shadowed``: a CUDA library torch loads is not the one it was built with.
#
# For a running server, what ``/proc/PID/maps`` shows is what it loaded (loaded beats installed);
# otherwise the library is resolved as the loader would for the interpreter's environment:
# ``LD_LIBRARY_PATH`` directories first for the libraries torch does not pin itself
# (``tui.core.tables.torch_libs``), then the wheels' copies. It fires only where the difference breaks
# something: another CUDA major in the process, an nvJitLink or cuBLASLt older than the one the
# wheels' cuSPARSE/cuBLAS were built against (``undefined symbol … version libnvJitLink.so.12``
# at ``import torch``), or an NVRTC older than a visible GPU needs.

ID = "cuda-library-shadowed"

CUDA_MAJOR_SONAMES = ("libcudart", "libnvrtc", "libcublas", "libcublasLt", "libnvJitLink")
_FILE = re.compile(r"^(lib[A-Za-z]+)\.so\.(\d+)((?:\.\d+)*)$")
_DIR_VERSION = re.compile(r"cuda[-_]?(\d+\.\d+)(?:/|$)")


@dataclass(frozen=True)
class Lib:
    path: str  # as loaded or as the loader names it
    stem: str  # "libnvrtc"
    soname_major: int  # the number after .so.
    version: str | None  # CUDA major.minor of the library, when known
    how: str  # where the version comes from


def lib_of(path: str, target: str | None = None, py: PythonEnv | None = None) -> Lib | None:
    """What a library file is: its name, soname major and CUDA version (from the versioned
    file name, a ``cuda-X.Y`` directory, or the nvidia-* wheel that ships it)."""
    m = _FILE.match(posixpath.basename(path))
    if m is None and target:  # the unversioned name (libnvrtc.so): its link target says
        m = _FILE.match(posixpath.basename(target))
    if m is None or m.group(1) not in CUDA_LIBS:
        return None
    stem, major = m.group(1), int(m.group(2))
    for name in (target, path):
        if not name:
            continue
        full = _FILE.match(posixpath.basename(name))
        parts = (full.group(3) or "").strip(".").split(".") if full else []
        # libcudart.so.12.4.127 carries its version; libcudart.so.11.0 is only a soname
        if full and len(parts) >= 2 and stem in CUDA_MAJOR_SONAMES:
            return Lib(path, stem, major, f"{full.group(2)}.{parts[0]}", posixpath.basename(name))
    d = _DIR_VERSION.search(target or path)
    if d:
        return Lib(path, stem, major, d.group(1), f"in {d.group(0).rstrip('/')}")
    dist = owner(py, path, stem) if py is not None and "/nvidia/" in path else None
    if dist is not None and py is not None:
        version = py.packages[dist]
        return Lib(path, stem, major, _mm(version), f"{dist} {version}")
    return Lib(path, stem, major, None, "version unknown")


def owner(py: PythonEnv, path: str, stem: str) -> str | None:
    """The installed nvidia-* distribution a wheel library comes from: the one whose RECORD lists
    it (the probe's ``nvown``; not two), else the only installed distribution of its name
    (``nvidia-nccl``, ``nvidia-nccl-cu12``…: the suffix is a CUDA major, not the soname's)."""
    owners = {d for p, d in py.lib_owners if posixpath.normpath(p) == posixpath.normpath(path)}
    if len(owners) == 1 and next(iter(owners)) in py.packages:
        return next(iter(owners))
    if owners:
        return None
    base = DISTS.get(stem)
    m = _FILE.match(posixpath.basename(path))
    if base and m and stem in CUDA_MAJOR_SONAMES and f"{base}-cu{m.group(2)}" in py.packages:
        return f"{base}-cu{m.group(2)}"  # libcudart.so.12: its soname major is CUDA's
    named = [d for d in py.packages if base and (d == base or re.fullmatch(rf"{base}-cu\d+", d))]
    return named[0] if len(named) == 1 else None


def _mm(version: str) -> str | None:
    try:
        v = Version(version)
    except InvalidVersion:
        return None
    return f"{v.major}.{v.minor}"


def _older(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return False
    return Version(a) < Version(b)


def wheel_lib(py: PythonEnv, stem: str) -> Lib | None:
    for path in py.cuda_libs:
        lib = lib_of(path, None, py)
        if lib is not None and lib.stem == stem:
            return lib
    return None


def resolved_from_path(
    ctx: EnvContext, stem: str, major: int | None
) -> tuple[str | None, LibFile] | None:
    """(the LD_LIBRARY_PATH directory, the file) the loader takes ``stem.so.<major>`` from
    (``major`` None: the unversioned ``stem.so``)."""
    files = {posixpath.normpath(f.path): f for f in ctx.ld_libs}
    names = (f"{stem}.so",) if major is None else (f"{stem}.so.{major}", f"{stem}.so.{major}.0")
    for d in (ctx.vars.get("LD_LIBRARY_PATH") or "").split(":"):
        if not d.startswith("/"):
            continue
        for name in names:
            f = files.get(posixpath.normpath(posixpath.join(d, name)))
            if f is not None:
                return d, f
    return None


@dataclass(frozen=True)
class Shadow:
    lib: Lib
    wheel: Lib | None
    entry: str | None  # the LD_LIBRARY_PATH directory it comes from (None: mapped, origin unknown)
    mapped: bool
    breaks: str  # what breaks, in words
    gpus: tuple[tuple[int, int], ...] = ()
    skipped: str | None = None  # why torch's own preload did not happen (the libcudart it saw)
    plain: bool = False  # the unversioned name, which torch's preloaded soname does not answer


def _breaks(lib: Lib, wheel: Lib | None, torch_major: int, devices: Sequence) -> tuple:
    if lib.stem in CUDA_MAJOR_SONAMES and lib.soname_major != torch_major:
        return (
            f"it is a CUDA {lib.soname_major} library in a process whose torch is built for CUDA "
            f"{torch_major}: two CUDA runtimes in one process, which fails as soon as they "
            "exchange a stream, a handle or an error",
            (),
        )
    if lib.stem in ("libnvJitLink", "libcublasLt") and wheel and _older(lib.version, wheel.version):
        loader = UNPINNED[lib.stem].split(" (")[0]
        return (
            f"{loader} from the nvidia wheels was built against {lib.stem} {wheel.version} and "
            f"needs its newer symbols: `import torch` fails with 'undefined symbol: … version "
            f"{lib.stem}.so.{lib.soname_major}'",
            (),
        )
    if lib.stem == "libnvrtc" and lib.version:
        short = [
            cc
            for cc in dict.fromkeys(devices)
            if ptxas_targets.accepts(lib.version, f"{cc[0]}{cc[1]}") is False
        ]
        if short:
            need = ptxas_targets.first_toolkit_for(f"{short[0][0]}{short[0][1]}")
            return (
                f"NVRTC {lib.version} cannot compile for SM "
                f"{', '.join(f'{a}.{b}' for a, b in short)} (needs CUDA ≥ {need or '?'}): cuDNN's "
                "runtime-compiled engines (SDPA, convolutions), torch's jiterator and every other "
                "runtime compilation fail with 'invalid value for --gpu-architecture'",
                tuple(short),
            )
    return None, ()


def shadows(facts: Facts, s: Subject) -> tuple[Shadow, ...]:
    py, ctx = s.python, s.context
    if py is None or ctx is None or not py.torch_cuda:
        return ()
    try:
        torch_major = Version(py.torch_cuda).major
    except InvalidVersion:
        return ()
    out: list[Shadow] = []
    if ctx.mapped_libs:  # loaded beats installed
        for path in ctx.mapped_libs:
            lib = lib_of(path, None, py)
            if lib is None:
                continue
            wheel = wheel_lib(py, lib.stem)
            if wheel is not None and posixpath.normpath(wheel.path) == posixpath.normpath(path):
                continue  # the wheels' own copy
            if "/nvidia/" in path and lib.soname_major == torch_major:
                continue  # another wheel's copy of the same major: not a shadow
            breaks, gpus = _breaks(lib, wheel, torch_major, s.devices)
            if breaks:
                out.append(Shadow(lib, wheel, _entry_of(ctx, path), True, breaks, gpus))
        return tuple(out)
    stems, skipped = _unpinned_here(facts, py, ctx, torch_major)
    for stem in stems:
        wheel = wheel_lib(py, stem)
        major = wheel.soname_major if wheel else torch_major
        hit = resolved_from_path(ctx, stem, major)
        if hit is None and wheel is None:  # nothing in the wheels: ld.so.cache is next
            cached = _cached(facts, stem, major)
            hit = (None, cached) if cached else None
        if hit is None:
            continue
        entry, f = hit
        lib = lib_of(f.path, f.target)
        if lib is None:
            continue
        breaks, gpus = _breaks(lib, wheel, torch_major, s.devices)
        if breaks:
            out.append(Shadow(lib, wheel, entry, False, breaks, gpus, skipped))
    if "libnvrtc" not in stems:
        out += _plain_nvrtc(py, ctx, torch_major, s.devices)
    return tuple(out)


def _cached(facts: Facts, stem: str, major: int) -> LibFile | None:
    return next(
        (c for c in facts.ld_cache if posixpath.basename(c.path) == f"{stem}.so.{major}"), None
    )


def _cudart_seen(facts: Facts, py: PythonEnv, ctx: EnvContext, major: int) -> str | None:
    """The libcudart.so.<major> libtorch_global_deps.so loads, as /proc/self/maps would name it:
    its DT_RPATH (the wheels' ``nvidia/cuda_runtime/lib``, read from the real wheels) first, then
    LD_LIBRARY_PATH, then ld.so.cache."""
    wheel = wheel_lib(py, "libcudart")
    if wheel is not None and wheel.soname_major == major:
        return wheel.path
    hit = resolved_from_path(ctx, "libcudart", major)
    f = hit[1] if hit else _cached(facts, "libcudart", major)
    return (f.target or f.path) if f else None


def _unpinned_here(
    facts: Facts, py: PythonEnv, ctx: EnvContext, major: int
) -> tuple[tuple[str, ...], str | None]:
    """The stems LD_LIBRARY_PATH can shadow for this interpreter: the release's table, or all of
    them when torch's preload condition fails (its libcudart is not the one it checks for);
    with the libcudart that made it fail."""
    row = loader_for(py.torch_version)
    cudart = _cudart_seen(facts, py, ctx, major)
    if row is not None and cudart is not None and preloads_skipped(row, cudart):
        return tuple(UNPINNED), (
            f"torch {py.torch_version} loads the wheels' copies itself only when "
            f"`{row.condition}` is in /proc/self/maps ({row.source}), and the libcudart it "
            f"loads is {cudart}, so it does not"
        )
    return unpinned(py.torch_version), None


def _plain_nvrtc(py: PythonEnv, ctx: EnvContext, torch_major: int, devices: Sequence) -> list:
    """The unversioned libnvrtc.so on LD_LIBRARY_PATH: what ``dlopen("libnvrtc.so")`` gives even
    after torch preloaded its own, whose soname (libnvrtc.so.<major>) that name does not match."""
    hit = resolved_from_path(ctx, "libnvrtc", None)
    if hit is None:
        return []
    entry, f = hit
    lib = lib_of(f.path, f.target)
    if lib is None:
        return []
    wheel = wheel_lib(py, "libnvrtc")
    breaks, gpus = _breaks(lib, wheel, torch_major, devices)
    return [Shadow(lib, wheel, entry, False, breaks, gpus, plain=True)] if breaks else []


def _entry_of(ctx: EnvContext, mapped: str) -> str | None:
    """The LD_LIBRARY_PATH directory a mapped library came through: the one holding it, or a
    file whose symlinks lead to a file of the same name (``lib64`` → ``targets/…/lib``)."""
    name = posixpath.basename(mapped)
    for d in (ctx.vars.get("LD_LIBRARY_PATH") or "").split(":"):
        if not d.startswith("/"):
            continue
        if mapped.startswith(d.rstrip("/") + "/"):
            return d
        for f in ctx.ld_libs:
            if posixpath.dirname(f.path) == d.rstrip("/") and name in (
                posixpath.basename(f.target or ""),
                posixpath.basename(f.path),
            ):
                return d
    return None


def ld_path_files(facts: Facts, ctx: EnvContext) -> tuple[str, ...]:
    """The files that set this context's LD_LIBRARY_PATH (a process: its unit's)."""
    files = list(ctx.ld_path_files)
    if ctx.unit:
        for c in facts.contexts:
            if c.kind == "unit" and c.unit == ctx.unit:
                files += c.ld_path_files
    return tuple(dict.fromkeys(files))


def entries(facts: Facts, python: str | None) -> tuple[str, ...]:
    """The LD_LIBRARY_PATH directories a fix must drop for ``python`` (its subject)."""
    from tui.core.rules.subject import subjects

    for s in subjects(facts):
        if s.python is None or (python is not None and s.python.path != python):
            continue
        found = [x.entry for x in (*shadows(facts, s), *cudnn_sublibs.sub_shadows(facts, s))]
        found = [e for e in found if e]
        cudnn = cudnn_runtime.mismatch(facts, s)
        found += [cudnn.entry] if cudnn and cudnn.entry else []
        if found:
            return tuple(dict.fromkeys(found))
    return ()


def rule_library_shadowed(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        found = shadows(facts, s)
        if not found:
            continue
        py, ctx = s.python, s.context
        assert py is not None and ctx is not None
        first = found[0]
        chains = []
        evidence = [f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})"]
        value = ctx.vars.get("LD_LIBRARY_PATH")
        files = ld_path_files(facts, ctx)
        if value:
            evidence.append(
                f"LD_LIBRARY_PATH={value}" + (f" (set in {', '.join(files)})" if files else "")
            )
        for x in found:
            lib = x.lib
            version = f"CUDA {lib.version}" if lib.version else "CUDA ?"
            through = f", through LD_LIBRARY_PATH entry {x.entry}" if x.entry else ""
            loader = UNPINNED.get(lib.stem, "the loader")
            why = (
                f"{x.skipped}, and {loader} looks there before the wheels' copy"
                if x.skipped
                else f"torch {py.torch_version} does not load it itself and {loader} looks there "
                "before the wheels' copy"
            )
            where = (
                f"{ctx.label} has {lib.path} mapped ({version}, {lib.how}){through}"
                if x.mapped
                else f'code that opens the unversioned name (`dlopen("libnvrtc.so")`, '
                f'`ctypes.CDLL("libnvrtc.so")`) gets LD_LIBRARY_PATH entry {x.entry}\'s '
                f"{lib.path} ({version}, {lib.how}): the libnvrtc torch {py.torch_version} "
                f"loaded itself answers only to its soname {lib.stem}.so.{lib.soname_major}, "
                "so the loader maps a second, older NVRTC"
                if x.plain
                else f"no nvidia wheel here ships {lib.stem}, so the loader takes "
                f"{lib.stem}.so.{lib.soname_major} from ld.so.cache: {lib.path} ({version}, "
                f"{lib.how})"
                if x.entry is None
                else f"the loader takes {lib.stem}.so.{lib.soname_major} from LD_LIBRARY_PATH "
                f"entry {x.entry} first: {lib.path} ({version}, {lib.how}), because {why}"
            )
            theirs = (
                f" instead of the wheels' {x.wheel.path} (CUDA {x.wheel.version})"
                if x.wheel
                else ""
            )
            chains.append(f"{where}{theirs} → {x.breaks}")
            evidence.append(f"{lib.path}: {version} ({lib.how})")
            if x.wheel:
                evidence.append(f"wheel copy {x.wheel.path}: CUDA {x.wheel.version}")
        gpus = [cc for x in found for cc in x.gpus]
        evidence += _gpu_evidence(facts, gpus)
        drop = sorted({x.entry for x in found if x.entry})
        advice = (
            f" Remove {', '.join(drop)} from LD_LIBRARY_PATH"
            + (f" where it is set ({', '.join(files)})" if files else "")
            + " so the wheels' own copies load."
            if drop
            else " Find what loads it (an extension linked against that toolkit) and rebuild "
            "or remove it."
        )
        verb = "has loaded" if first.mapped else "loads"
        # only the unversioned name: the code that opens it may not be installed here
        severity = "warning" if all(x.plain for x in found) else "critical"
        title = (
            f"torch {py.torch_version} {verb} {first.lib.stem} {first.lib.version or ''} "
            f"from {posixpath.dirname(first.lib.path)}, not its own"
        ).replace("  ", " ")
        yield _finding(ID, severity, title, ". ".join(chains) + "." + advice, evidence, s)


def rule_cudnn_runtime(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        files = ld_path_files(facts, s.context) if s.context else ()
        yield from cudnn_runtime.rule_cudnn_runtime(ID, facts, (s,), files)
        yield from cudnn_sublibs.rule_cudnn_sublibs(ID, facts, (s,), files)


FINDING = FindingRecord(
    id=ID,
    title="A CUDA library torch loads comes from another CUDA",
    severities=("critical", "warning"),
    reads=(
        "pythons.torch_version",
        "pythons.torch_cuda",
        "pythons.cuda_libs",
        "pythons.torch_rpath",
        "pythons.torch_needs",
        "pythons.torch_lib_files",
        "pythons.torch_requires",
        "contexts.vars",
        "contexts.ld_libs",
        "contexts.mapped_libs",
        "ld_cache.path",
        "pythons.packages",
        "pythons.lib_owners",
    ),
    rules=(rule_library_shadowed, rule_cudnn_runtime),
    fixes=("drop-shadowing-library-path",),
    cause="a CUDA library from another CUDA",
    consequence="torch loads the wrong one",
    implicates=("torch",),
    fires_when=(
        "a CUDA library torch loads (a running server's `/proc/PID/maps`, else resolved as the loader "
        "would: `LD_LIBRARY_PATH` for what torch does not pin itself, per release; ld.so.cache) is of "
        "another CUDA major, an nvJitLink/cuBLASLt older than the wheels need, or an NVRTC older than "
        "the GPU needs; or a cuDNN 9 sub-library it opens by name comes from another cuDNN release"
    ),
    example=(
        "torch 2.5.1 + `LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64` → `undefined symbol: "
        "__nvJitLinkComplete_12_4`"
    ),
    doc=__doc__ or "",
    examples=("infiniflow/ragflow#4466", "pytorch/pytorch#140797", "pytorch/pytorch#187824"),
)
