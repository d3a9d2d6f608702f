"""A compiled extension of torch (flash-attn, xformers, vLLM's `_C`, sgl-kernel, FlashInfer's AOT
wheels, torchvision, torchaudio, DeepSpeed, mamba/causal-conv1d, torch-scatter …) was built
against another torch than the one installed. The probe reads, without importing anything
(`probes/pybinaries.py`): the extension's `Requires-Dist` lines naming torch, a local version
that names one (`+cu124torch2.6`, `+pt24cu121`), xformers' `xformers/cpp_lib.json`, and the
ELF dynamic symbol tables of up to 6 of its `.so` files (24 in all, from its `RECORD`): every
undefined, non-weak torch symbol (`_ZN3c10…`, `_ZN2at…`, `_ZN5torch…`) is looked up in the
installed `libc10`/`libtorch*` through their `.gnu.hash` tables, as the dynamic linker does,
reading only the pages it touches (torchvision 0.24.1's two modules against torch 2.9.1's
libraries: ~20 ms).

- `critical`: a needed torch symbol is missing (`import` fails with *undefined symbol*), the
  extension needs a torch library this build lacks (`libc10_cuda.so` of a CUDA build next to a
  CPU torch), or the declared torch differs in major.minor and the symbols could not be read.
- `warning`: declared for another torch, but every torch symbol it needs resolves (pip reports
  the conflict; layout changes are undefined behaviour), or only the patch release differs.
- silent: the declaration fits; xformers ≥ 0.0.34 builds on torch's stable ABI, so a later
  torch than its `cpp_lib.json` names fits.

Fix `match-extension-to-torch` (`package=NAME[,NAME…]`, optional `torch=VERSION`): pip installs
the newest build of each extension whose requirements accept the installed torch, pinned
exactly (`--upgrade xformers torch==2.8.0+cu128`, from torch's own index when torch came from
one); extensions published only as source (flash-attn, causal-conv1d, mamba-ssm, apex) are
rebuilt against the installed torch (`--no-build-isolation --no-binary`, needs nvcc); with
`torch=` torch follows the extension instead (the what-if also simulates that for a serving
engine that pins torch exactly). Before the first change the step records `pip freeze --all`
and every path in the venv (`.detective-tui/pip-freeze-<stamp>.txt` and `….paths`); undo
uninstalls what the fix added, reinstalls exactly the recorded build of what it changed
(`torchvision===0.24.1`, not the index's `0.24.1+cu128`; a wheel installed from a file from that
file again) and moves aside what pip left behind (README, *The pip plans*). PyTorch's index can
be a mirror: `DETECTIVE_TUI_TORCH_INDEX`.

Real symbols, checked in `tests/test_extension_abi.py` (slow) against the PyPI wheels:
torchvision 0.24.1 (`Requires-Dist: torch (==2.9.1)`) needs 130 + 52 torch symbols; torch 2.9.1
exports all of them; torch 2.8.0's `libc10.so` lacks `_ZNK3c106SymInt22maybe_as_int_slow_pathEv`
(`c10::SymInt::maybe_as_int_slow_path() const`, added by pytorch/pytorch#161586 for 2.9), so
`import torchvision` fails there. The same class in the wild: Dao-AILab/flash-attention#1832
(torch 2.8.0+cu128 with flash-attn 2.8.3: *undefined symbol: _ZN3c104cuda9SetDeviceEa*),
#966 and #723 (*undefined symbol: _ZN3c104cuda9SetDeviceEi* after a torch upgrade).

Example — the demo host `h100-torchvision` (the healthy H100 node with torch 2.8.0+cu128 after
`pip install torchvision==0.24.1 --no-deps`):

```
[critical] torchvision 0.24.1 was built for another torch than 2.8.0+cu128
torchvision 0.24.1 in /opt/venv/bin/python3 is a compiled extension of torch (declared: Requires-
Dist: torch==2.9.1); the installed torch is 2.8.0+cu128: torch's C++ ABI changes between minor
releases, so its compiled modules fail to load ('undefined symbol: _ZN3c10…') or crash. Install the
torchvision build made for torch 2.8.0+cu128 (or the torch it was built for): match-extension-to-
torch.
evidence: torchvision 0.24.1 · torch 2.8.0+cu128 · Requires-Dist: torch==2.9.1
fixes:    match-extension-to-torch package=torchvision
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui.core.facts import ExtensionBuild, Facts, PythonEnv
from tui.core.facts.extensions import declared
from tui.core.findings import Finding, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding
from tui.core.rules.subject import Subject

# The rule, in short:
# ``extension-torch-abi-mismatch``: a compiled extension built against another torch.
#
# The verdict comes from the ``.so`` files first (``tui.core.facts.extensions``): a torch symbol that
# no library of the installed torch exports, or a torch library the installed build does not
# have, fails ``import`` for certain. Otherwise what the extension declares decides: a pin or a
# local version for another torch is ``critical`` across a minor release (torch's C++ ABI changes
# between minors) when the symbols could not be read, and a ``warning`` when they all resolve.

ID = "extension-torch-abi-mismatch"


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
                ID,
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


SERVING_ENGINES = ("vllm", "sglang", "sgl-kernel", "sglang-kernel")  # they pin torch


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


FINDING = FindingRecord(
    id=ID,
    title="A compiled extension was built for another torch",
    severities=("critical", "warning"),
    reads=(
        "pythons.torch_version",
        "pythons.extensions.missing_symbols",
        "pythons.extensions.requires_torch",
        "pythons.extensions.built_torch",
        "pythons.extensions.lacking_libs",
    ),
    rules=(rule_extension_abi,),
    fixes=("match-extension-to-torch",),
    cause="extension built for another torch",
    consequence="its import fails",
    fires_when=(
        "a compiled extension was built for another torch: a torch symbol its `.so` needs is exported "
        "by no `libtorch*`/`libc10` (read from the ELF tables, never imported), a CUDA-only torch "
        "library is missing, or its `Requires-Dist`/local version/`cpp_lib.json` names another torch"
    ),
    example=(
        "torchvision 0.24.1 (built for 2.9.1) next to torch 2.8.0 → *undefined symbol: "
        "_ZNK3c106SymInt22maybe_as_int_slow_pathEv*"
    ),
    doc=__doc__ or "",
    examples=("pytorch/pytorch#161586", "Dao-AILab/flash-attention#1832"),
)
