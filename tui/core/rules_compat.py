"""``cuda-compat-shadows-driver``: CUDA forward-compatibility libraries load ahead of the
driver's ``libcuda`` where they cannot work.

The ``cuda-compat-<major>-<minor>`` package (``/usr/local/cuda-X.Y/compat``) ships a newer
``libcuda.so`` for an older kernel driver. Forward compatibility "is applicable only for
systems with NVIDIA Data Center GPUs, select NGC Server Ready SKUs of RTX cards, Jetson
boards" (NVIDIA, CUDA Compatibility: Forward Compatibility). The loader takes the first
``libcuda.so.1`` it finds — ``LD_LIBRARY_PATH`` first, then the directories of
``/etc/ld.so.conf`` and ``ld.so.conf.d/*.conf`` in file-name order (an image's
``00-compat.conf`` sorts before ``x86_64-linux-gnu.conf``, where the runtime puts the host's
``libcuda``). A compat ``libcuda`` older than the kernel module gives error 803
(cudaErrorSystemDriverMismatch, "system has unsupported display driver / cuda driver
combination"); a newer one on a GPU forward compatibility does not support gives 804
(cudaErrorCompatNotSupportedOnDevice).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from tui.core.facts import EnvContext, Facts
from tui.core.findings import Finding
from tui.core.rulekit import finding

if TYPE_CHECKING:
    from tui.core.subject import Subject

FINDING = "cuda-compat-shadows-driver"
LIBCUDA = re.compile(r"libcuda\.so\.(\d+\.\d+(?:\.\d+)?)$")
# consumer and workstation boards: not "Data Center GPUs" or "NGC Server Ready" RTX SKUs
NO_FORWARD_COMPAT = ("GeForce", "TITAN", "Workstation", "Max-Q", "Laptop", "Quadro")


@dataclass(frozen=True)
class CompatLoad:
    directory: str
    version: str
    via: str  # "LD_LIBRARY_PATH" or the ld.so.conf.d file naming the directory


def is_compat_dir(directory: str) -> bool:
    return any("compat" in part for part in directory.split("/"))


def without_compat(ld_library_path: str) -> str:
    """``LD_LIBRARY_PATH`` with its compat directories removed."""
    return ":".join(d for d in ld_library_path.split(":") if d and not is_compat_dir(d))


def _versions(facts: Facts) -> dict[str, str]:
    """{directory: libcuda version} of the libcuda builds the probe found."""
    out = {}
    for path in facts.loader.libcuda:
        m = LIBCUDA.search(path)
        if m:
            out.setdefault(posixpath.dirname(path), m.group(1))
    return out


def search_order(facts: Facts, ctx: EnvContext | None) -> list[tuple[str, str]]:
    """(directory, how it is searched) in the loader's order, for ``ctx``'s environment."""
    order = []
    for d in ((ctx.vars.get("LD_LIBRARY_PATH") if ctx else None) or "").split(":"):
        if d.startswith("/"):
            order.append((d.rstrip("/"), "LD_LIBRARY_PATH"))
    confs = sorted(facts.loader.ld_conf, key=lambda fc: (fc[0] != "/etc/ld.so.conf", fc[0]))
    order += [(d.rstrip("/"), f) for f, d in confs if d.startswith("/")]
    return order


def first_compat(facts: Facts, ctx: EnvContext | None) -> CompatLoad | None:
    """The libcuda the loader takes, when it is a compat build."""
    versions = _versions(facts)
    for directory, via in search_order(facts, ctx):
        if directory in versions:
            if not is_compat_dir(directory):
                return None
            return CompatLoad(directory, versions[directory], via)
    return None


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def rule_compat_shadows(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    kernel = facts.driver.proc_version or facts.driver.driver_version
    have = _version(kernel)
    if have is None:
        return
    seen: set[tuple[str, str]] = set()
    for s in subs:
        load = first_compat(facts, s.context)
        if load is None or (load.directory, load.via) in seen:
            continue
        seen.add((load.directory, load.via))
        compat = _version(load.version)
        if compat is None or compat == have:
            continue
        unsupported = [g for g in facts.gpus if any(w in g.name for w in NO_FORWARD_COMPAT)]
        if compat > have and not unsupported:
            continue  # forward compatibility as designed: a newer libcuda on a data-center GPU
        if compat < have:
            code = (
                f"the compat libcuda {load.version} is older than the kernel module {kernel}: "
                "CUDA initialisation fails with error 803 ('system has unsupported display "
                "driver / cuda driver combination'; torch: 'Unexpected error from "
                "cudaGetDeviceCount() … Error 803')"
            )
        else:
            names = ", ".join(sorted({g.name for g in unsupported}))
            code = (
                f"the compat libcuda {load.version} is newer than the kernel module {kernel}, "
                f"but forward compatibility does not support {names} (only data-center GPUs, "
                "select NGC Server Ready RTX SKUs and Jetson): error 804 ('forward "
                "compatibility was attempted on non supported HW')"
            )
        how = (
            f"LD_LIBRARY_PATH of the {s.context.label} environment lists {load.directory}"
            if load.via == "LD_LIBRARY_PATH" and s.context
            else f"{load.via} puts {load.directory} in the loader's cache ahead of the driver's "
            "libraries"
        )
        yield finding(
            FINDING,
            "critical",
            f"CUDA compat libcuda {load.version} loads instead of driver {kernel}'s",
            f"{how}, so processes load the CUDA forward-compatibility libcuda from there instead "
            f"of the one installed with the driver: {code}. Forward compatibility is for running "
            "a newer CUDA on an older data-center driver; here it is not needed or cannot work. "
            "Stop loading the compat directory (drop-cuda-compat-path).",
            [
                f"{load.directory}/libcuda.so.{load.version} ({load.via})",
                f"kernel module {kernel}",
                *(f"GPU{g.index} {g.name}" for g in unsupported[:2]),
            ],
            s,
        )
