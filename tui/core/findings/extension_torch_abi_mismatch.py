"""A compiled extension of torch (flash-attn, xformers, vLLM's `_C`, sgl-kernel, FlashInfer's AOT
wheels, torchvision, torchaudio, DeepSpeed, mamba/causal-conv1d, torch-scatter …) was built
against another torch than the one installed. The probe reads, without importing anything
(`probes/pyfacts.py`): the extension's `Requires-Dist` lines naming torch, a local version
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

from tui.core.findings.record import FindingRecord
from tui.core.rules_extensions import rule_extension_abi

ID = "extension-torch-abi-mismatch"


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
