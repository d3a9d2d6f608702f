"""The records of the CUDA toolkits and ptxas binaries on the host → ``Toolkit`` and
``PtxasBinary``."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

from tui.core.facts import PtxasBinary, Toolkit, parsers
from tui.core.facts.probe_records import norm_path


@dataclass
class PtxasRecords:
    """One ptxas binary's records, as they arrive."""

    kv: dict[str, str] = field(default_factory=dict)
    out: list[str] = field(default_factory=list)
    file: list[str] = field(default_factory=list)
    bin: list[str] = field(default_factory=list)  # the release string in its ELF .rodata
    rc: int | None = None


@dataclass
class TkRecords:
    """One toolkit's records, as they arrive."""

    home: str
    kv: dict[str, str] = field(default_factory=dict)
    out: list[str] = field(default_factory=list)
    json: list[str] = field(default_factory=list)
    file: list[str] = field(default_factory=list)  # version.txt, the string in bin/nvcc
    bin: list[str] = field(default_factory=list)  # the release string in an ELF nvcc's .rodata
    rc: int | None = None


def toolkit(tk: TkRecords, sources: Sequence[str]) -> Toolkit:
    """A toolkit's records (``tk``, ``tkkv``, ``tkout``, ``tkrc``, ``tkjson``, ``tkfile``);
    ``sources``: the ``tkcand`` records that named its home. The version: what nvcc printed,
    else the release string read from the ELF nvcc (``tkbin``: what it would print, so it
    wins over version.json as the nvcc's own answer does), else version.json, else tkfile."""
    kv = tk.kv
    exists = kv.get("exists") == "1"
    executable = kv.get("executable") == "1"
    parsed = parsers.parse_nvcc_version("\n".join(tk.out)) if tk.rc == 0 else None
    source = "nvcc" if parsed else None
    if parsed is None and tk.bin:
        parsed = parsers.parse_nvcc_version("\n".join(tk.bin))
        source = "binary" if parsed else None
    if parsed is None and tk.json:
        parsed = parsers.parse_cuda_version_json("\n".join(tk.json))
        source = "version.json" if parsed else None
    if parsed is None and tk.file:
        text = "\n".join(tk.file)
        parsed = parsers.parse_nvcc_version(text) or parsers.parse_cuda_version_txt(text)
        source = "file" if parsed else None
    error = None
    if not exists:
        error = "no bin/nvcc in this directory"
    elif not executable:
        error = "bin/nvcc is not executable (Permission denied)"
    elif tk.rc in parsers.TIMEOUT_EXIT_CODES:
        error = "nvcc --version did not answer before the step deadline"
    elif tk.rc not in (0, None):
        first = next((ln for ln in tk.out if ln.strip()), "")
        error = f"nvcc --version exited {tk.rc}: {first}".rstrip(": ")
    realpath = kv.get("realpath")
    return Toolkit(
        home=tk.home,
        nvcc=kv.get("nvcc", posixpath.join(tk.home, "bin/nvcc")),
        exists=exists,
        executable=exists and executable,
        version=parsed.release if parsed else None,
        full_version=parsed.full if parsed else None,
        version_source=source,
        realpath=norm_path(realpath) if realpath else None,
        wrapper_of=kv.get("wrapper_of"),
        sources=tuple(sources),
        error=error,
        home_exists=kv.get("dir") != "0",
        cudart=kv.get("cudart") or None,
        ptxas=kv.get("ptxas"),
        headers_version=parsers.parse_cudart_define(kv.get("cudart_define", "")),
    )


def ptxas(path: str, p: PtxasRecords) -> PtxasBinary:
    """A ptxas record set: the version it printed, else the one read from its ELF .rodata
    (``ptxbin``, it was not run), else the one grepped from its file."""
    if p.kv.get("exists") == "0":
        return PtxasBinary(path=path, exists=False, error="no such file")
    ran = parsers.parse_nvcc_version("\n".join(p.out)) if p.rc == 0 else None
    binary = None if ran else parsers.parse_nvcc_version("\n".join(p.bin))
    read = None if ran or binary else parsers.parse_nvcc_version("\n".join(p.file))
    parsed = ran or binary or read
    error = None
    if ran is None:
        if p.rc in parsers.TIMEOUT_EXIT_CODES:
            error = "ptxas --version did not answer before the step deadline"
        elif p.rc is not None:
            error = f"ptxas --version exited {p.rc} (it cannot run here)"
    return PtxasBinary(
        path=path,
        version=parsed.release if parsed else None,
        full_version=parsed.full if parsed else None,
        version_source=("run" if ran else "binary" if binary else "file") if parsed else None,
        error=error,
    )
