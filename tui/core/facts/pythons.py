"""The records of one Python interpreter on the host → a ``PythonEnv``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tui.core.facts import PythonEnv, host_changes, parsers
from tui.core.facts.extensions import extension_builds
from tui.core.facts.probe_records import record_int

DIST_FLASHINFER = ("flashinfer-python", "flashinfer")
# ``py`` keys that repeat: each record one more value
PY_LISTS = ("torch_needs", "torchlib", "torch_requires")


@dataclass
class PyRecords:
    """One interpreter's records, as they arrive."""

    kv: dict[str, str] = field(default_factory=dict)
    sites: list[str] = field(default_factory=list)
    dists: dict[str, str] = field(default_factory=dict)
    meta: dict[str, list[str]] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    ext: list[tuple[str, str, str]] = field(default_factory=list)  # (dist, key, value)
    nvlibs: list[str] = field(default_factory=list)
    nvowners: list[tuple[str, str]] = field(default_factory=list)  # (path, dist)
    inst: dict[str, tuple[str, str]] = field(default_factory=dict)  # k → (installer, mtime)
    lists: dict[str, list[str]] = field(default_factory=dict)  # the PY_LISTS keys' values


def python_env(
    py: PyRecords, labels: Mapping[str, str], jit: Mapping[str, tuple[str, ...]]
) -> PythonEnv:
    """One interpreter's records (``py``, ``pydist``, ``pymeta``, ``pyfile``, ``pyext``,
    ``pyinst``, ``pyrc``) as a ``PythonEnv``; ``labels`` and ``jit``: by context id."""
    kv = py.kv
    packages: dict[str, str] = {}
    named: dict[str, tuple[str, str]] = {}
    for k, dirname in py.dists.items():
        parsed = parsers.parse_dist_metadata("\n".join(py.meta.get(k, []))) or (
            parsers.parse_dist_dir_name(dirname)
        )
        if parsed is not None:
            packages.setdefault(parsed[0], parsed[1])
            named[k] = parsed
    torch = parsers.parse_torch_version_py("\n".join(py.files.get("torch_version", [])))
    fi = parsers.parse_flashinfer_build_meta("\n".join(py.files.get("flashinfer_build_meta", [])))
    if fi is None:
        fi = next((packages[d] for d in DIST_FLASHINFER if d in packages), None)
    ds = parsers.parse_deepspeed_installed("\n".join(py.files.get("deepspeed_installed", [])))
    source = kv.get("source", "inventory")
    cid = kv.get("context", "0")
    return PythonEnv(
        path=kv.get("path", ""),
        source=source if source in ("inventory", "process", "discovered") else "discovered",  # type: ignore[arg-type]
        context=labels.get(cid),
        exists=kv.get("exists", "1") == "1",
        version=kv.get("version"),
        prefix=kv.get("prefix"),
        site_packages=tuple(py.sites),
        torch_version=torch.version if torch else packages.get("torch"),
        torch_cuda=torch.cuda if torch else None,
        torch_arch_list=parsers.parse_torch_arch_flags(
            "\n".join(py.files.get("torch_arch_flags", []))
        ),
        flashinfer_version=fi,
        flashinfer_cubin_version=packages.get("flashinfer-cubin"),
        flashinfer_jit_cache_version=packages.get("flashinfer-jit-cache"),
        packages=packages,
        jit_cache_dirs=jit.get(cid, ()),
        error=_python_error(py),
        extensions=extension_builds(py.ext, packages),
        triton_bin_dir=kv.get("triton_bin"),
        cuda_libs=tuple(py.nvlibs),
        lib_owners=tuple(py.nvowners),
        has_pip={"1": True, "0": False}.get(kv.get("pip", "")),
        torch_lib=kv.get("torch_lib"),
        torch_rpath=_search_path(kv.get("torch_rpath")),
        torch_needs=tuple(py.lists.get("torch_needs", ())),
        torch_lib_files=tuple(py.lists.get("torchlib", ())),
        torch_requires=tuple(py.lists.get("torch_requires", ())),
        **_torch_nccl(kv.get("torch_nccl")),
        deepspeed_ops=ds[0] if ds else None,
        deepspeed_accelerator=ds[1] if ds else None,
        installs=host_changes.installs(py.dists, named, py.inst),
    )


def _torch_nccl(value: str | None) -> dict[str, object]:
    """``NEEDED MISSING first,missing LIB`` → the PythonEnv fields of the NCCL symbol check."""
    parts = (value or "").split(" ", 3)
    if len(parts) < 4 or not parts[0].isdigit() or not parts[1].isdigit():
        return {}
    names = () if parts[2] == "-" else tuple(parts[2].split(","))
    return {
        "torch_nccl": parts[3],
        "torch_nccl_needed": int(parts[0]),
        "torch_nccl_missing": int(parts[1]),
        "torch_nccl_missing_names": names,
    }


def _search_path(value: str | None) -> tuple[str, str] | None:
    """``rpath $ORIGIN/…`` → ("rpath", "$ORIGIN/…")."""
    kind, _, path = (value or "").partition(" ")
    return (kind, path) if kind in ("rpath", "runpath") else None


def _python_error(py: PyRecords) -> str | None:
    kv = py.kv
    if kv.get("error"):
        return kv["error"]
    rc = record_int(kv.get("rc"))
    if rc in parsers.TIMEOUT_EXIT_CODES:
        return "the interpreter did not answer before the step deadline"
    if rc not in (0, None):
        tail = " | ".join(py.notes[-3:])
        if any("SyntaxError" in note for note in py.notes):
            return f"not a Python 3.6+ that can run the probe's snippet ({tail})"
        return f"the interpreter exited {rc}" + (f": {tail}" if tail else "")
    return None
