"""The cuDNN torch's own libraries load, against the one torch was built with.

torch 1.x links cuDNN into ``libtorch_global_deps.so`` (``DT_NEEDED libcudnn.so.8`` in the
PyPI wheel torch-1.13.1+cu117; 1.12.1+cu102 and 2.x need no ``libcudnn`` there). The loader
looks for it as that file's search path says: a ``DT_RPATH`` (1.13.1:
``$ORIGIN/../../nvidia/cublas/lib:$ORIGIN/../../nvidia/cudnn/lib:…:$ORIGIN``) is searched
*before* ``LD_LIBRARY_PATH``, a ``DT_RUNPATH`` (the 1.x "fat" wheels: ``$ORIGIN``, their CUDA
libraries bundled in ``torch/lib``, as 1.12.1+cu102's ``libcublas.so.10``) *after* it; then
ld.so.cache. A running server's ``/proc/PID/maps`` says what it really loaded.

The build's cuDNN is the one the wheel pins (``Requires-Dist: nvidia-cudnn-cu11 (==8.5.0.96)``
in 1.13.1's METADATA). torch's own check (``_init`` in ``torch/backends/cudnn/__init__.py`` of
the same wheel) accepts a runtime cuDNN of the same major and a minor at least the build's; any
other raises ``RuntimeError: cuDNN version incompatibility: PyTorch was compiled against … but
found runtime version …`` at the first cuDNN use (a convolution, ``cudnn.version()``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement

from tui.core.facts import EnvContext, Facts, PythonEnv
from tui.core.findings import Finding
from tui.core.rules.rulekit import finding
from tui.core.rules.subject import Subject

SOURCE = "torch/backends/cudnn/__init__.py of the PyPI wheel torch-1.13.1"
_CUDNN_DIST = re.compile(r"nvidia-cudnn-cu\d+")
_CUDNN_FILE = re.compile(r"^libcudnn\.so\.(\d+)((?:\.\d+)*)$")


@dataclass(frozen=True)
class CudnnLoad:
    """The libcudnn torch's libraries get, and why."""

    dist: str  # the wheel torch pins it with ("nvidia-cudnn-cu11")
    built: str  # the cuDNN torch was built with ("8.5.0.96": that pin)
    soname: str  # "libcudnn.so.8"
    path: str  # the file the loader takes (or the process mapped)
    version: str | None  # that file's cuDNN version
    how: str  # where it comes from, in words
    entry: str | None  # the LD_LIBRARY_PATH directory it comes through


def built_cudnn(py: PythonEnv) -> tuple[str, str] | None:
    """(dist, version): the cuDNN torch's wheel pins (its Requires-Dist on nvidia-cudnn-cu*)."""
    for line in py.torch_requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        pins = [s.version for s in req.specifier if s.operator == "=="]
        if _CUDNN_DIST.fullmatch(req.name.lower()) and len(pins) == 1:
            return req.name.lower(), pins[0]
    return None


def compatible(built: str, runtime: str) -> bool:
    """torch's own test: the same major, and a runtime minor at least the build's."""
    b, r = (tuple(int(x) for x in v.split(".")[:2]) for v in (built, runtime))
    return r[0] == b[0] and (len(r) < 2 or len(b) < 2 or r[1] >= b[1])


def _file_version(path: str, target: str | None = None) -> str | None:
    for name in (target, path):
        m = _CUDNN_FILE.match(posixpath.basename(name or ""))
        if m and m.group(2):
            return f"{m.group(1)}{m.group(2)}"
    return None


def _wheel_version(py: PythonEnv, path: str) -> tuple[str | None, str]:
    owners = {d for p, d in py.lib_owners if posixpath.normpath(p) == posixpath.normpath(path)}
    named = owners or {d for d in py.packages if _CUDNN_DIST.fullmatch(d)}
    if len(named) == 1 and next(iter(named)) in py.packages:
        dist = next(iter(named))
        return py.packages[dist], f"{dist} {py.packages[dist]}"
    return None, "its wheel unknown"


def _dirs(value: str, origin: str) -> list[str]:
    return [
        posixpath.normpath(d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin))
        for d in value.split(":")
        if d
    ]


def cudnn_load(facts: Facts, py: PythonEnv, ctx: EnvContext) -> CudnnLoad | None:
    """What ``libcudnn.so.<major>`` torch's ``libtorch_global_deps.so`` loads, as the loader
    resolves it (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, ld.so.cache), or as mapped."""
    pin = built_cudnn(py)
    soname = next((n for n in py.torch_needs if n.startswith("libcudnn.so.")), None)
    if pin is None or soname is None or py.torch_lib is None:
        return None
    dist, built = pin
    for path in ctx.mapped_libs:  # loaded beats installed
        if not posixpath.basename(path).startswith(soname):
            continue
        if path.startswith(posixpath.normpath(py.torch_lib) + "/"):
            return None  # bundled with torch: its own build's
        wheel = _wheel_version(py, path) if "/nvidia/cudnn/" in path else None
        version = wheel[0] if wheel else _file_version(path)
        return CudnnLoad(dist, built, soname, path, version, f"{ctx.label} has it mapped", None)
    kind, value = py.torch_rpath or ("runpath", "")
    own = _dirs(value, posixpath.normpath(py.torch_lib))
    ours = {posixpath.normpath(p) for p in (*py.cuda_libs, *py.torch_lib_files)}
    ld = [d for d in (ctx.vars.get("LD_LIBRARY_PATH") or "").split(":") if d.startswith("/")]
    order = [(d, None) for d in own] if kind == "rpath" else []
    order += [(d, d) for d in ld]
    order += [(d, None) for d in own] if kind == "runpath" else []
    files = {posixpath.normpath(f.path): f for f in ctx.ld_libs}
    for d, entry in order:
        path = posixpath.join(posixpath.normpath(d), soname)
        if path in ours:
            if posixpath.dirname(path) == posixpath.normpath(py.torch_lib):
                return None  # bundled with torch: its own build's
            version, how = _wheel_version(py, path)
            where = f"the torch libraries' {kind.upper()} folder {d}, {how}"
            return CudnnLoad(dist, built, soname, path, version, where, None)
        f = files.get(path) if entry else None
        if f is not None:
            how = f"LD_LIBRARY_PATH entry {entry}"
            version = _file_version(f.path, f.target)
            return CudnnLoad(dist, built, soname, f.path, version, how, entry)
    cached = next((c for c in facts.ld_cache if posixpath.basename(c.path) == soname), None)
    if cached is not None:
        version = _file_version(cached.path, cached.target)
        return CudnnLoad(dist, built, soname, cached.path, version, "ld.so.cache", None)
    return None


def _search_words(py: PythonEnv) -> str:
    kind, value = py.torch_rpath or ("runpath", "")
    if kind == "rpath":
        return f"its DT_RPATH {value} (searched before LD_LIBRARY_PATH)"
    return f"LD_LIBRARY_PATH, then its DT_RUNPATH {value or '(none)'}"


def mismatch(facts: Facts, s: Subject) -> CudnnLoad | None:
    """The cuDNN torch gets when torch's own check would reject it."""
    py, ctx = s.python, s.context
    if py is None or ctx is None or not py.torch_cuda:
        return None
    got = cudnn_load(facts, py, ctx)
    if got is None or got.version is None or compatible(got.built, got.version):
        return None
    return got


def rule_cudnn_runtime(
    finding_id: str, facts: Facts, subs: Sequence[Subject], files: Sequence[str]
) -> Iterable[Finding]:
    """``cuda-library-shadowed`` for cuDNN: the runtime cuDNN torch's check rejects."""
    for s in subs:
        got = mismatch(facts, s)
        if got is None:
            continue
        py, ctx = s.python, s.context
        assert py is not None and ctx is not None and got.version is not None
        b = tuple(int(x) for x in got.built.split(".")[:3])
        r = tuple(int(x) for x in got.version.split(".")[:3])
        chain = (
            f"torch {py.torch_version} was built with cuDNN {got.built} (its wheel pins "
            f"{got.dist}=={got.built}); {py.torch_lib}/libtorch_global_deps.so needs "
            f"{got.soname}, looked for through {_search_words(py)}, and the loader takes "
            f"{got.path} (cuDNN {got.version}, from {got.how}) → torch accepts a runtime cuDNN "
            f"only of the same major and at least its minor ({SOURCE}): the first cuDNN use "
            f"raises 'RuntimeError: cuDNN version incompatibility: PyTorch was compiled against "
            f"{b} but found runtime version {r}'."
        )
        rpath = (
            " (torch's DT_RPATH finds it before LD_LIBRARY_PATH)"
            if (py.torch_rpath or ("",))[0] == "rpath"
            else ""
        )
        advice = (
            f" Remove {got.entry} from LD_LIBRARY_PATH"
            + (f" where it is set ({', '.join(files)})" if files else "")
            + f", or install {got.dist}=={got.built} into the venv{rpath}."
            if got.entry
            else f" Install {got.dist}=={got.built} into the venv{rpath}."
        )
        evidence = [
            f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})",
            f"torch Requires-Dist: {got.dist}=={got.built}",
            f"{got.path}: cuDNN {got.version}",
        ]
        if ctx.vars.get("LD_LIBRARY_PATH"):
            evidence.append(f"LD_LIBRARY_PATH={ctx.vars['LD_LIBRARY_PATH']}")
        title = f"torch {py.torch_version} loads cuDNN {got.version}, built with {got.built}"
        yield finding(finding_id, "critical", title, chain + advice, evidence, s)
