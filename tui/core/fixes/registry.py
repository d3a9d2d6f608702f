"""The fix registry: every fix record, one line each, in the order CONTRACT.md lists them.

A new fix is a ``FIX = Fix(...)`` in its module (``tui.core.fixes.record``) and one line below.
``build_plan``, the ``fix`` command's list of ids and the what-if (``tui.core.judge.whatif``: which
parameters to try, how to simulate, the least-invasive-first order, the titles) read ``FIXES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from tui.core.fixes import (
    compatpath,
    extension,
    flashinfer_upgrade,
    jitcache,
    libpath,
    mig,
    toolkit,
    torchcuda,
    triton,
    wheels,
    workarounds,
)
from tui.core.fixes.record import Fix

FIXES: tuple[Fix, ...] = (
    toolkit.USE_INSTALLED,
    toolkit.INSTALL_PIP,
    toolkit.INSTALL_APT,
    workarounds.ARCH_LIST,
    workarounds.SAMPLING_FALLBACK,
    jitcache.FIX,
    extension.FIX,
    torchcuda.FIX,
    compatpath.FIX,
    triton.FIX,
    libpath.FIX,
    wheels.FIX,
    mig.FIX,
    flashinfer_upgrade.FIX,
)
BY_ID: Mapping[str, Fix] = MappingProxyType({f.id: f for f in FIXES})
if len(BY_ID) != len(FIXES) or len({f.order for f in FIXES}) != len(FIXES):
    raise RuntimeError("two fix records share an id or a place in the order")
FIX_IDS: tuple[str, ...] = tuple(BY_ID)
