"""Probe records → ``Facts``.

``FactBuilder.feed`` takes the probe's output one line at a time (SSH banners, motd and stderr
noise included: a line without the ``@@DT1`` sentinel is ignored) and ``facts()`` returns the
``Facts`` known so far — valid at any time, with ``probe.complete=False`` until the end record
arrives. The record protocol is documented in ``probes/README.md``; the text of tools and files
is interpreted by ``tui.core.facts.parsers`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from tui.core.facts import (
    ContainerInfo,
    DriverInfo,
    Facts,
    Gpu,
    HostInfo,
    LibFile,
    LoaderInfo,
    LogLine,
    MigDevice,
    ProbeMeta,
    host_changes,
    mig,
    parsers,
)
from tui.core.facts.contexts import CtxRecords, env_contexts
from tui.core.facts.fabric import fabric_info
from tui.core.facts.gpu_scope import container_scope
from tui.core.facts.gpu_state import parse_gpu_load, parse_gpu_processes
from tui.core.facts.probe_records import (
    escaped,
    norm_path,
    record_int,
    split_record,
    unescape_field,
)
from tui.core.facts.pythons import PY_LISTS, PyRecords, python_env
from tui.core.facts.tools import PtxasRecords, TkRecords, ptxas, toolkit


@dataclass(frozen=True)
class ProbeProgress:
    step: str
    done: int
    total: int | None


# fields after the kind; the last one keeps any tabs it contains
ARITY: Mapping[str, int] = {
    "begin": 2,
    "step": 3,
    "host": 2,
    "osr": 2,
    "ulc": 2,
    "drvproc": 2,
    "drvproc-missing": 1,
    "smipath": 1,
    "smi": 2,
    "smirc": 2,
    "ctx": 3,
    "ctxkv": 3,
    "arg": 2,
    "env": 3,
    "which": 2,
    "profile": 2,
    "unitenv": 2,
    "unitenvfile": 2,
    "unitenvpath": 2,
    "nvccdir": 2,
    "jit": 2,
    "py": 3,
    "pydist": 3,
    "pymeta": 3,
    "pyfile": 3,
    "pyrc": 2,
    "pyext": 4,
    "pyinst": 4,
    "chg": 3,
    "symptom": 3,
    "ctr": 2,
    "fm": 3,
    "ldconf": 2,
    "libcuda": 1,
    "tk": 2,
    "tkcand": 2,
    "tkkv": 3,
    "tkout": 2,
    "tkrc": 2,
    "tkjson": 2,
    "tkfile": 2,
    "tkbin": 2,
    "notrun": 2,
    "ptxkv": 3,
    "ptxout": 2,
    "ptxrc": 2,
    "ptxfile": 2,
    "ptxbin": 2,
    "ldlib": 3,
    "ldsrc": 2,
    "maplib": 2,
    "ldcache": 2,
    "timeout": 1,
    "cut": 3,
    "error": 2,
    "end": 1,
}


class FactBuilder:
    """Accumulates probe records; ``facts()`` may be called at any point."""

    def __init__(self) -> None:
        self._begin: tuple[str, str] | None = None
        self._escaped = False
        self._end: str | None = None
        self._host: dict[str, str] = {}
        self._osr: list[str] = []
        self._ulc: tuple[str, str] | None = None
        self._drvproc: list[str] = []
        self._smipath: str | None = None
        self._smi: dict[str, list[str]] = {"table": [], "query": []}
        self._smirc: dict[str, int | None] = {}
        self._ctx: dict[str, CtxRecords] = {}
        self._nvccdir: dict[str, bool] = {}
        self._py: dict[str, PyRecords] = {}
        self._tk: dict[str, TkRecords] = {}
        self._tksrc: dict[str, list[str]] = {}
        self._ptxas: dict[str, PtxasRecords] = {}
        self._ldcache: dict[str, str] = {}
        self._timeouts: list[str] = []
        self._cut: list[str] = []
        self._errors: list[str] = []
        self._notrun: dict[str, str] = {}
        self._ctr: dict[str, list[str]] = {"marker": [], "dev": [], "lib": []}
        self._fm: list[tuple[str, str, str]] = []
        self._ldconf: list[tuple[str, str]] = []
        self._libcuda: list[str] = []
        self._chg: list[tuple[str, str, str]] = []
        self._log_lines: list[LogLine] = []

    # -- input ------------------------------------------------------------------------
    def feed(self, line: str) -> ProbeProgress | None:
        """One line of output. Records count only from the last ``begin`` (what an rc file
        printed before the probe started is noise, whatever it looks like) to ``end``."""
        record = split_record(line)
        found = _HANDLERS.get(record[0]) if record else None
        if record is None or found is None:
            return None
        kind, rest = record
        if kind == "begin":
            self.__init__()  # type: ignore[misc]
        elif self._begin is None or self._end is not None:
            return None
        arity, handler = found
        fields = rest.split("\t", arity - 1) if arity > 1 else [rest]
        if len(fields) < arity:
            fields += [""] * (arity - len(fields))
        if kind not in ("begin", "arg") and self._escaped:
            fields = [unescape_field(f) for f in fields]
        return handler(self, *fields)

    def _on_begin(self, version: str, root: str) -> None:
        self._begin = (version, unescape_field(root) if escaped(version) else root)
        self._escaped = escaped(version)

    def _on_step(self, name: str, done: str, total: str) -> ProbeProgress:
        return ProbeProgress(name, record_int(done) or 0, record_int(total))

    def _on_end(self, elapsed_ms: str) -> ProbeProgress:
        self._end = elapsed_ms
        return ProbeProgress("end", 1, 1)

    def _on_host(self, key: str, value: str) -> None:
        self._host[key] = value

    def _on_osr(self, _: str, line: str) -> None:
        self._osr.append(line)

    def _on_ulc(self, exists: str, target: str) -> None:
        self._ulc = (exists, target)

    def _on_drvproc(self, _: str, line: str) -> None:
        self._drvproc.append(line)

    def _on_drvproc_missing(self, _: str) -> None:
        self._drvproc = []

    def _on_smipath(self, path: str) -> None:
        self._smipath = path

    def _on_smi(self, which: str, line: str) -> None:
        self._smi.setdefault(which, []).append(line)

    def _on_smirc(self, which: str, rc: str) -> None:
        self._smirc[which] = record_int(rc)

    def _on_ctx(self, cid: str, kind: str, label: str) -> None:
        ctx = self._ctx.setdefault(cid, CtxRecords(kind, label))
        ctx.kind, ctx.label = kind, label

    def _ctx_of(self, cid: str) -> CtxRecords:
        ctx = self._ctx.get(cid)  # not setdefault: that would build a CtxRecords for every record
        if ctx is None:
            ctx = self._ctx[cid] = CtxRecords("process", f"context {cid}")
        return ctx

    def _on_ctxkv(self, cid: str, key: str, value: str) -> None:
        self._ctx_of(cid).kv[key] = value

    def _on_arg(self, cid: str, value: str) -> None:
        self._ctx_of(cid).args.append(value)

    def _on_env(self, cid: str, name: str, value: str) -> None:
        self._ctx_of(cid).env[name] = value

    def _on_which(self, cid: str, path: str) -> None:
        self._ctx_of(cid).which.append(path)

    def _on_profile(self, cid: str, line: str) -> None:
        self._ctx_of(cid).profile.append(line)

    def _on_unitenv(self, cid: str, value: str) -> None:
        self._ctx_of(cid).unitenv.append(value)

    def _on_unitenvfile(self, cid: str, line: str) -> None:
        self._ctx_of(cid).unitenvfile.append(line)

    def _on_unitenvpath(self, cid: str, value: str) -> None:
        self._ctx_of(cid).unitenvpath.append(value)

    def _on_jit(self, cid: str, path: str) -> None:
        self._ctx_of(cid).jit.append(path)

    def _on_nvccdir(self, directory: str, flag: str) -> None:
        self._nvccdir[directory] = flag == "1"

    def _py_of(self, idx: str) -> PyRecords:
        py = self._py.get(idx)  # not setdefault: that would build a PyRecords for every record
        if py is None:
            py = self._py[idx] = PyRecords()
        return py

    def _on_py(self, idx: str, key: str, value: str) -> None:
        py = self._py_of(idx)
        if key == "site":
            py.sites.append(value)
        elif key == "nvlib":
            py.nvlibs.append(value)
        elif key == "nvown" and " " in value:
            dist, path = value.split(" ", 1)
            py.nvowners.append((path, dist))
        elif key in PY_LISTS:
            py.lists.setdefault(key, []).append(value)
        elif key in ("warning", "stderr"):
            py.notes.append(value)
        else:
            py.kv[key] = value

    def _on_pydist(self, idx: str, k: str, dirname: str) -> None:
        self._py_of(idx).dists[k] = dirname

    def _on_pymeta(self, idx: str, k: str, line: str) -> None:
        self._py_of(idx).meta.setdefault(k, []).append(line)

    def _on_pyfile(self, idx: str, label: str, line: str) -> None:
        self._py_of(idx).files.setdefault(label, []).append(line)

    def _on_pyext(self, idx: str, dist: str, key: str, value: str) -> None:
        self._py_of(idx).ext.append((dist, key, value))

    def _on_pyinst(self, idx: str, k: str, installer: str, mtime: str) -> None:
        self._py_of(idx).inst[k] = (installer, mtime)

    def _on_chg(self, what: str, key: str, value: str) -> None:
        self._chg.append((what, key, value))

    def _on_symptom(self, kind: str, name: str, line: str) -> None:
        self._log_lines.append(LogLine(f"{kind} {name}", line))

    def _on_pyrc(self, idx: str, rc: str) -> None:
        self._py_of(idx).kv["rc"] = rc

    def _on_tk(self, tid: str, home: str) -> None:
        self._tk[tid] = TkRecords(home)

    def _on_tkcand(self, source: str, home: str) -> None:
        sources = self._tksrc.setdefault(home, [])
        if source not in sources:
            sources.append(source)

    def _tk_of(self, tid: str) -> TkRecords | None:
        return self._tk.get(tid)

    def _on_tkkv(self, tid: str, key: str, value: str) -> None:
        tk = self._tk_of(tid)
        if tk is not None:
            tk.kv[key] = value

    def _on_tkout(self, tid: str, line: str) -> None:
        tk = self._tk_of(tid)
        if tk is not None:
            tk.out.append(line)

    def _on_tkrc(self, tid: str, rc: str) -> None:
        tk = self._tk_of(tid)
        if tk is not None:
            tk.rc = record_int(rc)

    def _on_tkjson(self, tid: str, line: str) -> None:
        tk = self._tk_of(tid)
        if tk is not None:
            tk.json.append(line)

    def _on_tkfile(self, tid: str, line: str) -> None:
        tk = self._tk_of(tid)
        if tk is not None:
            tk.file.append(line)

    def _on_tkbin(self, tid: str, line: str) -> None:
        tk = self._tk_of(tid)
        if tk is not None:
            tk.bin.append(line)

    def _on_notrun(self, what: str, reason: str) -> None:
        self._notrun[what] = reason

    def _on_ldconf(self, path: str, line: str) -> None:
        self._ldconf.append((path, line.strip()))

    def _on_libcuda(self, path: str) -> None:
        self._libcuda.append(path)

    def _on_ctr(self, key: str, value: str) -> None:
        self._ctr.setdefault(key, []).append(value)

    def _on_fm(self, key: str, name: str, version: str) -> None:
        self._fm.append((key, name, version))

    def _on_ptxkv(self, path: str, key: str, value: str) -> None:
        self._ptxas.setdefault(path, PtxasRecords()).kv[key] = value

    def _on_ptxout(self, path: str, line: str) -> None:
        self._ptxas.setdefault(path, PtxasRecords()).out.append(line)

    def _on_ptxrc(self, path: str, rc: str) -> None:
        self._ptxas.setdefault(path, PtxasRecords()).rc = record_int(rc)

    def _on_ptxfile(self, path: str, line: str) -> None:
        self._ptxas.setdefault(path, PtxasRecords()).file.append(line)

    def _on_ptxbin(self, path: str, line: str) -> None:
        self._ptxas.setdefault(path, PtxasRecords()).bin.append(line)

    def _on_ldlib(self, cid: str, path: str, target: str) -> None:
        self._ctx_of(cid).ld_libs.setdefault(path, target)

    def _on_ldsrc(self, cid: str, path: str) -> None:
        src = self._ctx_of(cid).ld_src
        if path not in src:
            src.append(path)

    def _on_maplib(self, cid: str, path: str) -> None:
        self._ctx_of(cid).maps.append(path)

    def _on_ldcache(self, path: str, target: str) -> None:
        self._ldcache.setdefault(path, target)

    def _on_timeout(self, step: str) -> None:
        self._timeouts.append(step)

    def _on_cut(self, what: str, dropped: str, cap: str) -> None:
        note = f"{what}: {dropped} more bytes of output not kept (over its {cap}-byte cap)"
        self._cut.append(note)

    def _on_error(self, step: str, message: str) -> None:
        self._errors.append(f"{step}: {message}")

    # -- output -----------------------------------------------------------------------
    def facts(self) -> Facts:
        contexts = env_contexts(self._ctx, self._nvccdir)
        labels = {cid: c.label for cid, c in zip(self._ctx, contexts, strict=True)}
        jit = {cid: tuple(c.jit) for cid, c in self._ctx.items()}
        usr_local_cuda = None
        if self._ulc is not None and self._ulc[0] == "1":
            usr_local_cuda = norm_path(self._ulc[1])
        return Facts(
            host=self._host_info(),
            driver=self._driver(),
            gpus=self._gpus_with_mig(),
            gpu_load=(
                parse_gpu_load(self._smi.get("state", ())) if self._smirc.get("state") == 0 else ()
            ),
            gpu_processes=parse_gpu_processes(self._smi.get("table", ())),
            toolkits=tuple(toolkit(tk, self._tksrc.get(tk.home, ())) for tk in self._tk.values()),
            usr_local_cuda=usr_local_cuda,
            contexts=contexts,
            pythons=tuple(python_env(py, labels, jit) for py in self._py.values()),
            probe=self._meta(),
            mig_devices=self._mig_devices(),
            loader=LoaderInfo(ld_conf=tuple(self._ldconf), libcuda=tuple(self._libcuda)),
            container=ContainerInfo(
                markers=tuple(self._ctr["marker"]),
                devices=tuple(self._ctr["dev"]),
                driver_libs=tuple(self._ctr["lib"]),
                scope=container_scope(self._ctr["marker"]),
                runtime_env={
                    n: v for n, _, v in (e.partition("=") for e in self._ctr.get("env", ()))
                },
                allocated=tuple(self._ctr.get("alloc", ())),
            ),
            ptxas=tuple(ptxas(path, p) for path, p in self._ptxas.items()),
            ld_cache=tuple(LibFile(p, t if t != p else None) for p, t in self._ldcache.items()),
            changes=host_changes.build(
                self._chg, {c.pid: c.unit for c in contexts if c.pid is not None and c.unit}
            ),
            log_lines=tuple(self._log_lines),
            fabric=fabric_info(self._smi.get("fabric", ()), self._smirc.get("fabric"), self._fm),
        )

    def _host_info(self) -> HostInfo:
        h = self._host
        osr = parsers.parse_os_release("\n".join(self._osr))
        sudo = h.get("sudo")
        return HostInfo(
            hostname=h.get("hostname"),
            os_id=osr.get("ID"),
            os_version_id=osr.get("VERSION_ID"),
            os_pretty=osr.get("PRETTY_NAME"),
            kernel=h.get("kernel"),
            arch=h.get("arch"),
            user=h.get("user") or None,
            is_root=h.get("uid") == "0",
            sudo_nopasswd=None if sudo is None else sudo == "yes",
            shell=h.get("shell") or None,
            python3=h.get("python3"),
        )

    def _driver(self) -> DriverInfo:
        proc = parsers.parse_proc_driver_version("\n".join(self._drvproc))
        common = {
            "proc_version": proc.version if proc else None,
            "kernel_module": proc.kernel_module if proc else None,
        }
        if self._smipath is None:
            return DriverInfo(
                state="error", message="no nvidia-smi result (probe incomplete)", **common
            )
        if "nvidia-smi" in self._notrun:
            why = self._notrun["nvidia-smi"]
            return DriverInfo(state="not-run", message=f"nvidia-smi not run: {why}", **common)
        if self._smipath == "-":
            return DriverInfo(
                state="no-nvidia-smi" if proc else "no-driver",
                message="nvidia-smi not found on PATH",
                **common,
            )
        text = "\n".join(self._smi.get("table", []))
        rc = self._smirc.get("table")
        header = parsers.parse_smi_header(text)
        if rc == 0 and header is not None:
            return DriverInfo(
                state="ok",
                driver_version=header.driver_version,
                driver_cuda=header.driver_cuda,
                smi_exit=rc,
                **common,
            )
        if rc is None:
            return DriverInfo(state="error", message="nvidia-smi did not finish", **common)
        state = parsers.classify_smi_failure(text, rc)
        message = text.strip() or None
        if state == "timeout":
            message = "nvidia-smi did not answer before the step deadline"
        return DriverInfo(state=state, smi_exit=rc, message=message, **common)

    def _gpus(self) -> tuple[Gpu, ...]:
        """From --query-gpu; else -L (full names, UUIDs) plus table memory; else the table."""
        if self._smirc.get("query") == 0:
            gpus = parsers.parse_query_gpu("\n".join(self._smi.get("query", [])))
            if gpus:
                return gpus
        table = ()
        if self._smirc.get("table") == 0:
            table = parsers.parse_smi_table_gpus("\n".join(self._smi.get("table", [])))
        if self._smirc.get("list") == 0:
            memory = {g.index: g.memory_mib for g in table}
            listed = parsers.parse_smi_list("\n".join(self._smi.get("list", [])))
            if listed:
                return tuple(replace(g, memory_mib=memory.get(g.index)) for g in listed)
        return table

    def _gpus_with_mig(self) -> tuple[Gpu, ...]:
        modes = mig.parse_mig_modes("\n".join(self._smi.get("table", [])))
        return tuple(replace(g, mig_mode=modes.get(g.index)) for g in self._gpus())

    def _mig_devices(self) -> tuple[MigDevice, ...]:
        if self._smirc.get("list") != 0:
            return ()
        return mig.parse_mig_devices("\n".join(self._smi.get("list", [])))

    def _meta(self) -> ProbeMeta:
        version, root = self._begin if self._begin else ("", "")
        elapsed = record_int(self._end) if self._end else None
        return ProbeMeta(
            probe_version=version,
            root=root or None,
            duration_s=elapsed / 1000 if elapsed is not None else None,
            timed_out=tuple(self._timeouts),
            errors=tuple(self._errors),
            cut=tuple(self._cut),
            not_run=tuple(f"{what}: {why}" for what, why in self._notrun.items()),
            complete=self._end is not None,
        )


# record kind → (its number of fields, its FactBuilder._on_<kind> method)
_HANDLERS = {
    kind: (arity, getattr(FactBuilder, "_on_" + kind.replace("-", "_")))
    for kind, arity in ARITY.items()
}


def facts_from_output(text: str) -> Facts:
    """``Facts`` from a whole probe output (any noise lines are ignored)."""
    builder = FactBuilder()
    for line in text.splitlines():
        builder.feed(line)
    return builder.facts()
