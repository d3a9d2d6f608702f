"""What-if: simulate a fix on a copy of the facts, re-run the rules, see what it resolves.

``apply_fix`` returns the facts as the fix would leave the host — including the serving
process's environment after its restart, since that is where FlashInfer reads ``CUDA_HOME``.
``plan_fixes`` proposes, for each finding, the fixes of CONTRACT.md with concrete parameters,
keeps those whose simulation really makes the finding go away (``resolves`` is computed, never
written by hand) and orders them least invasive first.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from packaging.version import InvalidVersion, Version

from tui.core import extensions, headers_whatif, libs_whatif, ptxas_targets, triton_whatif
from tui.core.facts import EnvContext, Facts, PythonEnv, Toolkit
from tui.core.findings import Finding, FixSuggestion
from tui.core.findings.registry import FINDINGS
from tui.core.rules import evaluate
from tui.core.rules_compat import is_compat_dir, without_compat
from tui.core.rules_extensions import extension_params
from tui.core.rules_torch_cpu import variant_for
from tui.core.subject import subjects, toolkit_identity

SERVING_KINDS = ("process", "unit")
SHELL_KINDS = ("current", "login", "ssh")
PIP_TOOLKIT_VERSION = "13.0.2"  # NVIDIA's cuda-toolkit wheels that match torch's cu130 builds
PIP_TOOLKIT_HOME = "nvidia/cu13"  # under site-packages
APT_TOOLKIT_HOME = "/usr/local/cuda-13.0"
APT_TOOLKIT_VERSION = "13.0"
SAMPLER_OFF_ENV = {"VLLM_USE_FLASHINFER_SAMPLER": "0"}
SGLANG_SAMPLER_FLAG = "--sampling-backend pytorch"

# least invasive first: an env change to use what is installed, an env pin, a serving flag,
# a no-root download into the venv, a root install; clearing the cache is a follow-up
FIX_ORDER = (
    "use-installed-toolkit",
    "use-toolkit-ptxas-for-triton",
    "drop-shadowing-library-path",
    "align-cuda-wheels",
    "set-flashinfer-arch-list",
    "sampling-backend-fallback",
    "install-cuda-toolkit-pip",
    "install-cuda-toolkit-apt",
    "match-extension-to-torch",
    "install-cuda-torch",
    "drop-cuda-compat-path",
    "clear-flashinfer-jit-cache",
)
# which fixes can help with which finding (the what-if decides whether they really do), and
# the follow-ups added after one that does: each finding record's ``fixes``/``follow_ups``
CANDIDATES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {f.id: f.fixes for f in FINDINGS if f.fixes}
)
FOLLOW_UPS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {f.id: f.follow_ups for f in FINDINGS if f.follow_ups}
)
NEEDS_ROOT = {"install-cuda-toolkit-apt": True}

PlanCommands = Callable[
    [Facts, str, Mapping[str, str], "str | None"], "tuple[bool, tuple[str, ...]] | None"
]


# -- simulating a fix ------------------------------------------------------------------------


def _python(facts: Facts, python: str | None) -> PythonEnv | None:
    if python is not None:
        return next((p for p in facts.pythons if p.path == python), None)
    with_fi = [p for p in facts.pythons if p.exists and p.flashinfer_version]
    existing = [p for p in facts.pythons if p.exists]
    return (with_fi or existing or [None])[0]


def _serves(facts: Facts, ctx: EnvContext, py: PythonEnv | None) -> bool:
    if ctx.kind not in SERVING_KINDS:
        return False
    if py is None:
        return True
    own = {p.context for p in facts.pythons if p.path == py.path}
    if ctx.label in own or ctx.exe == py.path:
        return True
    if py.prefix and (ctx.argv0 or "").startswith(py.prefix.rstrip("/") + "/"):
        return True
    units = {c.unit for c in facts.contexts if c.label in own and c.unit}
    return ctx.unit is not None and ctx.unit in units


def _touched(facts: Facts, py: PythonEnv | None) -> set[str]:
    """Labels of the environments a fix for ``py`` changes: its servers and the shells."""
    return {c.label for c in facts.contexts if c.kind in SHELL_KINDS or _serves(facts, c, py)}


def _with_env(facts: Facts, labels: set[str], change: Callable[[EnvContext], EnvContext]) -> Facts:
    contexts = tuple(change(c) if c.label in labels else c for c in facts.contexts)
    return dataclasses.replace(facts, contexts=contexts)


def _point_at(facts: Facts, labels: set[str], home: str) -> Facts:
    nvcc = posixpath.join(home, "bin/nvcc")

    def change(ctx: EnvContext) -> EnvContext:
        path = ctx.vars.get("PATH")
        env = dict(ctx.vars, CUDA_HOME=home, PATH=f"{home}/bin" + (f":{path}" if path else ""))
        which = (nvcc, *(w for w in ctx.which_nvcc if w != nvcc))
        return dataclasses.replace(ctx, vars=env, which_nvcc=which)

    return _with_env(facts, labels, change)


def _add_toolkit(facts: Facts, home: str, version: str, full: str, source: str) -> Facts:
    if facts.toolkit_at(home) is not None:
        return facts
    tk = Toolkit(
        home=home,
        nvcc=posixpath.join(home, "bin/nvcc"),
        version=version,
        full_version=full,
        version_source="nvcc",
        sources=(source,),
    )
    return dataclasses.replace(facts, toolkits=(*facts.toolkits, tk))


def _mm(version: str) -> str:
    v = Version(version)
    return f"{v.major}.{v.minor}"


def apply_fix(
    facts: Facts, fix_id: str, params: Mapping[str, str], python: str | None = None
) -> Facts:
    """The facts as ``fix_id`` with ``params`` would leave the host (servers restarted)."""
    py = _python(facts, python)
    labels = _touched(facts, py)
    if fix_id == "use-installed-toolkit":
        return _point_at(facts, labels, params["path"])
    if fix_id == "install-cuda-toolkit-pip":
        if py is None or not py.site_packages:
            return facts
        version = params.get("version", PIP_TOOLKIT_VERSION)
        home = posixpath.join(py.site_packages[0].rstrip("/"), PIP_TOOLKIT_HOME)
        added = _add_toolkit(facts, home, _mm(version), version, f"pip:{py.path}")
        return _point_at(added, labels, home)
    if fix_id == "install-cuda-toolkit-apt":
        added = _add_toolkit(
            facts, APT_TOOLKIT_HOME, APT_TOOLKIT_VERSION, APT_TOOLKIT_VERSION, "apt"
        )
        return _point_at(added, labels, APT_TOOLKIT_HOME)
    if fix_id == "set-flashinfer-arch-list":
        value = params["value"]
        return _with_env(
            facts,
            labels,
            lambda c: dataclasses.replace(c, vars=dict(c.vars, FLASHINFER_CUDA_ARCH_LIST=value)),
        )
    if fix_id == "sampling-backend-fallback":

        def fallback(ctx: EnvContext) -> EnvContext:
            cmdline = ctx.cmdline
            if cmdline and "sglang" in cmdline and SGLANG_SAMPLER_FLAG not in cmdline:
                cmdline = f"{cmdline} {SGLANG_SAMPLER_FLAG}"
            return dataclasses.replace(ctx, vars={**ctx.vars, **SAMPLER_OFF_ENV}, cmdline=cmdline)

        return _with_env(facts, labels, fallback)
    if fix_id == "match-extension-to-torch":
        packages = params["package"].split(",")
        pythons = tuple(
            extensions.matched(p, packages, params.get("torch"))
            if py is not None and p.path == py.path
            else p
            for p in facts.pythons
        )
        return dataclasses.replace(facts, pythons=pythons)
    if fix_id == "drop-cuda-compat-path":
        dropped = _with_env(
            facts,
            labels,
            lambda c: dataclasses.replace(
                c,
                vars=dict(c.vars, LD_LIBRARY_PATH=without_compat(c.vars["LD_LIBRARY_PATH"]))
                if "LD_LIBRARY_PATH" in c.vars
                else c.vars,
            ),
        )
        conf = tuple(fd for fd in facts.loader.ld_conf if not is_compat_dir(fd[1]))
        return dataclasses.replace(dropped, loader=dataclasses.replace(facts.loader, ld_conf=conf))
    if fix_id == "install-cuda-torch":
        cuda = params["cuda"]
        pythons = tuple(
            dataclasses.replace(
                p,
                torch_version=f"{(p.torch_version or '').split('+')[0]}+cu{cuda.replace('.', '')}",
                torch_cuda=cuda,
                torch_arch_list=None,
            )
            if py is not None and p.path == py.path
            else p
            for p in facts.pythons
        )
        return dataclasses.replace(facts, pythons=pythons)
    if fix_id == triton_whatif.FIX_ID:
        return _with_env(facts, labels, triton_whatif.env_change(facts, py, params["path"]))
    if fix_id == libs_whatif.FIX_ID:
        return _with_env(facts, labels, libs_whatif.env_change(params["entry"]))
    if fix_id == headers_whatif.FIX_ID:
        return headers_whatif.apply(facts, params, py.path if py else None)
    if fix_id == "clear-flashinfer-jit-cache":
        pythons = tuple(
            dataclasses.replace(p, jit_cache_dirs=()) if py is None or p.path == py.path else p
            for p in facts.pythons
        )
        return dataclasses.replace(facts, pythons=pythons)
    raise ValueError(f"unknown fix {fix_id!r}")


# -- proposing fixes -------------------------------------------------------------------------


def _problems(findings: Sequence[Finding]) -> set[tuple[str, str | None]]:
    return {(f.id, f.python) for f in findings if f.severity in ("critical", "warning")}


def _criticals(findings: Sequence[Finding]) -> set[tuple[str, str | None]]:
    return {(f.id, f.python) for f in findings if f.severity == "critical"}


class _Planner:
    def __init__(self, facts: Facts, findings: Sequence[Finding], commands: PlanCommands | None):
        self.facts = facts
        self.before = _problems(findings)
        self.before_critical = _criticals(findings)
        self.commands = commands
        self._after: dict[tuple, tuple[Finding, ...]] = {}

    def after(
        self, fix_id: str, params: Mapping[str, str], python: str | None
    ) -> tuple[Finding, ...]:
        key = (fix_id, tuple(sorted(params.items())), python)
        if key not in self._after:
            fixed = apply_fix(self.facts, fix_id, params, python)
            self._after[key] = evaluate(fixed)[0]
        return self._after[key]

    def resolves(
        self, fix_id: str, params: Mapping[str, str], python: str | None
    ) -> tuple[str, ...] | None:
        """Finding ids the fix makes go away; ``None`` when it brings a new critical one."""
        after = self.after(fix_id, params, python)
        if _criticals(after) - self.before_critical:
            return None
        remaining = _problems(after)
        gone = [fid for fid, py in sorted(self.before) if (fid, py) not in remaining]
        return tuple(dict.fromkeys(gone))

    # parameters ---------------------------------------------------------------------------

    def toolkit_choices(self, python: str | None) -> list[dict[str, str]]:
        current = {
            toolkit_identity(s.jit_toolkit)
            for s in subjects(self.facts)
            if s.jit_toolkit is not None
            and (python is None or (s.python and s.python.path == python))
        }
        best: dict[str, Toolkit] = {}
        for tk in self.facts.toolkits:
            if not (tk.exists and tk.executable and tk.version) or tk.wrapper_of:
                continue
            ident = toolkit_identity(tk)
            if ident in current:
                continue
            if ident not in best or (best[ident].realpath and not tk.realpath):
                best[ident] = tk  # prefer the real directory to a symlink naming it
        return [{"path": tk.home} for tk in best.values()]

    def arch_list_value(self, python: str | None) -> dict[str, str] | None:
        subject = next(
            (s for s in subjects(self.facts) if s.python and s.python.path == python), None
        )
        if subject is None or subject.replay is None or not subject.devices:
            return None
        version = subject.jit_version
        items: list[str] = []
        for major, minor in dict.fromkeys(subject.devices):
            choices = (
                [f"{major}.{minor}a", f"{major}.{minor}"] if major >= 9 else [f"{major}.{minor}"]
            )
            usable = [
                c
                for c in choices
                if version is not None and ptxas_targets.accepts(version, c.replace(".", ""))
            ]
            if not usable:
                return None
            items.append(usable[0])
        return {"value": " ".join(items)}

    def engine(self, python: str | None) -> dict[str, str] | None:
        py = _python(self.facts, python)
        if py is None:
            return None
        for name in ("sglang", "vllm"):
            if name in py.packages:
                return {"engine": name}
        return None

    def params_for(self, fix_id: str, python: str | None) -> list[dict[str, str]]:
        py = _python(self.facts, python)
        if fix_id == "use-installed-toolkit":
            return self.toolkit_choices(python)
        if fix_id == "set-flashinfer-arch-list":
            value = self.arch_list_value(python)
            return [value] if value else []
        if fix_id == "sampling-backend-fallback":
            engine = self.engine(python)
            return [engine] if engine else []
        if fix_id == "install-cuda-toolkit-pip":
            torch_major = (py.torch_cuda or "").split(".")[0] if py else ""
            ok = py is not None and py.site_packages and torch_major == "13"
            return [{"version": PIP_TOOLKIT_VERSION}] if ok else []
        if fix_id == "install-cuda-toolkit-apt":
            return [{}]
        if fix_id == "clear-flashinfer-jit-cache":
            return [{}] if py is not None and py.jit_cache_dirs else []
        if fix_id == "match-extension-to-torch":
            return extension_params(py)
        if fix_id == "drop-cuda-compat-path":
            return [{}]
        if fix_id == "install-cuda-torch":
            subject = next((s for s in subjects(self.facts) if s.python is py), None)
            cuda = variant_for(self.facts, py, subject.devices) if py and subject else None
            return [{"cuda": cuda}] if cuda else []
        if fix_id == triton_whatif.FIX_ID:
            return triton_whatif.choices(self.facts, python)
        if fix_id == libs_whatif.FIX_ID:
            return libs_whatif.choices(self.facts, python)
        if fix_id == headers_whatif.FIX_ID:
            return headers_whatif.choices(self.facts, python)
        return []

    # the proposal ------------------------------------------------------------------------

    def suggestion(
        self, fix_id: str, params: Mapping[str, str], python: str | None, resolves: tuple[str, ...]
    ) -> FixSuggestion | None:
        needs_root, commands = NEEDS_ROOT.get(fix_id, False), ()
        if self.commands is not None:
            planned = self.commands(self.facts, fix_id, params, python)
            if planned is None:
                return None  # the fix engine cannot do it on this host
            needs_root, commands = planned
        return FixSuggestion(
            id=fix_id,
            title=_title(self.facts, fix_id, params, python),
            params=params,
            resolves=resolves,
            needs_root=needs_root,
            commands=commands,
        )

    def fixes_for(self, finding: Finding) -> tuple[FixSuggestion, ...]:
        if finding.severity == "info":
            return ()
        python = finding.python
        out: list[FixSuggestion] = []
        for fix_id in CANDIDATES.get(finding.id, ()):
            ranked: list[tuple[tuple, dict[str, str], tuple[str, ...]]] = []
            for params in self.params_for(fix_id, python):
                resolves = self.resolves(fix_id, params, python)
                if resolves is None or finding.id not in resolves:
                    continue
                left = self.after(fix_id, params, python)
                score = (
                    len(_criticals(left)),
                    len(_problems(left)),
                    -len(resolves),
                    -_version_key(self.facts, params.get("path")),
                )
                ranked.append((score, params, resolves))
            if ranked:
                _score, params, resolves = min(ranked, key=lambda r: r[0])
                made = self.suggestion(fix_id, params, python, resolves)
                if made is not None:
                    out.append(made)
        for follow_up in FOLLOW_UPS.get(finding.id, ()) if out else ():
            for params in self.params_for(follow_up, python):
                made = self.suggestion(follow_up, params, python, ())
                if made is not None:
                    out.append(made)
        out.sort(key=lambda f: FIX_ORDER.index(f.id))
        return tuple(out)


def _version_key(facts: Facts, home: str | None) -> float:
    tk = facts.toolkit_at(home) if home else None
    try:
        v = Version(tk.version) if tk and tk.version else None
    except InvalidVersion:
        v = None
    return v.major * 1000 + v.minor if v else 0


def _title(facts: Facts, fix_id: str, params: Mapping[str, str], python: str | None) -> str:
    if fix_id == "use-installed-toolkit":
        tk = facts.toolkit_at(params["path"])
        version = f"CUDA {tk.version}, " if tk and tk.version else ""
        return f"Point CUDA_HOME and PATH at {params['path']} ({version}already installed)"
    if fix_id == "set-flashinfer-arch-list":
        return f"Set FLASHINFER_CUDA_ARCH_LIST={params['value']!r} (what this nvcc can build)"
    if fix_id == "sampling-backend-fallback":
        return (
            "Sample without FlashInfer (--sampling-backend pytorch / VLLM_USE_FLASHINFER_SAMPLER=0)"
        )
    if fix_id == "install-cuda-toolkit-pip":
        version = params.get("version", PIP_TOOLKIT_VERSION)
        return f"Install NVIDIA's CUDA {version} toolkit wheels into the venv, use them"
    if fix_id == "install-cuda-toolkit-apt":
        return f"Install cuda-toolkit-13-0 from NVIDIA's apt repository into {APT_TOOLKIT_HOME}"
    if fix_id == "drop-cuda-compat-path":
        return "Stop loading the CUDA forward-compatibility libcuda (LD_LIBRARY_PATH, ld.so.conf.d)"
    if fix_id == "install-cuda-torch":
        return f"Install the CUDA {params['cuda']} build of the same torch release"
    if fix_id == "match-extension-to-torch":
        if params.get("torch"):
            return f"Install torch {params['torch']}, the torch {params['package']} was built for"
        return f"Install the {params['package']} build(s) made for the installed torch"
    if fix_id == triton_whatif.FIX_ID:
        return triton_whatif.title(facts, params, python)
    if fix_id == libs_whatif.FIX_ID:
        return libs_whatif.title(params)
    if fix_id == headers_whatif.FIX_ID:
        return headers_whatif.title(params)
    return "Move FlashInfer's JIT cache aside so modules are rebuilt with the new toolkit"


def plan_fixes(
    facts: Facts, findings: Sequence[Finding], commands: PlanCommands | None = None
) -> tuple[Finding, ...]:
    """``findings`` with their fixes filled in (see the module docstring)."""
    planner = _Planner(facts, findings, commands)
    return tuple(dataclasses.replace(f, fixes=planner.fixes_for(f)) for f in findings)
