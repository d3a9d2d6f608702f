"""``extension-torch-abi-mismatch``: a compiled extension built against another torch.

The verdict comes from the ``.so`` files first (``tui.core.extensions``): a torch symbol that
no library of the installed torch exports, or a torch library the installed build does not
have, fails ``import`` for certain. Otherwise what the extension declares decides: a pin or a
local version for another torch is ``critical`` across a minor release (torch's C++ ABI changes
between minors) when the symbols could not be read, and a ``warning`` when they all resolve.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tui.core.extensions import declared
from tui.core.facts import ExtensionBuild, Facts, PythonEnv
from tui.core.findings import Finding, Severity
from tui.core.rulekit import finding

if TYPE_CHECKING:
    from tui.core.subject import Subject

FINDING = "extension-torch-abi-mismatch"


def _symbols_text(ext: ExtensionBuild) -> str:
    return (
        f"{ext.missing_symbols} of the {ext.torch_symbols} torch symbols its "
        f"{ext.so_read} .so file(s) need are exported by no library of this torch"
    )


def judge(ext: ExtensionBuild, py: PythonEnv) -> tuple[Severity, str, list[str]] | None:
    """(severity, what happens, evidence) for one extension, or None when it fits."""
    torch = py.torch_version or ""
    said = declared(ext, torch) if torch else None
    evidence = [f"{ext.name} {ext.version or '?'}", f"torch {torch or 'not installed'}"]
    if said is not None:
        evidence.append(said.says)
    if ext.so_read:
        evidence.append(
            f"{ext.torch_symbols} torch symbols needed, {ext.missing_symbols} missing"
            + (f": {', '.join(ext.missing_sample)}" if ext.missing_sample else "")
        )
    if ext.lacking_libs:
        evidence.append(f"needs {', '.join(ext.lacking_libs)}, which this torch does not have")
        return (
            "critical",
            f"`import` fails: {ext.lacking_libs[0]}: cannot open shared object file (it was "
            "built against a CUDA torch; this one has no such library)",
            evidence,
        )
    if ext.missing_symbols:
        return (
            "critical",
            f"`import` fails with 'undefined symbol: {ext.missing_sample[0]}' — "
            + _symbols_text(ext),
            evidence,
        )
    if said is None or said.fits:
        return None
    if ext.so_read and ext.torch_symbols:
        return (
            "warning",
            f"it loads today (every one of the {ext.torch_symbols} torch symbols it needs is "
            "exported), but pip reports the conflict and a layout change between the two "
            "torch releases is undefined behaviour",
            evidence,
        )
    if said.minor_differs:
        return (
            "critical",
            "torch's C++ ABI changes between minor releases, so its compiled modules fail to "
            "load ('undefined symbol: _ZN3c10…') or crash",
            evidence,
        )
    return ("warning", "only the patch release differs; pip reports the conflict", evidence)


def rule_extension_abi(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        py = s.python
        if py is None or not py.torch_version:
            continue
        for ext in py.extensions:
            verdict = judge(ext, py)
            if verdict is None:
                continue
            severity, what, evidence = verdict
            said = declared(ext, py.torch_version)
            built = f" (declared: {said.says})" if said is not None and not said.fits else ""
            yield finding(
                FINDING,
                severity,
                f"{ext.name} {ext.version or ''} was built for another torch than "
                f"{py.torch_version}",
                f"{ext.name} {ext.version or ''} in {py.path} is a compiled extension of torch"
                f"{built}; the installed torch is {py.torch_version}: {what}. Install the "
                f"{ext.name} build made for torch {py.torch_version} (or the torch it was built "
                "for): match-extension-to-torch.",
                [*evidence, *ext.errors],
                s,
            )


SERVING_ENGINES = ("vllm", "sglang", "sgl-kernel")  # they pin torch; torch follows them


def extension_params(py: PythonEnv | None) -> list[dict[str, str]]:
    """``match-extension-to-torch`` parameters worth simulating: every mismatched extension
    following the installed torch; or, for a serving engine that pins torch exactly, torch
    following the engine."""
    if py is None or not py.torch_version:
        return []
    broken = [e for e in py.extensions if judge(e, py) is not None]
    if not broken:
        return []
    out = [{"package": ",".join(e.name for e in broken)}]
    for e in broken:
        said = declared(e, py.torch_version)
        if e.name in SERVING_ENGINES and said is not None and said.wants:
            out.append({"package": e.name, "torch": said.wants})
    return out
