"""Two installed nvidia-* distributions install the same CUDA library file: the RECORDs of both
dist-infos list it (the probe reads them; record `nvown`). pip does not refuse that: the file on
disk is the last installed one's, and uninstalling either removes it from under the other. The
real shape: `nvidia-nccl-cu12` 2.27.5 and `nvidia-nccl-cu13` 2.27.7 both install
`nvidia/nccl/lib/libnccl.so.2` (their wheels' file lists, read from the package index;
`tests/test_wheel_file_conflict.py`), which torch finds through the `DT_RPATH` entry
`$ORIGIN/../../nvidia/nccl/lib` whatever its CUDA major (`readelf -d` of torch 2.10.0's and
2.11.0's `libtorch_global_deps.so`): a cu12 torch can get the CUDA 13 build and the reverse.

`warning`, naming the distribution installed last (its dist-info's time) — whose file is there —
and the one torch's CUDA major wants (`-cu<major>`). For `libnccl.so.2` the probe also resolves
the `nccl*` symbols `torch/lib/libtorch_cuda.so` leaves undefined against the file its
`DT_RPATH` finds (only the two dynamic symbol tables are read, through mmap: the real files are
210–430 MB); when the file lacks one, `import torch` fails with `undefined symbol: <it>`:
`critical`, naming it. What to do: uninstall the one torch does not want, then reinstall the
other (`pip install --force-reinstall --no-deps`), so the file and the RECORDs agree.

Example — the fake host of `tests/test_wheel_file_conflict.py` (4× H100, torch 2.8.0+cu128,
nvidia-nccl-cu12 2.27.5 and then nvidia-nccl-cu13 2.27.7 installed into the same venv):

```
[warning] nvidia-nccl-cu12 and nvidia-nccl-cu13 both install nvidia/nccl/lib/libnccl.so.2
```

In the wild: pytorch/pytorch#186591 — `import torch` fails with `undefined symbol:
ncclCommResume` with `nvidia-nccl-cu12==2.29.3` and `nvidia-nccl-cu13==2.29.7` installed; the
maintainer's answer: uninstall `nvidia-nccl-cu12`. rwth-i6/returnn#1802 — `libtorch_cuda.so:
undefined symbol: ncclMemFree` with `nvidia-nccl-cu11==2.14.3` and `nvidia-nccl-cu12==2.27.3`;
`ldd` shows `libnccl.so.2 => …/torch/lib/../../nvidia/nccl/lib/libnccl.so.2`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence

from packaging.version import InvalidVersion, Version

from tui.core.facts import Facts, PythonEnv
from tui.core.findings import Finding
from tui.core.findings.record import FindingRecord
from tui.core.rules.rulekit import finding
from tui.core.rules.subject import Subject

ID = "wheel-file-conflict"


def _site_relative(path: str) -> str:
    i = path.find("/nvidia/")
    return path[i + 1 :] if i >= 0 else posixpath.basename(path)


def rule_wheel_file_conflict(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    seen: set[str] = set()
    for s in subs:
        py = s.python
        if py is None or py.path in seen or not py.lib_owners:
            continue
        seen.add(py.path)
        owners: dict[str, list[str]] = {}
        for path, dist in py.lib_owners:
            owners.setdefault(posixpath.normpath(path), []).append(dist)
        when = {i.name: i.mtime for i in py.installs if i.mtime is not None}
        try:
            major = Version(py.torch_cuda).major if py.torch_cuda else None
        except InvalidVersion:
            major = None
        for path, dists in owners.items():
            dists = sorted(set(dists))
            if len(dists) < 2:
                continue
            rel = _site_relative(path)
            last = max(dists, key=lambda d: when.get(d, -1)) if when else None
            wanted = next(
                (d for d in dists if major is not None and d.endswith(f"-cu{major}")), None
            )
            text = (
                f"The RECORDs of {' and '.join(dists)} all list {path}: each wheel wrote the "
                "same file, so it is the last installed one's, and uninstalling any of them "
                "deletes it from under the others."
            )
            if last and last in when:
                text += f" {last} was installed last (its dist-info's time): the file is its build."
            if wanted:
                text += (
                    f" torch {py.torch_version} (CUDA {py.torch_cuda}) finds it through its "
                    f"RPATH and wants {wanted}'s."
                )
                others = [d for d in dists if d != wanted]
                text += (
                    f" Uninstall {', '.join(others)}, then `pip install --force-reinstall "
                    f"--no-deps {wanted}=={py.packages.get(wanted, '…')}`."
                )
            evidence = [f"{d} {py.packages.get(d, '?')} lists {rel} in its RECORD" for d in dists]
            lacks = _lacks(py, path)
            if lacks:
                text = lacks + " " + text
                evidence.append(
                    f"{py.torch_nccl}: {py.torch_nccl_missing} of the {py.torch_nccl_needed} "
                    f"nccl* symbols libtorch_cuda.so needs undefined"
                )
            if py.torch_version:
                evidence.append(f"torch {py.torch_version} (torch.version.cuda {py.torch_cuda})")
            title = f"{' and '.join(dists)} both install {rel}"
            if lacks:
                title += f": torch needs {py.torch_nccl_missing_names[0]}, which it lacks"
            yield finding(ID, "critical" if lacks else "warning", title, text, evidence, s)


def _lacks(py: PythonEnv, path: str) -> str:
    """The chain when torch's libtorch_cuda.so needs nccl* symbols the file at ``path`` lacks."""
    if not py.torch_nccl_missing or posixpath.normpath(py.torch_nccl or "") != path:
        return ""
    names = ", ".join(py.torch_nccl_missing_names)
    more = py.torch_nccl_missing - len(py.torch_nccl_missing_names)
    return (
        f"torch {py.torch_version}'s libtorch_cuda.so needs {py.torch_nccl_needed} nccl* "
        f"symbols from libnccl.so.2, found through its RPATH at {path}, and that file lacks "
        f"{names}" + (f" and {more} more" if more > 0 else "") + " → `import torch` fails with "
        f"'undefined symbol: {py.torch_nccl_missing_names[0]}'."
    )


FINDING = FindingRecord(
    id=ID,
    title="Two installed wheels install the same CUDA library",
    severities=("critical", "warning"),
    reads=(
        "pythons.lib_owners",
        "pythons.installs",
        "pythons.torch_cuda",
        "pythons.torch_nccl",
        "pythons.torch_nccl_missing",
    ),
    rules=(rule_wheel_file_conflict,),
    fixes=(),
    cause="two wheels install one CUDA library",
    consequence="the last one's file wins",
    implicates=("torch",),
    fires_when="the RECORDs of two installed nvidia-* dist-infos list the same CUDA library file",
    example="nvidia-nccl-cu12 and nvidia-nccl-cu13 both install `nvidia/nccl/lib/libnccl.so.2`",
    doc=__doc__ or "",
    examples=("pytorch/pytorch#186591", "rwth-i6/returnn#1802"),
)
