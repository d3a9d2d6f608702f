"""Do FlashInfer's prebuilt kernels spare a JIT build (and so the need for nvcc)?

By release (``shared/knowledge/flashinfer-logic.md`` §8, read from each era's wheels):
- < 0.2.6: only the AOT wheels (local version ``+cuXYZtorchX.Y``) ship compiled ops;
  their sampling ops load without nvcc. 0.2.6 – 0.3.x look for ``flashinfer/data/aot``
  modules of the same AOT wheels.
- 0.4.0 – 0.7.0.post1: the installed ``flashinfer-jit-cache`` serves every module it ships,
  with no arch check, when its version equals flashinfer's or starts with it (``0.6.8+cu130``);
  a different version raises ``RuntimeError: flashinfer-jit-cache version (…) does not match
  flashinfer version (…)`` unless ``FLASHINFER_DISABLE_VERSION_CHECK=1``.
- 0.7.1 and later: jit-cache "providers" declare their architectures; a module is served per
  target arch (an ``a`` build only for that exact capability, an unsuffixed or ``f`` build for
  the same major and any later minor). A mismatched version is ignored with a warning.
The providers' arch lists are the jit-cache build matrix (``ci/cuda-versions.json`` at the
FlashInfer revision read for §8), per CUDA variant (the wheel's local version) and machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:
    from tui.core.facts import Facts
    from tui.core.findings import FlashInferReplay

JIT_CACHE_ERA = "0.4.0"  # flashinfer-jit-cache is looked up from this release on
PROVIDER_ERA = "0.7.1"  # per-arch providers from this release on
AOT_WHEELS_UNTIL = "0.4.0"  # the +cuXYZtorchX.Y AOT wheels stop before this release
DISABLE_VERSION_CHECK = "FLASHINFER_DISABLE_VERSION_CHECK"

_X86 = "7.5 8.0 8.9 9.0a 10.0a 10.3a 12.0f"
JIT_CACHE_ARCHS: Mapping[tuple[str, str], tuple[str, ...]] = MappingProxyType(
    {
        key: tuple(value.split())
        for key, value in {
            ("cu129", "x86_64"): _X86,
            ("cu130", "x86_64"): _X86,
            ("cu130", "aarch64"): f"{_X86} 11.0a 12.1a",
            ("cu134", "x86_64"): f"{_X86} 10.7a",
            ("cu134", "aarch64"): f"{_X86} 10.7a 11.0a 12.1a",
        }.items()
    }
)


@dataclass(frozen=True)
class Prebuilt:
    """Whether prebuilt modules make a JIT build unnecessary: ``covered`` True (they do),
    False (a build will run), None (cannot tell); ``reason`` says why, in a sentence."""

    covered: bool | None
    reason: str
    evidence: str | None = None


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def _arch(item: str) -> tuple[int, int, str] | None:
    major, _, minor = item.partition(".")
    digits = minor.rstrip("abcdefghijklmnopqrstuvwxyz")
    if not (major.isdigit() and digits.isdigit()):
        return None
    return int(major), int(digits), minor[len(digits) :]


def serves(provided: str, target: str) -> bool:
    """Does a provider module built for ``provided`` ("12.0f") serve the target arch
    ``target`` ("12.0f", "12.1a", "9.0a")?"""
    p, t = _arch(provided), _arch(target)
    if p is None or t is None or p[0] != t[0]:
        return False
    return p[1] == t[1] if p[2] == "a" else p[1] <= t[1]


def jit_cache_archs(jit_cache_version: str, machine: str | None) -> tuple[str, ...] | None:
    v = _version(jit_cache_version)
    variant = (v.local or "") if v else ""
    return JIT_CACHE_ARCHS.get((variant, machine or "x86_64"))


def _matches(jit_cache: str, flashinfer: str) -> bool:
    return jit_cache == flashinfer or jit_cache.startswith(flashinfer)


def coverage(
    flashinfer: str,
    jit_cache: str | None,
    targets: Sequence[str],
    machine: str | None,
    env: Mapping[str, str],
) -> Prebuilt:
    """Whether the installed prebuilt packages serve FlashInfer ``flashinfer``'s modules for
    ``targets`` (its TARGET_CUDA_ARCHS) without compiling."""
    v = _version(flashinfer)
    if v is None:
        return Prebuilt(None, f"FlashInfer {flashinfer!r} is not a version this tool knows")
    if v < Version(JIT_CACHE_ERA):
        if v.local and "torch" in v.local:
            return Prebuilt(
                True,
                f"flashinfer {flashinfer} is an AOT wheel: its sampling ops are compiled in",
                f"flashinfer {flashinfer} (AOT build)",
            )
        return Prebuilt(False, f"flashinfer {flashinfer} is the JIT-only package")
    if jit_cache is None:
        return Prebuilt(False, "no flashinfer-jit-cache is installed")
    evidence = f"flashinfer-jit-cache {jit_cache}"
    same = _matches(jit_cache, flashinfer)
    if v < Version(PROVIDER_ERA):
        if same or env.get(DISABLE_VERSION_CHECK) == "1":
            return Prebuilt(
                True,
                f"flashinfer-jit-cache {jit_cache} serves the modules it ships without compiling",
                evidence,
            )
        return Prebuilt(
            False,
            f"flashinfer-jit-cache {jit_cache} is not built for flashinfer {flashinfer}: "
            f"FlashInfer refuses it ('flashinfer-jit-cache version ({jit_cache}) does not "
            f"match flashinfer version ({flashinfer})')",
            evidence,
        )
    if not same:
        return Prebuilt(
            False,
            f"flashinfer-jit-cache {jit_cache} is not built for flashinfer {flashinfer}, so "
            "FlashInfer ignores it (with a warning)",
            evidence,
        )
    archs = jit_cache_archs(jit_cache, machine)
    if archs is None:
        return Prebuilt(
            None,
            f"which architectures flashinfer-jit-cache {jit_cache} was built for is not "
            "recorded here",
            evidence,
        )
    missing = [t for t in targets if not any(serves(a, t) for a in archs)]
    if missing:
        return Prebuilt(
            False,
            f"flashinfer-jit-cache {jit_cache} ships modules for {' '.join(archs)}, none of "
            f"which serves {', '.join(missing)}",
            evidence,
        )
    return Prebuilt(
        True,
        f"flashinfer-jit-cache {jit_cache} ships modules for {' '.join(archs)}",
        evidence,
    )


def replay_coverage(facts: Facts, replay: FlashInferReplay) -> Prebuilt | None:
    """Whether prebuilt modules serve ``replay``'s FlashInfer when its nvcc cannot compile
    (the JIT cache makes the build unnecessary); None when nvcc can, or nothing tells."""
    if replay.compiles is not False or replay.check_cuda_arch != "pass":
        return None
    py = next((p for p in facts.pythons if p.path == replay.python), None)
    if py is None:
        return None
    ctx = facts.context(replay.context)
    return coverage(
        replay.version,
        py.flashinfer_jit_cache_version,
        replay.target_cuda_archs,
        facts.host.arch,
        ctx.vars if ctx is not None else {},
    )
