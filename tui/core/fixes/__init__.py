"""The fix engine: plans (data) → preview → confirmation → execution → re-probe → verdict → undo.

``build_plan`` turns a fix id and its parameters into a ``FixPlan`` for one host, without
touching the host. ``tui.core.fixes.executor.apply_plan`` runs it; ``tui.core.fixes.undo``
keeps what is needed to reverse it; ``tui.core.fixes.fleet`` applies one fix to many hosts.

How a plan is written
- Every step is exact POSIX sh with every argument ``shlex.quote``d. Host paths are rendered
  under the host's root prefix (``Host.root``: fake hosts, mounted images) when the plan is
  built, so the preview is exactly what runs and nothing depends on variables crossing
  ``sudo``. Root steps of a non-root login run as ``sudo -n sh -c '…'`` (never a prompt).
- Steps are idempotent: whole files detective-tui owns (systemd drop-ins
  ``50-detective-tui-*.conf``) are compared before writing; edits of other files are
  marker-delimited blocks (``# >>> detective-tui NAME >>>``); installs are guarded by the
  file they produce. A step prints ``@@dt changed …`` or ``@@dt unchanged …``; only changed
  steps are recorded for undo. Backups are ``<file>.detective-tui-<stamp>.bak``; the JIT
  cache is renamed ``….moved-<stamp>``, never deleted.
- The environment a fix changes is where the program runs: a drop-in per systemd unit that
  runs the interpreter (restart is a separate, confirmed plan), plus the venv's ``activate``
  (or the login profile when there is no venv) for interactive use.

How it is verified (``executor``): the host is re-probed and diagnosed as the fixed
environments will see it — each changed unit as it will start next time (its unit files and
drop-ins), the venv as ``activate`` leaves it — and the live process is reported as
"restart pending" while it still runs with the old environment.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from tui.core.facts import Facts
from tui.core.findings import FIX_IDS
from tui.core.fixes.compatpath import drop_cuda_compat_path
from tui.core.fixes.extension import match_extension_to_torch
from tui.core.fixes.jitcache import clear_flashinfer_jit_cache
from tui.core.fixes.libpath import drop_shadowing_library_path
from tui.core.fixes.plan import FixError, FixPlan, Step
from tui.core.fixes.toolkit import (
    install_cuda_toolkit_apt,
    install_cuda_toolkit_pip,
    use_installed_toolkit,
)
from tui.core.fixes.torchcuda import install_cuda_torch
from tui.core.fixes.triton import use_toolkit_ptxas_for_triton
from tui.core.fixes.wheels import align_cuda_wheels
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
    "match-extension-to-torch": match_extension_to_torch,
    "install-cuda-torch": install_cuda_torch,
    "drop-cuda-compat-path": drop_cuda_compat_path,
    "use-toolkit-ptxas-for-triton": use_toolkit_ptxas_for_triton,
    "drop-shadowing-library-path": drop_shadowing_library_path,
    "align-cuda-wheels": align_cuda_wheels,
}
assert tuple(BUILDERS) == FIX_IDS

PARAMS: Mapping[str, tuple[str, ...]] = {  # the NAME=VALUE parameters each fix accepts
    "use-installed-toolkit": ("path",),
    "install-cuda-toolkit-pip": ("version",),
    "install-cuda-toolkit-apt": (),
    "set-flashinfer-arch-list": ("value",),
    "sampling-backend-fallback": ("engine",),
    "clear-flashinfer-jit-cache": (),
    "match-extension-to-torch": ("package", "torch"),
    "install-cuda-torch": ("cuda",),
    "drop-cuda-compat-path": (),
    "use-toolkit-ptxas-for-triton": ("path",),
    "drop-shadowing-library-path": ("entry",),
    "align-cuda-wheels": ("version",),
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
