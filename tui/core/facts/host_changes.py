"""What a host records about its own changes: facts for "the change that did it".

The probe's ``probe_changes`` (``probes/probe.sh``) and ``report_install`` (``pyfacts.py``)
send, as records of their own kinds (``chg``, ``pyinst``; probes/README.md): the tails of the
package logs (apt's ``history.log`` and ``dpkg.log``, dnf's ``dnf.rpm.log``; CUDA/NVIDIA lines
of dpkg and rpm), when the kernel module was loaded, the JIT cache dirs' times, the serving
processes' start times and the units' restart counts, and per distribution its ``INSTALLER``
and dist-info time. ``build`` turns them into ``HostChanges``; ``tui.core.records.history_causes``
attaches them to the changes a diff finds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

CUDA_PACKAGE = re.compile(r"nvidia|cuda|cudnn|nccl|tensorrt", re.I)
# apt history.log "name:arch (versions)" entries of an Install:/Upgrade:/Remove: line
_APT_ENTRY = re.compile(r"([^\s,()]+) \(([^)]*)\)")
# dpkg.log "2026-12-01 03:12:45 upgrade libnvidia-compute-580:amd64 580.95.05-0 580.105.08-0"
_DPKG = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (install|upgrade|remove|purge) (\S+) (\S+)(?: (\S+))?"
)
# dnf.rpm.log "2026-12-01T03:12:45+0000 SUBDEBUG Upgrade: cuda-toolkit-12-8-12.8.93-1.x86_64"
_RPM = re.compile(
    r"^(\S+) \S+ (Upgrade|Upgraded|Downgrade|Downgraded|Install|Installed|Erase|Obsoleted): (\S+)"
)
_RPM_NEVRA = re.compile(r"^(.+)-([^-]+-[^-]+?)(?:\.(?:x86_64|aarch64|noarch|i686|ppc64le|s390x))?$")
_RPM_ACTION = {"Upgrade": "upgrade", "Downgrade": "downgrade", "Install": "install"}
_RPM_ACTION |= {"Installed": "install", "Erase": "remove", "Obsoleted": "remove"}
_RPM_ACTION |= {"Upgraded": "replaced", "Downgraded": "replaced"}


@dataclass(frozen=True)
class DistInstall:
    """Who installed a distribution and about when (its dist-info dir's mtime)."""

    name: str
    version: str | None = None
    installer: str | None = None  # dist-info INSTALLER: "pip", "uv", "conda"…
    mtime: int | None = None  # epoch seconds


@dataclass(frozen=True)
class PackageEvent:
    """One package install, upgrade or removal a package manager logged."""

    source: str  # "apt history.log", "dpkg.log", "dnf.rpm.log"
    at: str | None  # as logged (the host's local time)
    action: str  # install, upgrade, remove, purge
    package: str  # without the :arch
    before: str | None = None
    after: str | None = None
    by: str | None = None  # apt: the Commandline / Requested-By of the run


@dataclass(frozen=True)
class PathTime:
    path: str
    mtime: int  # epoch seconds


@dataclass(frozen=True)
class ProcessStart:
    """When a serving process started (``/proc/PID/stat`` + boot time) and, for its unit,
    what systemd says (``systemctl show``, on the host itself only)."""

    pid: int
    unit: str | None = None
    started_at: int | None = None  # epoch seconds
    restarts: int | None = None  # NRestarts
    active_since: str | None = None  # ActiveEnterTimestamp, as systemd writes it


@dataclass(frozen=True)
class HostChanges:
    packages: tuple[PackageEvent, ...] = ()
    module_loaded_at: int | None = None  # /sys/module/nvidia's time: when it was loaded
    jit_cache: tuple[PathTime, ...] = ()
    starts: tuple[ProcessStart, ...] = ()


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def apt_events(lines: Sequence[str], wanted: re.Pattern[str] = CUDA_PACKAGE) -> list[PackageEvent]:
    out: list[PackageEvent] = []
    at = by = None
    for line in lines:
        key, _, value = line.partition(": ")
        value = value.strip()
        if key == "Start-Date":
            at, by = " ".join(value.split()), None
        elif key in ("Commandline", "Requested-By"):
            by = value if key == "Commandline" or by is None else f"{by} ({value})"
        elif key in ("Install", "Upgrade", "Remove", "Purge"):
            for name, versions in _APT_ENTRY.findall(value):
                package = name.split(":")[0]
                if not wanted.search(package):
                    continue
                parts = [v.strip() for v in versions.split(",") if v.strip() != "automatic"]
                before = after = None
                if key == "Upgrade" and len(parts) >= 2:
                    before, after = parts[0], parts[1]
                elif key == "Install" and parts:
                    after = parts[0]
                elif parts:
                    before = parts[0]
                out.append(
                    PackageEvent("apt history.log", at, key.lower(), package, before, after, by)
                )
    return out


def dpkg_events(lines: Iterable[str], wanted: re.Pattern[str] = CUDA_PACKAGE) -> list[PackageEvent]:
    out = []
    for line in lines:
        m = _DPKG.match(line)
        if m is None or not wanted.search(m.group(3)):
            continue
        at, action, name, first, second = m.groups()
        before = None if first == "<none>" else first
        after = None if second in (None, "<none>") else second
        if action == "install" and second is None:
            before, after = None, first
        out.append(PackageEvent("dpkg.log", at, action, name.split(":")[0], before, after))
    return out


def rpm_events(lines: Iterable[str], wanted: re.Pattern[str] = CUDA_PACKAGE) -> list[PackageEvent]:
    out: list[PackageEvent] = []
    for line in lines:
        m = _RPM.match(line)
        if m is None:
            continue
        at, word, nevra = m.groups()
        parts = _RPM_NEVRA.match(nevra)
        name, version = (parts.group(1), parts.group(2)) if parts else (nevra, None)
        if not wanted.search(name):
            continue
        action = _RPM_ACTION[word]
        if action == "replaced":  # the old version of the Upgrade/Downgrade just before it
            if out and out[-1].package == name and out[-1].before is None:
                last = out[-1]
                out[-1] = PackageEvent(last.source, last.at, last.action, name, version, last.after)
            continue
        before, after = (version, None) if action == "remove" else (None, version)
        out.append(PackageEvent("dnf.rpm.log", at, action, name, before, after))
    return out


def build(records: Sequence[tuple[str, str, str]], pid_units: Mapping[int, str]) -> HostChanges:
    """``HostChanges`` from the probe's ``chg`` records (what, key, value), given the unit of
    each serving process."""
    lines: dict[str, list[str]] = {"apt": [], "dpkg": [], "rpm": []}
    module = None
    jit: list[PathTime] = []
    started: dict[int, int | None] = {}
    units: dict[str, dict[str, str]] = {}
    for what, key, value in records:
        if what in lines:
            lines[what].append(value)
        elif what == "module":
            module = _int(value)
        elif what == "jit" and _int(value) is not None and key not in {j.path for j in jit}:
            jit.append(PathTime(key, int(value)))
        elif what == "start" and _int(key) is not None:
            started[int(key)] = _int(value)
        elif what == "unit":
            name, _, text = value.partition("=")
            units.setdefault(key, {})[name] = text
    starts = []
    for pid, at in started.items():
        unit = pid_units.get(pid)
        shown = units.get(unit or "", {})
        starts.append(
            ProcessStart(
                pid,
                unit,
                at,
                _int(shown.get("NRestarts", "")),
                shown.get("ActiveEnterTimestamp") or None,
            )
        )
    return HostChanges(
        packages=tuple(
            apt_events(lines["apt"]) + dpkg_events(lines["dpkg"]) + rpm_events(lines["rpm"])
        ),
        module_loaded_at=module,
        jit_cache=tuple(jit),
        starts=tuple(starts),
    )


def installs(
    dists: Mapping[str, str],
    packages_of: Mapping[str, tuple[str, str]],
    inst: Mapping[str, tuple[str, str]],
) -> tuple[DistInstall, ...]:
    """Per distribution (``k`` → its (name, version) and its ``pyinst`` (installer, mtime))."""
    out = []
    for k in dists:
        if k not in inst or k not in packages_of:
            continue
        name, version = packages_of[k]
        installer, mtime = inst[k]
        out.append(DistInstall(name, version, installer or None, _int(mtime)))
    return tuple(out)
