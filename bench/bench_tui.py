"""TUI responsiveness while 100 demo hosts are probed (a benchmark, not a test).

Measures, headless (Textual's test driver renders every frame to an in-memory screen):
- time to first paint: from creating the app with 100 hosts to the first frame painted with
  the full hosts table (plus, separately, the import time of the app in a fresh interpreter);
- key-press-to-render latency: cursor moves (down/up in the hosts table) sent every 50 ms as
  key events while all 100 demo hosts are probed through the real local transport, each
  timed from posting the key until the cursor has moved and the next frame is painted
  (``call_after_refresh``). Reports median, p95 and worst.
Targets: first paint < 1 s, worst latency < 100 ms.

    .venv/bin/python bench/bench_tui.py [--hosts 100] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual import events

from tui.core.runner import Session
from tui.demo.fleet import DEMO_HOSTS, demo_fleet
from tui.ui.app import DetectiveApp
from tui.ui.config import Settings
from tui.ui.screens.hosts import HostsScreen
from tui.ui.widgets.fleet_table import FleetTable


async def _after_refresh(app: DetectiveApp) -> float:
    """The moment the app has processed its queued messages and painted the next frame."""
    done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    app.call_after_refresh(lambda: done.set_result(time.perf_counter()))
    return await done


async def _until(condition, deadline_s: float = 60.0) -> None:
    end = time.perf_counter() + deadline_s
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError("the app never reached the expected state")
        await asyncio.sleep(0.001)


async def run(n_hosts: int, concurrency: int, cache: Path) -> dict[str, object]:
    copies = -(-n_hosts // len(DEMO_HOSTS))
    hosts = demo_fleet(cache, copies=copies)[:n_hosts]

    t0 = time.perf_counter()
    app = DetectiveApp(
        hosts,
        settings=Settings(concurrency=concurrency),
        session_factory=lambda: Session(simulate_delay_s=1.0),
    )
    app.animation_level = "none"
    running = asyncio.create_task(app.run_async(headless=True, size=(160, 50)))
    try:
        return await _measure(app, hosts, t0)
    finally:
        app.exit()
        await running


async def _measure(app: DetectiveApp, hosts, t0: float) -> dict[str, object]:

    def table_filled() -> bool:
        if not app.screen_stack or not isinstance(app.screen, HostsScreen):
            return False
        if not app.screen.is_mounted:
            return False
        return len(app.screen.query_one("#hosts-table", FleetTable).row_names) == len(hosts)

    await _until(table_filled)
    first_paint = await _after_refresh(app) - t0
    table = app.screen.query_one("#hosts-table", FleetTable)

    latencies: list[float] = []
    started = time.perf_counter()
    app.request_probe(())
    keys = ("down", "down", "down", "up", "up", "up")
    i = 0
    while any(s.busy for s in app.fleet):
        key = keys[i % len(keys)]
        before = table.cursor_row
        t = time.perf_counter()
        app.post_message(events.Key(key, None))
        await _until(lambda b=before: table.cursor_row != b)
        latencies.append(await _after_refresh(app) - t)
        i += 1
        await asyncio.sleep(0.05)
    probe_wall = time.perf_counter() - started
    await app.workers.wait_for_complete()
    lines = sum(len(app.probe_output(h.name)) for h in hosts)
    statuses: dict[str, int] = {}
    for s in app.fleet:
        statuses[s.status] = statuses.get(s.status, 0) + 1
    latencies.sort()
    return {
        "hosts": len(hosts),
        "first_paint_s": first_paint,
        "probe_all_wall_s": probe_wall,
        "keys": len(latencies),
        "latency_median_ms": statistics.median(latencies) * 1000,
        "latency_p95_ms": latencies[max(0, int(len(latencies) * 0.95) - 1)] * 1000,
        "latency_worst_ms": latencies[-1] * 1000,
        "output_lines": lines,
        "statuses": statuses,
    }


def _import_time_s() -> float:
    """Wall time of a fresh interpreter importing the app (part of what a user waits for)."""
    code = "import time; t = time.perf_counter(); import tui.ui.app; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as tmp:
        demo_fleet(Path(tmp))  # build the trees before timing anything
        r = asyncio.run(run(args.hosts, args.concurrency, Path(tmp)))
    imports = _import_time_s()
    ok_paint = "ok" if r["first_paint_s"] < 1.0 else "MISSED"
    ok_lat = "ok" if r["latency_worst_ms"] < 100 else "MISSED"
    print(f"hosts probed            {r['hosts']} (concurrency {args.concurrency}) {r['statuses']}")
    print(f"probe all, wall         {r['probe_all_wall_s']:.2f} s, {r['output_lines']} lines")
    print(f"import tui.ui.app       {imports * 1000:.0f} ms (fresh interpreter)")
    print(
        f"time to first paint     {r['first_paint_s'] * 1000:.0f} ms   target < 1000 ms: {ok_paint}"
    )
    print(
        f"key → render latency    median {r['latency_median_ms']:.1f} ms, "
        f"p95 {r['latency_p95_ms']:.1f} ms, worst {r['latency_worst_ms']:.1f} ms "
        f"over {r['keys']} keys   target worst < 100 ms: {ok_lat}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
