"""What changed between two snapshots (two probes of one host, or two hosts), in the words
that matter for CUDA.

A snapshot's *aspects* are read from its stored facts JSON and FlashInfer replays: the driver
and its highest CUDA, the kernel module against the user-space driver, the GPUs and MIG, per
interpreter torch / FlashInfer / Triton and torch's CUDA, the nvcc on PATH, ``CUDA_HOME``, the
toolkit FlashInfer's JIT resolves and the archs it targets, the JIT cache, the serving unit's
environment (as its unit files set it, and as the running process has it) and the CUDA
libraries it loaded. ``changes(a, b)`` compares them; ``ASPECT_ORDER`` is the order they are
told in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tui.core.records.history import Snapshot

# fact → words for a sentence; the order changes are listed in
ASPECT_ORDER: tuple[str, ...] = (
    "driver",
    "driver CUDA",
    "kernel module",
    "driver state",
    "GPUs",
    "MIG",
    "torch",
    "torch CUDA",
    "FlashInfer",
    "Triton",
    "interpreter",
    "toolkits installed",
    "nvcc on PATH",
    "CUDA_HOME",
    "JIT toolkit",
    "JIT archs",
    "JIT cache",
    "unit environment",
    "process environment",
    "loaded CUDA libraries",
)
_RANK = {name: i for i, name in enumerate(ASPECT_ORDER)}
PY_ASPECTS = ("torch", "torch CUDA", "FlashInfer", "Triton", "interpreter", "JIT toolkit")
PY_ASPECTS += ("JIT archs", "JIT cache")
AspectKey = tuple[str, str | None, str | None]  # (fact, python, detail: unit/variable)


@dataclass(frozen=True)
class Change:
    fact: str
    python: str | None
    before: str | None
    after: str | None
    detail: str | None = None  # the unit and variable of an environment change

    @property
    def words(self) -> str:
        """``torch 2.9.1+cu130 → 2.10.0+cu130`` (``—`` for absent)."""
        name = f"{self.fact} {self.detail}" if self.detail else self.fact
        return f"{name} {self.before or '—'} → {self.after or '—'}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fact": self.fact,
            "python": self.python,
            "before": self.before,
            "after": self.after,
            "words": self.words,
        }
        if self.detail:
            out["detail"] = self.detail
        return out


def _gpus(facts: Mapping[str, Any]) -> str | None:
    counts: dict[str, int] = {}
    for g in facts.get("gpus") or ():
        label = f"{g.get('name')} (SM {g.get('compute_cap') or '?'})"
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{n}× {label}" for label, n in counts.items()) or None


def _mig(facts: Mapping[str, Any]) -> str | None:
    modes = [g.get("mig_mode") for g in facts.get("gpus") or ()]
    enabled = [
        str(g.get("index")) for g in facts.get("gpus") or () if g.get("mig_mode") == "Enabled"
    ]
    if not enabled:
        return "off" if any(modes) else None
    devices = len(facts.get("mig_devices") or ())
    return f"on for GPU {','.join(enabled)}, {devices} instance(s)"


def _nvcc(facts: Mapping[str, Any]) -> str | None:
    ssh = _ssh_context(facts)
    if ssh is None or not ssh.get("which_nvcc"):
        return "none" if ssh is not None else None
    first = ssh["which_nvcc"][0]
    for tk in facts.get("toolkits") or ():
        if first in (tk.get("nvcc"), tk.get("wrapper_of")):
            return f"{tk.get('version') or '?'} ({first})"
    return first


def _ssh_context(facts: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ctx in facts.get("contexts") or ():
        if ctx.get("kind") == "ssh":
            return ctx
    return None


def _process_name(ctx: Mapping[str, Any]) -> str:
    if ctx.get("unit"):
        return str(ctx["unit"])
    label = str(ctx.get("label") or "")
    words = label.split()
    return " ".join(words[2:]) if len(words) > 2 and words[0] == "pid" else label


def _driver(facts: Mapping[str, Any], out: dict[AspectKey, str | None]) -> None:
    d = facts.get("driver") or {}
    out["driver", None, None] = d.get("driver_version") or d.get("smi_version")
    out["driver CUDA", None, None] = d.get("driver_cuda") or d.get("cuda_version")
    out["kernel module", None, None] = d.get("proc_version")
    state = d.get("state")
    out["driver state", None, None] = (
        None if state in (None, "ok") else f"{state}: {d.get('message') or ''}".rstrip(": ")
    )


def _pythons(
    facts: Mapping[str, Any], replays: Sequence[Mapping[str, Any]], out: dict[AspectKey, str | None]
) -> None:
    by_py = {r.get("python"): r for r in replays}
    for py in facts.get("pythons") or ():
        path = py.get("path")
        if not py.get("exists", True):
            out["interpreter", path, None] = "missing"
            continue
        out["interpreter", path, None] = "present"
        out["torch", path, None] = py.get("torch_version")
        out["torch CUDA", path, None] = py.get("torch_cuda")
        out["FlashInfer", path, None] = py.get("flashinfer_version")
        out["Triton", path, None] = (py.get("packages") or {}).get("triton")
        if py.get("flashinfer_version"):
            dirs = py.get("jit_cache_dirs") or ()
            out["JIT cache", path, None] = ", ".join(sorted(dirs)) or "empty"
        replay = by_py.get(path)
        if replay is not None:
            home = replay.get("cuda_home")
            cuda = replay.get("cuda_version")
            out["JIT toolkit", path, None] = (
                f"{cuda or '?'} at {home}" if home else (f"{cuda} (from torch)" if cuda else "none")
            )
            out["JIT archs", path, None] = (
                ", ".join(replay.get("target_cuda_archs") or ()) or "none"
            )


def _environments(facts: Mapping[str, Any], out: dict[AspectKey, str | None]) -> None:
    for ctx in facts.get("contexts") or ():
        kind = ctx.get("kind")
        if kind == "unit":
            fact, name = "unit environment", str(ctx.get("unit") or ctx.get("label"))
        elif kind == "process":
            fact, name = "process environment", _process_name(ctx)
        else:
            continue
        for var, value in (ctx.get("vars") or {}).items():
            if var in ("HOME", "USER", "LANG"):
                continue
            out[fact, None, f"{name} {var}"] = value
        if kind == "process":
            libs = sorted(set(ctx.get("mapped_libs") or ()))
            if libs:
                out["loaded CUDA libraries", None, name] = ", ".join(libs)


def aspects(snap: Snapshot) -> dict[AspectKey, str | None]:
    """Every aspect of a snapshot that a change of matters for; None: absent."""
    facts = snap.facts
    if facts is None:
        return {}
    out: dict[AspectKey, str | None] = {}
    _driver(facts, out)
    out["GPUs", None, None] = _gpus(facts)
    out["MIG", None, None] = _mig(facts)
    toolkits = sorted(
        {f"{t.get('version') or '?'} at {t.get('home')}" for t in facts.get("toolkits") or ()}
    )
    out["toolkits installed", None, None] = ", ".join(toolkits) or "none"
    out["nvcc on PATH", None, None] = _nvcc(facts)
    ssh = _ssh_context(facts)
    if ssh is not None:
        out["CUDA_HOME", None, None] = (ssh.get("vars") or {}).get("CUDA_HOME")
    _pythons(facts, snap.flashinfer, out)
    _environments(facts, out)
    return out


def _aligned(before: Snapshot, after: Snapshot) -> Mapping[str | None, str | None]:
    """For two hosts: after's interpreter → before's, by path, else by their order (the
    first to the first), so ``/opt/venv`` and ``/root/venv`` are compared."""
    paths_a = [p.get("path") for p in (before.facts or {}).get("pythons") or ()]
    paths_b = [p.get("path") for p in (after.facts or {}).get("pythons") or ()]
    mapping: dict[str | None, str | None] = {p: p for p in paths_b if p in paths_a}
    rest_a = [p for p in paths_a if p not in mapping]
    for p in paths_b:
        if p not in mapping and rest_a:
            mapping[p] = rest_a.pop(0)
    return mapping


def changes(before: Snapshot, after: Snapshot, *, hosts: bool = False) -> list[Change]:
    """The aspects that differ, in ``ASPECT_ORDER``. With ``hosts`` (two hosts), interpreters
    at different paths are compared in order and reported under the later one's path."""
    a, b = aspects(before), aspects(after)
    if hosts:
        align = _aligned(before, after)
        back = {v: k for k, v in align.items()}
        a = {(f, back.get(p, p) if p is not None else None, d): v for (f, p, d), v in a.items()}
    out = []
    for key in sorted(set(a) | set(b), key=_sort_key):
        fact, python, detail = key
        old, new = a.get(key), b.get(key)
        if old != new:
            out.append(Change(fact, python, old, new, detail))
    return out


def _sort_key(key: AspectKey) -> tuple[int, str, str]:
    fact, python, detail = key
    return (_RANK.get(fact, len(_RANK)), python or "", detail or "")


def finding_changes(before: Snapshot, after: Snapshot) -> dict[str, list[str]]:
    """``{"appeared": [ids], "gone": [ids]}``."""
    a, b = set(before.finding_ids), set(after.finding_ids)
    return {"appeared": sorted(b - a), "gone": sorted(a - b)}


def words(items: Iterable[Change]) -> list[str]:
    return [c.words for c in items]
