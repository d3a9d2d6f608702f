"""The history store (``tui.core.records.history``): every probe of the one core path keeps a
redacted snapshot; ``kill -9`` in the middle of writing and a full disk lose no earlier snapshot."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui.cli import main
from tui.core import exitcodes
from tui.core.judge.judged import Judged
from tui.core.records import history
from tui.core.records.history import HistoryError, HistoryStore, store_path
from tui.core.run.runner import ProbeResult, Session
from tui.core.run.service import judge_facts, kept
from tui.demo.fleet import demo_fleet

REPO = Path(__file__).resolve().parents[1]
SECRETS = ("hf_demo_secret_value", "sk-demo-secret-value")  # in the demo ct200's unit and env


@pytest.fixture(scope="module")
def demo_trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache dir for the module's demo trees (built once; probing only reads them)."""
    return tmp_path_factory.mktemp("demo-cache")


@pytest.fixture(autouse=True)
def shared_demo_trees(demo_trees: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(demo_trees))


def _raw_rows(path: Path) -> list[str]:
    """Every stored value as text, documents decompressed."""
    conn = sqlite3.connect(path)
    try:
        out = []
        for row in conn.execute("SELECT * FROM snapshots"):
            for value in row:
                out.append(
                    zlib.decompress(value).decode() if isinstance(value, bytes) else str(value)
                )
        return out
    finally:
        conn.close()


def test_every_diagnosis_keeps_a_redacted_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo", "diagnose", "ct200"]) == exitcodes.CRITICAL
    assert main(["--demo", "probe", "ct200"]) == exitcodes.OK
    capsys.readouterr()
    with HistoryStore.open(store_path(demo=True)) as store:
        snaps = store.snapshots("ct200")
    assert [s.verdict for s in snaps] == [None, "critical"]  # newest first; probe: unjudged
    assert "flashinfer-arch-rejected" in snaps[1].finding_ids
    assert snaps[1].stack["torch"] == "2.9.1+cu130" and snaps[1].stack["jit_cuda"] == "12.8"
    assert snaps[0].facts is not None and snaps[0].findings is None
    assert not store_path(demo=False).exists()  # the demo never writes the real history
    text = "\n".join(_raw_rows(store_path(demo=True)))
    assert "venv_sglang211" in text
    assert not [s for s in SECRETS if s in text]


def test_ingest_keeps_a_snapshot_too() -> None:
    host = demo_fleet()[2]  # h100-node
    result = ProbeResult(host=host, facts=None, error="no output", error_kind="probe-failed")
    judge_facts(result)
    with HistoryStore.open(store_path(demo=True)) as store:
        assert [s.verdict for s in store.snapshots("h100-node")] == ["unreachable"]
        assert store.snapshots("h100-node")[0].facts is None


def test_pruning_keeps_the_newest(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(history, "KEEP_PER_HOST", 3)
    path = tmp_path / "h.sqlite"
    with HistoryStore.open(path) as store:
        for i in range(6):
            store.add(
                "a",
                at=f"2026-01-0{i + 1}T00:00:00+00:00",
                verdict="none",
                findings=[],
                stack_values={},
                facts={"i": i},
            )
        store.add(
            "b",
            at="2026-01-01T00:00:00+00:00",
            verdict="none",
            findings=[],
            stack_values={},
            facts={},
        )
        assert [s.facts["i"] for s in store.snapshots("a")] == [5, 4, 3]
        assert len(store.snapshots("b")) == 1
    monkeypatch.setattr(history, "MAX_BYTES", 1)  # every byte over: only the newest 2 stay
    with HistoryStore.open(path) as store:
        store.add(
            "a",
            at="2026-02-01T00:00:00+00:00",
            verdict="none",
            findings=[],
            stack_values={},
            facts={"i": 9},
        )
        assert [s.facts["i"] for s in store.snapshots("a")] == [9, 5]
        assert len(store.snapshots("b")) == 1  # a host's newest are never pruned


def test_a_newer_schema_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    HistoryStore.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(HistoryError, match=r"h\.sqlite: written by a newer detective-tui"):
        HistoryStore.open(path)


WRITER = """
import sys
from tui.core.records.history import HistoryStore
store = HistoryStore.open(__import__("pathlib").Path(sys.argv[1]))
facts = {"blob": "x" * 200000}  # big enough that a kill lands inside a write
i = 0
while True:
    i += 1
    row = store.add("h", at=f"2026-01-01T00:00:{i % 60:02d}+00:00", verdict="none",
                    findings=[], stack_values={}, facts={**facts, "i": i})
    print(row, flush=True)
"""


def test_kill_9_mid_write_loses_nothing_committed(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None
    committed = [int(proc.stdout.readline()) for _ in range(15)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    committed += [int(line) for line in proc.stdout.read().split()]
    with HistoryStore.open(path) as store:
        ids = {s.id for s in store.snapshots("h")}
    assert set(committed) <= ids
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def _judged_ct200() -> Judged:
    host = next(h for h in demo_fleet() if h.name == "ct200")

    async def probe() -> ProbeResult:
        async with Session() as session:
            return await session.probe(host)

    return Judged(asyncio.run(probe()))


def test_a_full_store_keeps_earlier_snapshots_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    with HistoryStore.open(path) as store:
        store.add(
            "h",
            at="2026-01-01T00:00:00+00:00",
            verdict="none",
            findings=[],
            stack_values={},
            facts={"i": 1},
        )
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store.set_max_pages(pages)
        with pytest.raises(HistoryError, match="full"):
            store.add(
                "h",
                at="2026-01-02T00:00:00+00:00",
                verdict="none",
                findings=[],
                stack_values={},
                facts={"blob": os.urandom(200000).hex()},
            )
        assert [s.facts for s in store.snapshots("h")] == [{"i": 1}]


@contextlib.contextmanager
def _tiny_tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_loses_no_snapshot_and_fails_no_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged = _judged_ct200()
    with _tiny_tmpfs(tmp_path / "disk", "400k") as disk:
        monkeypatch.setenv("XDG_STATE_HOME", str(disk))
        assert kept(judged) == judged  # the service's path: stored, nothing to say
        with contextlib.suppress(OSError), open(disk / "filler", "wb") as filler:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        out = kept(judged)  # the probe stands, with one line saying why it was not kept
        assert out.result is judged.result and len(out.notes) == 1
        note = out.notes[0]
        assert "\n" not in note and note.startswith("history not kept for ct200: ")
        assert "free space there; earlier snapshots are intact" in note
        (disk / "filler").unlink()  # WAL needs room for its index even to read
        with HistoryStore.open(store_path(demo=True)) as store:
            assert len(store.snapshots("ct200")) == 1
            assert store.snapshots("ct200")[0].stack["torch"] == "2.9.1+cu130"


def test_the_cli_turns_a_store_error_into_one_warning(capsys: pytest.CaptureFixture[str]) -> None:
    store_path(demo=True).mkdir(parents=True)  # a directory where the file should be
    assert main(["--demo", "diagnose", "h100-node", "--json"]) == exitcodes.OK
    captured = capsys.readouterr()
    assert json.loads(captured.out)[0]["reachable"] is True
    warnings = [ln for ln in captured.err.splitlines() if ln.startswith("warning: history")]
    assert len(warnings) == 1 and "Traceback" not in captured.err
