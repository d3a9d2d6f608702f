"""The records of a probe's environment contexts (the SSH session, the login shell, each
serving process and unit) → ``EnvContext``s."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from tui.core.facts import EnvContext, LibFile, parsers
from tui.core.facts.probe_records import record_int, unescape_arg
from tui.core.redact import MASK, is_secret_name

# variables kept in EnvContext.vars (the probe sends only these; replayed contexts are filtered)
WANTED_VARS = re.compile(
    r"^(CUDA_HOME|CUDA_PATH|PATH|LD_LIBRARY_PATH|FLASHINFER_\w+|TORCH_CUDA_ARCH_LIST"
    r"|CUDA_VISIBLE_DEVICES|CUDA_DEVICE_ORDER|NVIDIA_VISIBLE_DEVICES|VLLM_\w+|SGLANG_\w+|HOME|USER"
    r"|VIRTUAL_ENV|CONDA_PREFIX|TRITON_PTXAS[\w-]*|PYTORCH_NVML_BASED_CUDA_CHECK|MAX_JOBS)$"
)
SYSTEMD_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _keep_vars(env: Mapping[str, str]) -> dict[str, str]:
    return {k: (MASK if is_secret_name(k) else v) for k, v in env.items() if WANTED_VARS.match(k)}


@dataclass
class CtxRecords:
    """One context's records, as they arrive."""

    kind: str
    label: str
    kv: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    which: list[str] = field(default_factory=list)
    profile: list[str] = field(default_factory=list)
    unitenv: list[str] = field(default_factory=list)
    unitenvfile: list[str] = field(default_factory=list)
    unitenvpath: list[str] = field(default_factory=list)
    jit: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    ld_libs: dict[str, str] = field(default_factory=dict)
    ld_src: list[str] = field(default_factory=list)
    maps: list[str] = field(default_factory=list)


def _known_nvcc_dirs(
    records: Mapping[str, CtxRecords], nvcc_dirs: Mapping[str, bool]
) -> dict[str, bool]:
    known = dict(nvcc_dirs)
    for c in records.values():
        for path in c.which:
            known[posixpath.dirname(path)] = True
    return known


def _which_for(path_value: str, known: Mapping[str, bool]) -> tuple[str, ...]:
    out: list[str] = []
    for d in path_value.split(":"):
        if d.startswith("/") and known.get(d) and posixpath.join(d, "nvcc") not in out:
            out.append(posixpath.join(d, "nvcc"))
    return tuple(out)


def env_contexts(
    records: Mapping[str, CtxRecords], nvcc_dirs: Mapping[str, bool]
) -> tuple[EnvContext, ...]:
    """The contexts' records (``ctx``, ``env``, ``which``, ``unitenv``, ``ld*``, ``arg`` …) as
    ``EnvContext``s; ``nvcc_dirs``: the ``nvccdir`` records (directory → holds an nvcc)."""
    ssh_env = next((c.env for c in records.values() if c.kind in ("ssh", "current")), {})
    known = _known_nvcc_dirs(records, nvcc_dirs)
    out: list[EnvContext] = []
    for c in records.values():
        which = tuple(c.which)
        env = dict(c.env)
        if c.kind == "login" and c.kv.get("replay") == "1":
            env = _keep_vars(parsers.apply_shell_assignments(c.profile, ssh_env))
            which = _which_for(env.get("PATH", ""), known)
        elif c.kind == "unit":
            base = {"PATH": SYSTEMD_DEFAULT_PATH}
            env = _keep_vars(
                {**base, **parsers.parse_systemd_environment(c.unitenv, c.unitenvfile)}
            )
            which = _which_for(env["PATH"], known)
        kind = c.kind if c.kind in ("ssh", "login", "process", "unit", "current") else "process"
        argv, argv_note = _argv(c)
        out.append(
            EnvContext(
                kind=kind,  # type: ignore[arg-type]
                label=c.label,
                vars=env,
                which_nvcc=which,
                usr_local_cuda_exists=c.kv.get("usr_local_cuda_exists") == "1",
                pid=record_int(c.kv.get("pid")),
                exe=c.kv.get("exe") or None,
                cmdline=" ".join(argv) if argv is not None else c.kv.get("cmdline"),
                unit=c.kv.get("unit"),
                environ_readable=c.kv.get("environ_readable", "1") == "1",
                env_files=parsers.environment_file_paths(c.unitenvpath),
                argv=argv,
                argv_note=argv_note,
                ld_libs=tuple(LibFile(p, t if t != p else None) for p, t in c.ld_libs.items()),
                mapped_libs=tuple(dict.fromkeys(c.maps)),
                ld_path_files=tuple(c.ld_src),
                container=c.kv.get("container"),
            )
        )
    return tuple(out)


def _argv(c: CtxRecords) -> tuple[tuple[str, ...] | None, str | None]:
    """``argv`` and ``argv_note`` of a context from its ``arg`` records (none: not known)."""
    if "argv_over" in c.kv:
        over = c.kv["argv_over"]
        return None, f"its command line is longer than {over} bytes, so the probe kept no arguments"
    count = record_int(c.kv.get("argc"))
    if count is None:
        return None, ("the probe's output ended within its arguments" if c.args else None)
    if count != len(c.args):
        return None, f"the probe announced {count} arguments but sent {len(c.args)}"
    args = []
    for i, text in enumerate(c.args):
        try:
            args.append(unescape_arg(text))
        except ValueError as e:
            return None, f"argv[{i}] ({text}) cannot be carried exactly: {e}"
    return tuple(args), None
