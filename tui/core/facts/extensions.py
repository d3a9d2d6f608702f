"""Compiled extensions and the torch they were built for.

The probe (``probes/pybinaries.py``) reports, per extension distribution: its ``Requires-Dist``
lines naming torch, xformers' ``cpp_lib.json``, and for each of its ``.so`` files (at most a
few) how many torch symbols it needs and how many of those no library of the installed torch
exports — read from the ELF dynamic symbol tables and looked up through ``.gnu.hash`` as the
dynamic linker does. A missing symbol is exactly the ``undefined symbol: _ZN3c10…`` of
``import``. ``declared_mismatch`` reads what the extension declares: a pin, a local version
(``+cu124torch2.6``, ``+pt26cu124``) or xformers' build record (from 0.0.34 xformers builds on
torch's stable ABI, so any later torch is fine).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from tui.core.facts import ExtensionBuild, PythonEnv
from tui.core.tables.torch_index import variant

LOCAL_TORCH = (re.compile(r"torch(\d+)\.(\d+)"), re.compile(r"(?:^|[.+])pt(\d)(\d+)"))
XFORMERS_STABLE_ABI = "0.0.34"
SAMPLE = 3


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def extension_builds(
    records: Iterable[tuple[str, str, str]], packages: Mapping[str, str]
) -> tuple[ExtensionBuild, ...]:
    """``ExtensionBuild``s from the probe's ``pyext`` records of one interpreter."""
    data: dict[str, dict] = {}
    for dist, key, value in records:
        d = data.setdefault(
            dist, {"requires": [], "cpp": [], "so": 0, "syms": 0, "miss": 0, "sample": []}
        )
        d.setdefault("lacks", [])
        d.setdefault("errors", [])
        if key == "requires":
            d["requires"].append(value)
        elif key == "cpp_lib":
            d["cpp"].append(value)
        elif key == "so":
            parts = value.split(" ")
            if len(parts) >= 3 and parts[1].isdigit() and parts[2].isdigit():
                d["so"] += 1
                d["syms"] += int(parts[1])
                d["miss"] += int(parts[2])
                d["sample"] += [p for p in parts[3:] if p]
        elif key == "lacks":
            d["lacks"] += value.split(" ")[1:]
        elif key in ("so-error", "so-skipped"):
            d["errors"].append(f"{key}: {value}")
    out = []
    for dist, d in sorted(data.items()):
        built = None
        if d["cpp"]:
            try:
                built = json.loads("\n".join(d["cpp"]))["version"]["torch"]
            except (ValueError, KeyError, TypeError):
                d["errors"].append("xformers/cpp_lib.json could not be read")
        out.append(
            ExtensionBuild(
                name=dist,
                version=packages.get(dist),
                requires_torch=tuple(d["requires"]),
                built_torch=built,
                so_read=d["so"],
                torch_symbols=d["syms"],
                missing_symbols=d["miss"],
                missing_sample=tuple(dict.fromkeys(d["sample"]))[:SAMPLE],
                lacking_libs=tuple(dict.fromkeys(d["lacks"])),
                errors=tuple(d["errors"]),
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class Declared:
    """What an extension says about the torch it needs, and whether the installed one fits."""

    fits: bool
    says: str  # "Requires-Dist: torch==2.9.1", "built for torch 2.6 (+cu124torch2.6)"
    wants: str | None = None  # a torch version that would fit, when one is named exactly
    minor_differs: bool = True  # False: only the patch release differs


def declared(ext: ExtensionBuild, torch_version: str) -> Declared | None:
    """The first declaration that names a torch, checked against ``torch_version``."""
    have = _version(torch_version)
    if have is None:
        return None
    for line in ext.requires_torch:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if not req.specifier:
            continue
        fits = req.specifier.contains(have, prereleases=True)
        pins = [s.version for s in req.specifier if s.operator == "==" and "*" not in s.version]
        wanted = _version(pins[0]) if pins else None
        return Declared(
            fits,
            f"Requires-Dist: torch{req.specifier}",
            str(wanted) if wanted else None,
            wanted is None or wanted.release[:2] != have.release[:2],
        )
    local = (_version(ext.version).local or "") if ext.version and _version(ext.version) else ""
    for pattern in LOCAL_TORCH:
        m = pattern.search(local)
        if m:
            built = (int(m.group(1)), int(m.group(2)))
            return Declared(
                built == have.release[:2],
                f"built for torch {built[0]}.{built[1]} (local version +{local})",
            )
    built_v = _version(ext.built_torch)
    if built_v is not None:
        says = f"xformers/cpp_lib.json: built for torch {ext.built_torch}"
        ext_v = _version(ext.version)
        if ext_v is not None and ext_v >= Version(XFORMERS_STABLE_ABI):
            return Declared(have.release >= built_v.release, says + " (stable ABI: or later)")
        fits = built_v.release == have.release and built_v.local == have.local
        return Declared(fits, says, str(built_v.public), built_v.release[:2] != have.release[:2])
    return None


def matched(py: PythonEnv, packages: Iterable[str], torch: str | None = None) -> PythonEnv:
    """``py`` as ``match-extension-to-torch`` would leave it: each named extension declares
    and needs exactly the torch installed afterwards (``torch``, else the current one, whose
    local tag a new version keeps); with a new torch, no other extension's symbols are known."""
    names = set(packages)
    current = py.torch_version or ""
    after = current
    if torch:
        local = variant(current)
        after = f"{torch}+{local}" if local and "+" not in torch else torch
    public = _version(after).public if _version(after) else after
    out = []
    for ext in py.extensions:
        if ext.name in names:
            ext = ExtensionBuild(
                name=ext.name, version=ext.version, requires_torch=(f"torch=={public}",)
            )
        elif torch:
            ext = replace(
                ext,
                so_read=0,
                torch_symbols=0,
                missing_symbols=0,
                missing_sample=(),
                lacking_libs=(),
            )
        out.append(ext)
    return replace(py, torch_version=after, extensions=tuple(out))
