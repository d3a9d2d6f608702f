"""Replay FlashInfer's own JIT decisions from collected facts, without importing FlashInfer.

For one interpreter and the environment it runs under, this predicts what the installed
FlashInfer version would do at import and on its first JIT call: ``get_cuda_path()``,
``get_cuda_version()``, ``TARGET_CUDA_ARCHS``, ``check_cuda_arch()``, the ``-gencode`` flags,
the JIT workspace, and whether the nvcc it would invoke can build those targets. The rules are
``shared/knowledge/flashinfer-logic.md`` §2–§7, §14; the per-release differences live in
``tui.core.tables.flashinfer_eras`` and the compiler tables in ``tui.core.tables.ptxas_targets``.

The simulation raises and catches real Python exceptions at the same points FlashInfer does,
so messages (``str(e)``, ``repr(e)``) come out exactly as FlashInfer would print them.

Verified against the real code (``tests/test_oracle_flashinfer.py``) for 0.5.3 – 0.7.2.post1.
Older eras follow the spec only; for ≤ 0.3.0, whose targets come from torch's
``_get_cuda_arch_flags()``, the replay approximates them with ``TORCH_CUDA_ARCH_LIST`` or the
device capabilities (not clamped to torch's newest arch).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from packaging.version import Version

from tui.core.facts import EnvContext, Facts, PythonEnv, Toolkit
from tui.core.findings import FlashInferReplay
from tui.core.tables import ptxas_targets
from tui.core.tables.flashinfer_eras import Era, era_for
from tui.core.tables.flashinfer_pre02 import prebuilt_for

NvccState = Literal["ok", "missing", "not-executable", "failed", "unparsable"]


@dataclass(frozen=True)
class Nvcc:
    """What running ``<path> --version`` does on the host."""

    state: NvccState
    version: str | None = None  # "12.8" when state == "ok"


@dataclass(frozen=True)
class ReplayInput:
    """Everything the replay reads: one FlashInfer process, as the facts describe it."""

    version: str  # FlashInfer version
    env: Mapping[str, str] = field(default_factory=dict)
    which_nvcc: str | None = None  # what `which nvcc` prints under this PATH
    usr_local_cuda_exists: bool = False
    devices: tuple[tuple[int, int], ...] = ()  # capabilities in CUDA order, as torch sees them
    torch_installed: bool = True
    torch_cuda: str | None = None  # torch.version.cuda
    nvccs: Mapping[str, Nvcc] = field(default_factory=dict)  # nvcc path -> behaviour
    python_version: str | None = None  # the interpreter's, for exception texts
    python: str = ""
    context: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "nvccs", MappingProxyType(dict(self.nvccs)))

    def nvcc(self, path: str) -> Nvcc:
        return self.nvccs.get(posixpath.normpath(path), Nvcc("missing"))


class _ImportFailed(Exception):
    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _mm(version: str) -> str:
    v = Version(version)
    return f"{v.major}.{v.minor}"


# -- facts → input -------------------------------------------------------------------------


def _nvcc_of(tk: Toolkit) -> Nvcc:
    if not tk.exists:
        return Nvcc("missing")
    if not tk.executable:
        return Nvcc("not-executable")
    if tk.version and tk.error is None:
        return Nvcc("ok", _mm(tk.version))
    if tk.error is not None:
        return Nvcc("failed")
    return Nvcc("unparsable")


def visible_devices(facts: Facts, env: Mapping[str, str]) -> tuple[tuple[int, int], ...]:
    """Compute capabilities torch enumerates, after ``CUDA_VISIBLE_DEVICES``.

    CUDA stops at the first entry it cannot match; entries are indices or UUID prefixes. The
    nvidia-smi order stands in for CUDA's enumeration order.
    """
    gpus = list(facts.gpus)
    spec = env.get("CUDA_VISIBLE_DEVICES")
    if spec is not None:
        chosen = []
        for raw in spec.split(","):
            item = raw.strip()
            match = None
            if item.isdigit():
                match = next((g for g in gpus if g.index == int(item)), None)
            elif item.startswith(("GPU-", "MIG-")):
                match = next((g for g in gpus if g.uuid and g.uuid.startswith(item)), None)
                parent = next((m.gpu for m in facts.mig_devices if m.uuid.startswith(item)), None)
                if match is None and parent is not None:  # a MIG device runs its GPU's code
                    match = next((g for g in gpus if g.index == parent), None)
            if match is None or match in chosen:
                break
            chosen.append(match)
        gpus = chosen
    caps = []
    for g in gpus:
        major, _, minor = (g.compute_cap or "").partition(".")
        if major.isdigit() and minor.isdigit():
            caps.append((int(major), int(minor)))
    return tuple(caps)


def replay_input(facts: Facts, python: PythonEnv, context: EnvContext | None) -> ReplayInput:
    env = dict(context.vars) if context else {}
    nvccs: dict[str, Nvcc] = {}
    for tk in facts.toolkits:
        nvccs[posixpath.normpath(tk.nvcc)] = _nvcc_of(tk)
        nvccs.setdefault(posixpath.normpath(posixpath.join(tk.home, "bin/nvcc")), _nvcc_of(tk))
    devices: tuple[tuple[int, int], ...] = ()
    if facts.driver.state == "ok" and python.torch_cuda is not None:
        devices = visible_devices(facts, env)
    which = context.which_nvcc[0] if context and context.which_nvcc else None
    usr_local = context.usr_local_cuda_exists if context else facts.usr_local_cuda is not None
    return ReplayInput(
        version=python.flashinfer_version or "",
        env=env,
        which_nvcc=which,
        usr_local_cuda_exists=usr_local,
        devices=devices,
        # missing only when the probe read the package list and torch is not in it
        torch_installed=python.torch_version is not None
        or not python.packages
        or "torch" in python.packages,
        torch_cuda=python.torch_cuda,
        nvccs=nvccs,
        python_version=python.version,
        python=python.path,
        context=context.label if context else None,
    )


def replay(facts: Facts, python: PythonEnv, context: EnvContext | None) -> FlashInferReplay:
    """FlashInfer's decisions for ``python``'s FlashInfer under ``context``'s environment."""
    return run(replay_input(facts, python, context))


def find_cuda_home(
    env: Mapping[str, str], which_nvcc: str | None, usr_local_cuda_exists: bool
) -> tuple[str | None, str]:
    """torch.utils.cpp_extension's ``_find_cuda_home()``: (home or None, how it was found)."""
    cuda_home_var = env.get("CUDA_HOME")
    home = cuda_home_var or env.get("CUDA_PATH")
    if home is not None:
        return home, f"{'CUDA_HOME' if cuda_home_var else 'CUDA_PATH'}={home}"
    if which_nvcc:
        return posixpath.dirname(posixpath.dirname(which_nvcc)), f"`which nvcc` = {which_nvcc}"
    if usr_local_cuda_exists:
        return "/usr/local/cuda", "the default /usr/local/cuda"
    return None, "nothing (no CUDA_HOME, CUDA_PATH or nvcc on PATH)"


# -- the simulation --------------------------------------------------------------------------


class _Process:
    """One fresh Python process importing FlashInfer (its caches are per process)."""

    def __init__(self, inp: ReplayInput, era: Era) -> None:
        self.inp = inp
        self.era = era
        self.env = inp.env
        self._version: tuple[str, str] | None = None
        self.origin = "nothing (no CUDA_HOME, CUDA_PATH or nvcc on PATH)"
        self.drop_error: str | None = None
        self.dropped: tuple[tuple[int, int], ...] = ()

    # torch.utils.cpp_extension._find_cuda_home()
    def torch_cuda_home(self) -> str | None:
        if self.inp.torch_cuda is None:  # CPU builds of torch set CUDA_HOME = None
            return None
        return find_cuda_home(self.env, self.inp.which_nvcc, self.inp.usr_local_cuda_exists)[0]

    # flashinfer.jit.cpp_ext.get_cuda_path()
    def cuda_path(self) -> str:
        mode = self.era.path_mode
        if mode == "torch":
            self.origin = "torch's CUDA_HOME"
            return self.torch_cuda_home() or "/usr/local/cuda"
        if mode == "torch-then-which":
            home = self.torch_cuda_home()
            if home is not None:
                self.origin = "torch's CUDA_HOME"
                return home
            if self.inp.which_nvcc:
                self.origin = f"`which nvcc` = {self.inp.which_nvcc}"
                return self.inp.which_nvcc  # 0.3.1 returns the nvcc file, not its home
            raise RuntimeError("Could not find nvcc")
        cuda_home_var = self.env.get("CUDA_HOME")
        home = cuda_home_var or self.env.get("CUDA_PATH")
        if home is not None:
            name = "CUDA_HOME" if cuda_home_var else "CUDA_PATH"
            self.origin = f"{name}={home}"
            return home
        if self.inp.which_nvcc:
            self.origin = f"`which nvcc` = {self.inp.which_nvcc}"
            return posixpath.dirname(posixpath.dirname(self.inp.which_nvcc))
        if mode == "env-which":
            raise RuntimeError("Could not find nvcc")
        cuda_home = "/usr/local/cuda"
        if self.inp.usr_local_cuda_exists:
            self.origin = "its default /usr/local/cuda (no CUDA_HOME, CUDA_PATH or nvcc on PATH)"
            return cuda_home
        raise RuntimeError(f"Could not find nvcc and default {cuda_home=} doesn't exist")

    def _run_nvcc(self, path: str) -> str:
        nvcc = self.inp.nvcc(path)
        if nvcc.state == "missing":
            raise FileNotFoundError(2, "No such file or directory", path)
        if nvcc.state == "not-executable":
            raise PermissionError(13, "Permission denied", path)
        if nvcc.state == "failed":
            raise _CalledProcessError(f"Command '['{path}', '--version']' returned non-zero exit")
        if nvcc.state == "unparsable":
            raise RuntimeError("Could not parse CUDA version from nvcc --version output")
        assert nvcc.version is not None
        return nvcc.version

    # flashinfer.jit.cpp_ext.get_cuda_version(): (version, source); cached once it succeeds
    def cuda_version(self) -> tuple[str, str]:
        if self._version is not None:
            return self._version
        if self.era.version_mode == "none":
            raise RuntimeError("this FlashInfer version does not query the CUDA version")
        if self.era.version_mode == "nvcc-only":  # torch's CUDA_HOME, else nvcc from PATH
            home = self.torch_cuda_home()
            path = posixpath.join(home, "bin/nvcc") if home is not None else self.inp.which_nvcc
            if path is None:
                raise FileNotFoundError(2, "No such file or directory", "nvcc")
            self._version = (self._run_nvcc(path), "nvcc")
            return self._version
        try:
            path = posixpath.join(self.cuda_path(), "bin/nvcc")
            self._version = (self._run_nvcc(path), "nvcc")
        except (RuntimeError, FileNotFoundError, _CalledProcessError) as e:
            if self.inp.torch_cuda is None:
                raise RuntimeError(
                    "nvcc not found and PyTorch is not built with CUDA support. "
                    "Could not determine CUDA version."
                ) from e
            self._version = (_mm(self.inp.torch_cuda), "torch")
        return self._version

    def _at_least(self, wanted: str) -> bool:
        return Version(self.cuda_version()[0]) >= Version(wanted)

    # compilation_context._normalize_cuda_arch (and the inline logic before 0.6.7)
    def normalise(self, major: int, minor: int) -> tuple[int, str | int]:
        if major == 9:
            return (9, f"{minor}a")
        if major == 12 and self.era.sm12 != "a":
            mode = self.era.sm12
            if mode == "0.7.1":
                if minor == 0:
                    if self._at_least("12.9"):
                        return (12, "0f")
                    if self._at_least("12.8"):
                        return (12, "0a")
                    raise RuntimeError("SM 120 requires CUDA >= 12.8")
                if self._at_least("12.9"):
                    return (12, f"{minor}a")
                raise RuntimeError("SM 12.1+ requires CUDA >= 12.9")
            if self._at_least("12.9"):
                if mode == "0.6.7" or minor == 0:
                    return (12, "0f")
                return (12, f"{minor}a")
            raise RuntimeError("SM 12.x requires CUDA >= 12.9")
        if major >= 10:
            return (major, f"{minor}a")
        if self.era.list_mode == "append-a":  # 0.3.1 keeps the minor an int below SM 9
            return (major, minor)
        return (major, str(minor))

    def arch_list_from_env(self, value: str) -> set[tuple[int, str | int]]:
        archs: set[tuple[int, str | int]] = set()
        for item in value.split(" "):
            major_s, minor = _unpack2(item.split("."), self.inp.python_version)
            major = int(major_s)
            mode = self.era.list_mode
            if mode == "normalise":
                if minor[-1].isalpha():
                    archs.add((major, minor))
                else:
                    archs.add(self.normalise(major, int(minor)))
            elif mode == "append-a" and major >= 9 and minor.isdigit():
                archs.add((major, minor + "a"))
            else:
                archs.add((major, minor))
        return archs

    def detect(self, warnings: list[str]) -> set[tuple[int, str | int]]:
        archs: set[tuple[int, str | int]] = set()
        for position, (major, minor) in enumerate(self.inp.devices):
            try:
                archs.add(self.normalise(major, minor))
            except Exception as e:  # one try around the loop: this GPU and all later ones go
                warnings.append(self.warning_text(e))
                self.drop_error = str(e)
                self.dropped = self.inp.devices[position:]
                break
        return archs

    def warning_text(self, e: BaseException) -> str:
        if self.era.warning_format == "repr":
            n = len(self.inp.devices)
            return (
                f"Failed to get device capability: {e!r}. "
                f"torch.cuda.is_available()={n > 0}, torch.cuda.device_count()={n}"
            )
        return f"Failed to get device capability: {e}."

    def torch_flags_archs(self) -> set[tuple[int, str | int]]:
        """≤0.3.0: torch's ``_get_cuda_arch_flags()`` — TORCH_CUDA_ARCH_LIST or device caps."""
        listed = self.env.get("TORCH_CUDA_ARCH_LIST")
        archs: set[tuple[int, str | int]] = set()
        if listed:
            for item in listed.replace(";", " ").split():
                major, _, minor = item.removesuffix("+PTX").partition(".")
                if major.isdigit() and minor:
                    archs.add((int(major), minor))
            return archs
        return {(major, str(minor)) for major, minor in self.inp.devices}


class _CalledProcessError(Exception):
    """Stands for ``subprocess.CalledProcessError`` (caught by get_cuda_version)."""


def _unpack2(parts: list[str], python_version: str | None) -> tuple[str, str]:
    if len(parts) == 2:
        return parts[0], parts[1]
    if len(parts) < 2:
        raise ValueError(f"not enough values to unpack (expected 2, got {len(parts)})")
    newer = python_version is not None and Version(python_version).release[:2] >= (3, 13)
    got = f", got {len(parts)}" if newer else ""
    raise ValueError(f"too many values to unpack (expected 2{got})")


def _sort_key(t: tuple[int, str | int]) -> tuple[int, str]:
    return (t[0], str(t[1]))


def _check(era: Era, archs: set[tuple[int, str | int]], detected: bool) -> str | None:
    """``check_cuda_arch()``: ``None`` when it passes, else the exception text it raises."""
    if era.check_all_ge75:
        ok = bool(archs) and all(_cc_num(t) >= 75 for t in archs)
        return None if ok else "RuntimeError: FlashInfer requires sm75+"
    sm7_only = not any(t[0] >= 8 for t in archs) and any(t[0] == 7 for t in archs)
    if era.sm7_attribute_error and detected and sm7_only:
        return "AttributeError: 'int' object has no attribute 'isdigit'"
    ok = any(
        t[0] >= 8 or (t[0] == 7 and str(t[1]).isdigit() and int(str(t[1])) >= 5) for t in archs
    )
    if ok:
        return None
    text = "FlashInfer requires GPUs with sm75 or higher"
    if era.check_format == "sm75-or-higher-detected":
        text += f". Detected TARGET_CUDA_ARCHS={sorted(archs, key=_sort_key)}."
    return f"RuntimeError: {text}"


def _cc_num(t: tuple[int, str | int]) -> int:
    digits = "".join(ch for ch in str(t[1]) if ch.isdigit())
    return t[0] * 10 + int(digits or 0)


def _workspace(inp: ReplayInput, era: Era, archs: set[tuple[int, str | int]]) -> str:
    base = inp.env.get("FLASHINFER_WORKSPACE_BASE") or inp.env.get("HOME") or "~"
    cache = posixpath.join(base, ".cache", "flashinfer")
    ordered = sorted(archs, key=_sort_key)
    if era.list_mode in ("torch", "append-a"):
        segment = "_".join(str(_cc_num(t)) for t in ordered) or "noarch"
    else:
        segment = "_".join(f"{t[0]}{t[1]}" for t in ordered)
    if era.workspace == "archs":
        return posixpath.join(cache, segment)
    return posixpath.join(cache, inp.version, segment).rstrip("/")


def _compiles(inp: ReplayInput, nvcc_path: str | None, archs: set) -> bool | None:
    if nvcc_path is None:
        return False
    nvcc = inp.nvcc(nvcc_path)
    if nvcc.state in ("missing", "not-executable"):
        return False if posixpath.isabs(nvcc_path) else None
    if nvcc.state != "ok" or nvcc.version is None:
        return None
    verdicts = [ptxas_targets.accepts(nvcc.version, f"{t[0]}{t[1]}") for t in archs]
    if False in verdicts:
        return False
    return None if None in verdicts else True


@dataclass(frozen=True)
class ReplayTrace:
    """The replay plus how it got there, for explanations."""

    replay: FlashInferReplay
    origin: str  # where the toolkit came from: "CUDA_HOME=/usr/local/cuda-12.8", …
    drop_error: str | None  # why arch detection stopped (the exception text)
    dropped: tuple[tuple[int, int], ...]  # the GPUs that got no target because of it
    era: Era | None
    path_error: str | None = None  # what get_cuda_path() raised (no toolkit found at all)


PREBUILT_ORIGIN = "prebuilt kernels (no JIT)"


def run(inp: ReplayInput) -> FlashInferReplay:
    """Replay one FlashInfer import + first JIT call for ``inp``."""
    return trace(inp).replay


def trace(inp: ReplayInput) -> ReplayTrace:
    """``run`` with the reasons kept."""
    era = era_for(inp.version)
    base = FlashInferReplay(
        python=inp.python,
        version=inp.version,
        cuda_home=None,
        jit_cuda=None,
        jit_cuda_source=None,
        target_cuda_archs=(),
        check_cuda_arch="fail",
        context=inp.context,
    )
    if era is None:  # before 0.2 (prebuilt kernels, no JIT) or not a version
        pre = prebuilt_for(inp.version)
        if pre is None:
            unknown = replace(base, warnings=(f"unknown FlashInfer version {inp.version!r}",))
            return ReplayTrace(unknown, "", None, (), None)
        missing = tuple(cc for cc in dict.fromkeys(inp.devices) if not pre.runs_on(cc))
        shipped = replace(
            base,
            target_cuda_archs=tuple(pre.arch_list.split()),
            check_cuda_arch="fail" if missing or not inp.devices else "pass",
        )
        return ReplayTrace(shipped, PREBUILT_ORIGIN, None, missing, None)
    proc = _Process(inp, era)
    warnings: list[str] = []
    import_error: str | None = None
    archs: set[tuple[int, str | int]] = set()
    detected = False
    if not inp.torch_installed:
        import_error = "ModuleNotFoundError: No module named 'torch'"
    else:
        listed = inp.env.get("FLASHINFER_CUDA_ARCH_LIST")
        try:
            if era.list_mode == "torch":
                archs = proc.torch_flags_archs()
            elif listed is not None:
                archs = proc.arch_list_from_env(listed)
            else:
                detected = True
                archs = proc.detect(warnings)
        except Exception as e:
            import_error = f"{type(e).__name__}: {e}"
            archs = set()

    cuda_home: str | None
    path_error: str | None = None
    try:
        cuda_home = proc.cuda_path()
    except Exception as e:
        cuda_home, path_error = None, f"{type(e).__name__}: {e}"

    jit_cuda: str | None
    source: str | None
    try:
        jit_cuda, source = proc.cuda_version()
    except Exception:
        jit_cuda, source = None, None

    check_error = None if import_error else _check(era, archs, detected)
    if era.path_mode in ("torch", "torch-then-which"):
        home = proc.torch_cuda_home() or "/usr/local/cuda"
        nvcc_path: str | None = inp.env.get("PYTORCH_NVCC") or posixpath.join(home, "bin/nvcc")
    else:
        default = posixpath.join(cuda_home, "bin/nvcc") if cuda_home is not None else None
        nvcc_path = inp.env.get("FLASHINFER_NVCC") or default
    ordered = sorted(archs, key=_sort_key)
    compiles: bool | None
    if import_error:
        compiles = None
    elif check_error:
        compiles = False
    else:
        compiles = _compiles(inp, nvcc_path, archs)
    replayed = FlashInferReplay(
        python=inp.python,
        version=inp.version,
        cuda_home=cuda_home,
        jit_cuda=jit_cuda,
        jit_cuda_source=source,  # type: ignore[arg-type]
        target_cuda_archs=tuple(f"{t[0]}.{t[1]}" for t in ordered),
        check_cuda_arch="fail" if import_error or check_error else "pass",
        import_error=import_error,
        warnings=tuple(dict.fromkeys(warnings)),
        compiles=compiles,
        context=inp.context,
        nvcc_invoked=nvcc_path,
        gencodes=tuple(f"-gencode=arch=compute_{t[0]}{t[1]},code=sm_{t[0]}{t[1]}" for t in ordered),
        check_message=check_error,
        workspace=None if import_error else _workspace(inp, era, archs),
    )
    return ReplayTrace(replayed, proc.origin, proc.drop_error, proc.dropped, era, path_error)
