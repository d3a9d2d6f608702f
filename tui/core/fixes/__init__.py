"""The fix engine: plans (data) → preview → confirmation → execution → re-probe → verdict → undo.

``build_plan`` turns a fix id and its parameters into a ``FixPlan`` for one host, without
touching the host. ``tui.core.fixes.executor.apply_plan`` runs it; ``tui.core.fixes.undo``
keeps what is needed to reverse it; ``tui.core.fixes.fleet`` applies one fix to many hosts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from tui.core.facts import Facts
from tui.core.findings import FIX_IDS
from tui.core.fixes.jitcache import clear_flashinfer_jit_cache
from tui.core.fixes.plan import FixError, FixPlan, Step
from tui.core.fixes.toolkit import (
    install_cuda_toolkit_apt,
    install_cuda_toolkit_pip,
    use_installed_toolkit,
)
from tui.core.fixes.workarounds import sampling_backend_fallback, set_flashinfer_arch_list
from tui.core.hosts import Host

Builder = Callable[[Facts, Host, Mapping[str, str], "str | None", str], FixPlan]

BUILDERS: Mapping[str, Builder] = {
    "use-installed-toolkit": use_installed_toolkit,
    "install-cuda-toolkit-pip": install_cuda_toolkit_pip,
    "install-cuda-toolkit-apt": install_cuda_toolkit_apt,
    "set-flashinfer-arch-list": set_flashinfer_arch_list,
    "sampling-backend-fallback": sampling_backend_fallback,
    "clear-flashinfer-jit-cache": clear_flashinfer_jit_cache,
}
assert tuple(BUILDERS) == FIX_IDS

PARAMS: Mapping[str, tuple[str, ...]] = {  # the NAME=VALUE parameters each fix accepts
    "use-installed-toolkit": ("path",),
    "install-cuda-toolkit-pip": ("version",),
    "install-cuda-toolkit-apt": (),
    "set-flashinfer-arch-list": ("value",),
    "sampling-backend-fallback": ("engine",),
    "clear-flashinfer-jit-cache": (),
}


def make_stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime())


def build_plan(
    facts: Facts,
    host: Host,
    fix_id: str,
    params: Mapping[str, str],
    python: str | None = None,
    *,
    stamp: str | None = None,
) -> FixPlan:
    """Plan ``fix_id`` for ``host`` from its probed facts; raises ``FixError`` when it cannot."""
    builder = BUILDERS.get(fix_id)
    if builder is None:
        raise FixError(f"unknown fix {fix_id!r}; known fixes: {', '.join(FIX_IDS)}")
    unknown = sorted(set(params) - set(PARAMS[fix_id]))
    if unknown:
        allowed = ", ".join(PARAMS[fix_id]) or "none"
        raise FixError(f"{fix_id} does not take {', '.join(unknown)} (parameters: {allowed})")
    return builder(facts, host, params, python, stamp or make_stamp())


__all__ = ["BUILDERS", "PARAMS", "FixError", "FixPlan", "Step", "build_plan", "make_stamp"]
