"""TUI responsiveness while 100 demo hosts are probed (a benchmark, not a test).

Measures, headless (Textual's test driver renders every frame to an in-memory screen):
- time to first paint: from creating the app with 100 hosts to the first composed frame of
  the hosts table;
- key-press-to-render latency: cursor moves pressed every few milliseconds while all 100
  demo hosts are probed through the real local transport, each timed until the app is idle
  again (the key handled and the frame rendered). Reports median, p95 and worst.
Targets: first paint < 1 s, worst latency < 100 ms.

    .venv/bin/python bench/bench_tui.py [--hosts 100] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui.core.runner import Session
from tui.demo.fleet import DEMO_HOSTS, demo_fleet
from tui.ui.app import DetectiveApp
from tui.ui.config import Settings


async def run(n_hosts: int, concurrency: int, cache: Path) -> dict[str, float]:
    copies = -(-n_hosts // len(DEMO_HOSTS))
    hosts = demo_fleet(cache, copies=copies)[:n_hosts]
    lines_seen = 0

    t0 = time.perf_counter()
    app = DetectiveApp(
        hosts,
        settings=Settings(concurrency=concurrency),
        session_factory=lambda: Session(simulate_delay_s=1.0),
    )
    app.animation_level = "none"
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        first_paint = time.perf_counter() - t0

        latencies: list[float] = []
        started = time.perf_counter()
        await pilot.press("P")
        keys = ("down", "down", "down", "up", "up", "up")
        i = 0
        while any(s.busy for s in app.fleet):
            t = time.perf_counter()
            await pilot.press(keys[i % len(keys)])
            latencies.append(time.perf_counter() - t)
            i += 1
            await asyncio.sleep(0.02)
        probe_wall = time.perf_counter() - started
        await app.workers.wait_for_complete()
        lines_seen = sum(len(app.probe_output(h.name)) for h in hosts)
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
        "latency_p95_ms": latencies[int(len(latencies) * 0.95) - 1] * 1000,
        "latency_worst_ms": latencies[-1] * 1000,
        "output_lines": lines_seen,
        "statuses": statuses,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as tmp:
        demo_fleet(Path(tmp))  # build the trees before timing anything
        r = asyncio.run(run(args.hosts, args.concurrency, Path(tmp)))
    ok_paint = "ok" if r["first_paint_s"] < 1.0 else "MISSED"
    ok_lat = "ok" if r["latency_worst_ms"] < 100 else "MISSED"
    print(f"hosts probed            {r['hosts']} (concurrency {args.concurrency}) {r['statuses']}")
    print(f"probe all, wall         {r['probe_all_wall_s']:.2f} s, {r['output_lines']} lines")
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
