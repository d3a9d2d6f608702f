"""TUI responsiveness while 100 demo hosts are probed (a benchmark, not a test).

Measures, headless (Textual's test driver renders every frame to an in-memory screen):
- time to first paint: from creating the app with 100 hosts to the first frame painted with
  the full hosts table (plus, separately, the import time of the app in a fresh interpreter);
- start-up tail: the latency of a key pressed right at first paint, and the time until the
  app first goes idle (Textual still composes the Footer's keys then);
- key-press-to-render latency: cursor moves (down/up in the hosts table) sent every 50 ms as
  key events, from the moment the app has gone idle, while all 100 demo hosts are probed
  through the real local transport and then probed again every ``--reprobe`` seconds (the
  periodic re-probe) for ``--duration`` seconds, the detail pane beside the table following
  the cursor, each timed from posting the key until the cursor has moved and the next frame
  is painted (``call_after_refresh``). Reports median, p95 and worst;
- memory: the peak RSS of the process, and of a run with ``--rss-hosts`` (500) hosts probed;
- the transcript viewer: a 10 MB session (real probe events of the demo hosts, repeated)
  opened by the viewer's index and its first screen of rows, side by side with what the old
  viewer did first (``transcript.export(…, "md")``, before rendering that Markdown), and the
  TUI's transcripts screen from key to its first rows painted.
Targets: first paint < 0.5 s, worst latency < 100 ms, RSS < 200 MB with 500 hosts, a 10 MB
session open < 1 s.

Each run is a fresh interpreter. ``--before REV`` also runs the code of git revision REV
(extracted to a temporary directory) through this same harness, alternating before/after
runs, so both sides see the same machine load; the 1-minute load average is printed with
every run.

    .venv/bin/python bench/bench_tui.py [--hosts 100] [--concurrency 16] [--runs 3] \\
        [--reprobe 3] [--duration 12] [--rss-hosts 500] [--transcript-mb 10] [--before REV]
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


async def _after_refresh(app: Any) -> float:
    """The moment the app has processed its queued messages and painted the next frame."""
    done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    app.call_after_refresh(lambda: done.set_result(time.perf_counter()))
    return await done


async def _until(condition: Callable[[], bool], deadline_s: float = 60.0) -> None:
    end = time.perf_counter() + deadline_s
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError("the app never reached the expected state")
        await asyncio.sleep(0.001)


async def run(
    n_hosts: int, concurrency: int, cache: Path, reprobe_s: float = 0.0, duration_s: float = 0.0
) -> dict[str, Any]:
    """One measurement, with the ``tui`` package first on ``sys.path``."""
    from tui.core.run.runner import Session
    from tui.demo.fleet import DEMO_HOSTS, demo_fleet
    from tui.ui.app import DetectiveApp
    from tui.ui.config import Settings

    copies = -(-n_hosts // len(DEMO_HOSTS))
    hosts = demo_fleet(cache, copies=copies)[:n_hosts]

    takes = inspect.signature(DetectiveApp.__init__).parameters
    extra = {"reprobe_s": reprobe_s} if reprobe_s and "reprobe_s" in takes else {}
    t0 = time.perf_counter()
    app = DetectiveApp(
        hosts,
        settings=Settings(concurrency=concurrency),
        session_factory=lambda: Session(),
        **extra,
    )
    app.animation_level = "none"
    running = asyncio.create_task(app.run_async(headless=True, size=(160, 50)))
    try:
        return await _measure(app, hosts, t0, duration_s)
    finally:
        app.exit()
        await running


async def _measure(app: Any, hosts: Any, t0: float, duration_s: float) -> dict[str, Any]:
    from tui.ui.screens.hosts import HostsScreen
    from tui.ui.widgets.fleet_table import FleetTable

    def table_filled() -> bool:
        if not app.screen_stack or not isinstance(app.screen, HostsScreen):
            return False
        if not app.screen.is_mounted:
            return False
        return len(app.screen.query_one("#hosts-table", FleetTable).row_names) == len(hosts)

    await _until(table_filled)
    first_paint = await _after_refresh(app) - t0
    table = app.screen.query_one("#hosts-table", FleetTable)
    # A key at once: it waits for the tail of the start-up (Textual composes the Footer's
    # keys again after the screen's focus and stack settle); reported on its own.
    startup_key = await _press(app, table, "down")
    settled = await _settle() - t0

    latencies: list[float] = []
    sent_at: list[float] = []  # seconds since probing started
    started = time.perf_counter()
    app.request_probe(())
    keys = ("down", "down", "down", "up", "up", "up")
    i = 0
    # until every host has been probed once, and for at least ``duration_s`` (the periodic
    # re-probes go on meanwhile)
    while (
        any(s.finished_at is None and s.status != "probe-failed" for s in app.fleet)
        or time.perf_counter() - started < duration_s
    ):
        sent_at.append(time.perf_counter() - started)
        latencies.append(await _press(app, table, keys[i % len(keys)]))
        i += 1
        await asyncio.sleep(0.05)
    probe_wall = time.perf_counter() - started
    await app.workers.wait_for_complete()
    lines = sum(len(app.probe_output(h.name)) for h in hosts)
    statuses: dict[str, int] = {}
    for s in app.fleet:
        statuses[s.status] = statuses.get(s.status, 0) + 1
    return {
        "rss_mb": _rss_mb(),
        "hosts": len(hosts),
        "first_paint_s": first_paint,
        "startup_key_s": startup_key,
        "settled_s": settled,
        "probe_all_wall_s": probe_wall,
        "latencies_ms": [x * 1000 for x in latencies],
        "sent_at_s": sent_at,
        "output_lines": lines,
        "statuses": statuses,
    }


def _rss_mb() -> float:
    """Peak resident memory of this process so far, MB."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _press(app: Any, table: Any, key: str) -> float:
    """Seconds from posting ``key`` until the cursor has moved and the frame is painted."""
    from textual import events

    before = table.cursor_row
    t = time.perf_counter()
    app.post_message(events.Key(key, None))
    await _until(lambda: table.cursor_row != before)
    return await _after_refresh(app) - t


async def _settle(window_s: float = 0.02, busy_cpu_s: float = 0.001) -> float:
    """The moment the process first spends a ``window_s`` nearly idle (the start-up is over)."""
    end = time.perf_counter() + 30.0
    while time.perf_counter() < end:
        cpu = time.process_time()
        await asyncio.sleep(window_s)
        if time.process_time() - cpu < busy_cpu_s:
            return time.perf_counter()
    raise TimeoutError("the app never went idle after its first paint")


def _import_time_s(tree: Path) -> float:
    """Wall time of a fresh interpreter importing the app (part of what a user waits for)."""
    code = "import time; t = time.perf_counter(); import tui.ui.app; print(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )
    return float(out.stdout)


def _one(args: argparse.Namespace) -> int:
    """Child mode: one run of the code in ``--tree``, its result as JSON on stdout."""
    sys.path.insert(0, str(args.tree))
    import tui

    if not Path(tui.__file__).resolve().is_relative_to(args.tree.resolve()):
        sys.exit(f"bench_tui: imported {tui.__file__}, not the code under {args.tree}")
    if args.session is not None:
        print(json.dumps(asyncio.run(_transcripts_screen(args.session, args.cache))))
        return 0
    result = asyncio.run(run(args.hosts, args.concurrency, args.cache, args.reprobe, args.duration))
    result["import_s"] = _import_time_s(args.tree)
    print(json.dumps(result))
    return 0


# -- the transcript viewer -------------------------------------------------------------------


def make_session(path: Path, cache: Path, megabytes: float) -> int:
    """A session of real events (the demo fleet probed once, through the real probe),
    repeated with fresh sequence numbers until it is ``megabytes`` big; the probe script
    stays stored once. Returns the number of events."""
    from tui.core.records.transcript import Transcript, read_events
    from tui.core.run.runner import Session
    from tui.demo.fleet import demo_fleet
    from tui.demo.unreachable import NeverAnswers

    real = path.with_suffix(".real")
    transcript = Transcript(real)
    transcript.record("session-start", pid=os.getpid(), argv=["detective-tui", "--demo"])

    async def probe() -> None:
        NeverAnswers.delay_s = 0.0  # the never-answering demo host fails at once here
        async with Session(transcript=transcript) as session:
            await session.probe_many(demo_fleet(cache))

    asyncio.run(probe())
    transcript.close()
    events = read_events(real)
    real.unlink()
    seq = 0
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < megabytes * 1024 * 1024:
            for event in events[1:] if seq else events:
                seq += 1
                copy = {**event, "seq": seq}
                if seq > len(events):
                    copy.pop("script", None)
                out.write(json.dumps(copy, ensure_ascii=False) + "\n")
    return seq


def transcript_open(path: Path, rows: int = 60) -> tuple[float, float]:
    """Seconds to index ``path`` and make its first ``rows`` lines (the new viewer), and to
    export it as Markdown (what the old viewer did before rendering it)."""
    from tui.core.records.transcript import export
    from tui.core.records.transcript_index import TranscriptIndex

    t = time.perf_counter()
    index = TranscriptIndex.open(path)
    for i in range(min(rows, len(index))):
        index.summary(i)
    opened = time.perf_counter() - t
    t = time.perf_counter()
    export(path, "md")
    return opened, time.perf_counter() - t


async def _transcripts_screen(session: Path, cache: Path) -> dict[str, Any]:
    """The TUI: from the key to the transcripts screen's first rows painted (the newest
    session, ``session``, is opened by itself)."""
    from tui.core.run.runner import Session
    from tui.demo.fleet import demo_fleet
    from tui.ui.app import DetectiveApp
    from tui.ui.screens.transcripts import TranscriptsScreen
    from tui.ui.widgets.event_list import EventList

    app = DetectiveApp(demo_fleet(cache), session_factory=lambda: Session())
    app.animation_level = "none"
    running = asyncio.create_task(app.run_async(headless=True, size=(160, 50)))
    try:
        await _until(lambda: bool(app.screen_stack) and app.screen.is_mounted)
        await _settle()
        t = time.perf_counter()
        app.post_message(events_key("t"))

        def shown() -> bool:
            screen = app.screen
            return isinstance(screen, TranscriptsScreen) and bool(
                screen.is_mounted and screen.query_one(EventList).rows
            )

        await _until(shown)
        painted = await _after_refresh(app) - t
        rows = len(app.screen.query_one(EventList).rows)
        return {"screen_s": painted, "events": rows, "rss_mb": _rss_mb()}
    finally:
        app.exit()
        await running


def events_key(key: str) -> Any:
    from textual import events

    return events.Key(key, None)


def _extract(rev: str, dest: Path) -> Path:
    """The files of git revision ``rev`` under ``dest``; exits with a message if unknown."""
    check = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", "--short", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if check.returncode != 0:
        sys.exit(f"bench_tui: --before {rev!r} is not a commit of {REPO}")
    archive = dest / "before.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "-C", str(REPO), "archive", rev], stdout=f, check=True)
    tree = dest / "before"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def _child(
    tree: Path, cache: Path, args: argparse.Namespace, *extra: str, env: dict | None = None
) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--one", "--tree", str(tree)]
    command += ["--cache", str(cache), "--hosts", str(args.hosts)]
    command += ["--concurrency", str(args.concurrency), "--reprobe", str(args.reprobe)]
    command += ["--duration", str(args.duration), *extra]
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"bench_tui: a run of {tree} failed:\n{out.stderr}")
    return json.loads(out.stdout.splitlines()[-1])


def _memory_and_transcript(tree: Path, cache: Path, tmp: Path, args: argparse.Namespace) -> None:
    """The memory run with ``--rss-hosts`` hosts, and the 10 MB transcript (this tree)."""
    if args.rss_hosts:
        many = argparse.Namespace(**{**vars(args), "hosts": args.rss_hosts, "duration": 0.0})
        r = _child(tree, cache, many)
        ok = "ok" if r["rss_mb"] < 200 else "MISSED"
        print(
            f"{args.rss_hosts} hosts probed: peak RSS {r['rss_mb']:.0f} MB (target < 200 MB: "
            f"{ok}); first paint {r['first_paint_s'] * 1000:.0f} ms; "
            f"{_latency(r['latencies_ms'])}",
            flush=True,
        )
    if args.transcript_mb:
        sys.path.insert(0, str(tree))
        state = tmp / "state"
        session = state / "detective-tui" / "sessions" / "29990101T000000-1.jsonl"
        session.parent.mkdir(parents=True)
        count = make_session(session, cache, args.transcript_mb)
        size = session.stat().st_size / 1024 / 1024
        opened, exported = transcript_open(session)
        env = {**os.environ, "XDG_STATE_HOME": str(state)}
        r = _child(tree, cache, args, "--session", str(session), env=env)
        ok = "ok" if r["screen_s"] < 1 else "MISSED"
        print(
            f"transcript of {size:.1f} MB, {count} events: index + first rows "
            f"{opened * 1000:.0f} ms vs the old viewer's Markdown export {exported * 1000:.0f} ms "
            f"({exported / opened:.0f}x); t → transcripts screen with its rows painted "
            f"{r['screen_s'] * 1000:.0f} ms (target < 1 s: {ok}), peak RSS {r['rss_mb']:.0f} MB",
            flush=True,
        )


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def _latency(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):5.1f}  p95 {_p95(values):5.1f}  "
        f"worst {max(values):5.1f} ms over {len(values):3d} keys"
    )


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3, help="runs per side (default 3)")
    parser.add_argument(
        "--before", metavar="REV", help="also measure git revision REV, runs alternating"
    )
    parser.add_argument("--reprobe", type=float, default=3.0, help="periodic re-probe, seconds")
    parser.add_argument(
        "--duration", type=float, default=12.0, help="keep pressing keys this long (seconds)"
    )
    parser.add_argument("--rss-hosts", type=int, default=500, help="hosts of the memory run")
    parser.add_argument("--transcript-mb", type=float, default=10.0)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--session", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, default=REPO, help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return _one(args)

    with tempfile.TemporaryDirectory(prefix="bench-tui-") as tmp:
        cache = Path(tmp) / "cache"
        sides = [("this tree", REPO)]
        if args.before:
            sides.insert(0, (f"before {args.before}", _extract(args.before, Path(tmp))))
        print(
            f"{os.cpu_count()} CPUs, load average {_load()} (1, 5, 15 min) at start; "
            f"{args.hosts} demo hosts probed locally, concurrency {args.concurrency}, "
            f"{args.runs} run(s) per side{', alternating' if args.before else ''}"
        )
        width = max(len(label) for label, _ in sides)
        results: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in sides}
        for i in range(args.runs):
            for label, tree in sides:
                load = os.getloadavg()[0]
                r = _child(tree, cache, args)
                results[label].append(r)
                worst = max(range(len(r["latencies_ms"])), key=r["latencies_ms"].__getitem__)
                print(
                    f"{label:<{width}}  run {i + 1}  load {load:4.2f}  "
                    f"first paint {r['first_paint_s'] * 1000:3.0f} ms, key then "
                    f"{r['startup_key_s'] * 1000:3.0f} ms, idle at "
                    f"{r['settled_s'] * 1000:3.0f} ms  "
                    f"probe all {r['probe_all_wall_s']:4.2f} s  {_latency(r['latencies_ms'])} "
                    f"(worst: key {worst + 1}, sent {r['sent_at_s'][worst]:.2f} s in)  "
                    f"{r['statuses']}",
                    flush=True,
                )
        print(f"load average {_load()} after the key runs")
        _memory_and_transcript(REPO, cache, Path(tmp), args)
        print("all keys of all runs:")
        for label, runs in results.items():
            keys = [x for r in runs for x in r["latencies_ms"]]
            paint = max(r["first_paint_s"] for r in runs) * 1000
            imports = statistics.median(r["import_s"] for r in runs) * 1000
            ok_paint = "ok" if paint < 500 else "MISSED"
            ok_lat = "ok" if max(keys) < 100 else "MISSED"
            print(
                f"{label:<{width}}  key → render {_latency(keys)} (target worst < 100 ms: "
                f"{ok_lat}); first paint worst {paint:.0f} ms (target < 500 ms: {ok_paint}); "
                f"import tui.ui.app {imports:.0f} ms; "
                f"{runs[-1]['output_lines']} output lines per run"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
