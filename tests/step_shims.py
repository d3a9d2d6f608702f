"""Step shims for fault tests: a fake host's ``systemctl`` that fails or holds on one call.

The fake host's own ``usr/bin/systemctl`` (tui.demo.fakehost) moves to ``systemctl.real``; the
wrapper counts its calls and, on the chosen call, either exits 1 as a broken systemd does, or
writes ``<dir>/reached`` and waits (bounded) until ``<dir>/release`` exists, then runs the
real one. Tests synchronise on those files, never on sleeps.
"""

from __future__ import annotations

import asyncio
import hashlib
import shlex
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from tui.core.hosts import Host
from tui.core.reach import inventory
from tui.demo import fakehost
from tui.demo.fakehost import SYSTEMCTL_LOG

HOLD_LIMIT_S = 120  # the shim gives up waiting for release after this (a stuck test fails)

WRAPPER = """#!/bin/sh
# detective-tui test shim around the fake host's systemctl
d=@DIR@
n=$(( $(cat "$d/calls" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$d/calls"
if [ "$n" = @CALL@ ]; then
  case @MODE@ in
    fail)
      echo "Failed to reload daemon: Transport endpoint is not connected" >&2
      exit 1 ;;
    hold)
      echo "$$" > "$d/reached.tmp" && mv "$d/reached.tmp" "$d/reached"
      i=0
      while [ ! -e "$d/release" ] && [ "$i" -lt @LIMIT@ ]; do sleep 0.05; i=$((i + 1)); done
      ;;
  esac
fi
"${0%/*}/systemctl.real" "$@"
rc=$?
: > "$d/finished-$n"
exit "$rc"
"""


@dataclass(frozen=True)
class StepShim:
    dir: Path  # where calls / reached / release live

    @property
    def reached(self) -> Path:
        return self.dir / "reached"

    def release(self) -> None:
        (self.dir / "release").touch()

    def finished(self, call: int) -> Path:
        return self.dir / f"finished-{call}"

    def wait_reached(self, within_s: float = 60.0) -> None:
        wait_for(self.reached, within_s)

    async def wait_reached_async(self, within_s: float = 60.0) -> None:
        end = time.monotonic() + within_s
        while not self.reached.exists():
            if time.monotonic() > end:
                raise AssertionError(f"the step shim never reached {self.reached}")
            await asyncio.sleep(0.02)


def wait_for(path: Path, within_s: float = 60.0) -> None:
    """Poll for a file a shim writes (a deadline, not a timing assertion)."""
    end = time.monotonic() + within_s
    while not path.exists():
        if time.monotonic() > end:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.02)


def shim_systemctl(root: Path, work: Path, *, call: int, mode: str) -> StepShim:
    """Wrap ``root``'s systemctl: ``mode`` ``fail`` (exit 1) or ``hold`` on call ``call``."""
    assert mode in ("fail", "hold")
    work.mkdir(parents=True, exist_ok=True)
    bin_dir = root / "usr/bin"
    (bin_dir / "systemctl").rename(bin_dir / "systemctl.real")
    text = (
        WRAPPER.replace("@DIR@", shlex.quote(str(work)))
        .replace("@CALL@", str(call))
        .replace("@MODE@", mode)
        .replace("@LIMIT@", str(int(HOLD_LIMIT_S / 0.05)))
    )
    (bin_dir / "systemctl").write_text(text)
    (bin_dir / "systemctl").chmod(0o755)
    return StepShim(work)


def host_digest(root: Path) -> dict[str, str]:
    """Every file of a fake host tree by content, but the shim's own bookkeeping (the fake
    systemctl's call log): what a fix and its undo must leave byte-identical."""
    log = SYSTEMCTL_LOG.lstrip("/")
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and str(p.relative_to(root)) != log
    }


def tree_standins(monkeypatch: pytest.MonkeyPatch, under: Path, *, ui: bool = False) -> None:
    """Hosts of the inventory whose root lies under ``under`` (trees this test built with
    ``tui.demo.fakehost``) get the tree's stand-ins, as the demo fleet's hosts do. An inventory
    itself can never name stand-ins: a ``root:`` host of a real inventory runs none. ``ui``:
    the TUI's inventory loading too."""
    load = inventory.load_inventory

    def ours(host: Host) -> bool:
        return bool(host.root) and Path(str(host.root)).is_relative_to(under)

    def with_standins(path: Path | None, **kwargs: Any) -> inventory.Inventory:
        inv = load(path, **kwargs)
        hosts = tuple(
            replace(h, standins=fakehost.standins(Path(str(h.root)))) if ours(h) else h
            for h in inv.hosts
        )
        return replace(inv, hosts=hosts)

    monkeypatch.setattr(inventory, "load_inventory", with_standins)
    if ui:
        import tui.ui.launch

        monkeypatch.setattr(tui.ui.launch, "load_inventory", with_standins)


# ``python -c`` lines for a CLI run in a child process whose inventory's ``root:`` trees were
# built by the test: the same stand-ins as ``tree_standins`` gives in-process
CHILD_STANDINS = """
from dataclasses import replace as _r
from pathlib import Path as _P
from tui.core.reach import inventory as _i
from tui.demo import fakehost as _f
_load = _i.load_inventory
def _with(path, **kwargs):
    inv = _load(path, **kwargs)
    hosts = [_r(h, standins=_f.standins(_P(h.root))) if h.root else h for h in inv.hosts]
    return _r(inv, hosts=tuple(hosts))
_i.load_inventory = _with
"""
