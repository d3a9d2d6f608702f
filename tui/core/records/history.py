"""The history store: one snapshot of facts and verdict per probe of a host, in SQLite.

``state_dir()/history.sqlite`` (the demo fleet's simulated hosts in ``history-demo.sqlite``,
so a demo ``ct200`` never mixes with a real one). Standard-library ``sqlite3`` in WAL mode with
``synchronous=FULL``: a snapshot is on disk when ``add`` returns, and a process killed in the
middle of a write (``kill -9``, power cut) loses only the snapshot it was writing — SQLite
rolls the unfinished transaction back the next time the file is opened. A full disk fails the
one transaction (``database or disk is full``) and leaves every earlier snapshot as it was;
``keep`` turns that, and any other store error, into one line of warning for the caller, never
an exception, so a probe never fails for its history.

The schema version is SQLite's ``user_version``; a file from a newer release is refused with
a message naming it. The size is bounded: at most ``KEEP_PER_HOST`` snapshots per host and
``MAX_BYTES`` of stored documents in all, oldest first, always keeping each host's newest
``KEEP_NEWEST``; freed pages go back to the file system (``auto_vacuum=INCREMENTAL``).
Everything stored has been through ``tui.core.redact.redact``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.core import locations
from tui.core.judge.host_stack import STACK_KEYS, Stack, stack
from tui.core.redact import redact, redact_text

if TYPE_CHECKING:
    from tui.core.judge.judged import Judged

SCHEMA_VERSION = 1
KEEP_PER_HOST = 200
KEEP_NEWEST = 2
MAX_BYTES = 64 * 1024 * 1024
FILE_NAME = "history.sqlite"
DEMO_FILE_NAME = "history-demo.sqlite"
VERDICTS = ("critical", "warning", "info", "none", "unreachable")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS snapshots (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    host TEXT NOT NULL,
    at TEXT NOT NULL,
    verdict TEXT,
    findings TEXT,
    stack TEXT NOT NULL,
    doc BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS snapshots_host_at ON snapshots (host, at, id);
"""


class HistoryError(Exception):
    """The store cannot be read or written; the message names the file and what to do."""


@dataclass(frozen=True)
class Snapshot:
    """One stored probe. ``verdict``/``findings`` are None for a probe stored without being
    judged (``detective-tui probe``); ``findings`` are ``{"id", "severity", "python",
    "title"}`` objects; ``facts`` is the redacted facts JSON (None: the host was not reached)."""

    id: int
    host: str
    at: str
    verdict: str | None
    findings: tuple[dict[str, Any], ...] | None
    stack: Stack
    facts: dict[str, Any] | None
    flashinfer: tuple[dict[str, Any], ...]
    error: str | None

    @property
    def finding_ids(self) -> list[str]:
        return sorted({f["id"] for f in self.findings or ()})


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def store_path(demo: bool = False) -> Path:
    return locations.state_dir() / (DEMO_FILE_NAME if demo else FILE_NAME)


def _problem(path: Path, exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if "full" in text or "disk I/O" in text:
        return f"{path}: {text} — free space there; earlier snapshots are intact"
    return f"{path}: {text}"


class HistoryStore:
    """An open history file (``open`` creates it); use as a context manager."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn

    @classmethod
    def open(cls, path: Path | None = None, *, create: bool = True) -> HistoryStore:
        path = path or store_path()
        try:
            if not path.exists():
                if not create:
                    raise HistoryError(f"{path}: no history yet")
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
            conn = sqlite3.connect(path, timeout=10, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise HistoryError(_problem(path, exc)) from exc
        store = cls(path, conn)
        try:
            store._prepare()
        except sqlite3.Error as exc:
            conn.close()
            raise HistoryError(_problem(path, exc)) from exc
        except HistoryError:
            conn.close()
            raise
        return store

    def _prepare(self) -> None:
        c = self._conn
        version = c.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise HistoryError(
                f"{self.path}: written by a newer detective-tui (schema {version}, this one "
                f"reads {SCHEMA_VERSION}); upgrade, or move the file aside"
            )
        c.execute("PRAGMA busy_timeout = 10000")
        if version == 0:
            c.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only before the first table
        c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = FULL")
        if version == 0:
            c.executescript(
                f"BEGIN IMMEDIATE;{_SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};COMMIT;"
            )

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        c = self._conn
        if not c.in_transaction:
            c.execute("BEGIN IMMEDIATE")
        try:
            yield c
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise
        if c.in_transaction:
            c.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set_max_pages(self, pages: int) -> None:
        """Cap the file at ``pages`` pages (tests: a full disk without a tiny file system)."""
        self._conn.execute(f"PRAGMA max_page_count = {int(pages)}")

    # -- writing ----------------------------------------------------------------------------
    def add(
        self,
        host: str,
        *,
        at: str,
        verdict: str | None,
        findings: Sequence[dict[str, Any]] | None,
        stack_values: Stack,
        facts: dict[str, Any] | None,
        flashinfer: Sequence[dict[str, Any]] = (),
        error: str | None = None,
    ) -> int:
        """Store one snapshot (redacted) and prune, in one transaction; its id."""
        doc = redact({"facts": facts, "flashinfer": list(flashinfer), "error": error})
        blob = zlib.compress(json.dumps(doc, ensure_ascii=False).encode(), 6)
        row = (
            redact_text(host),
            at,
            verdict,
            None if findings is None else json.dumps(redact(list(findings))),
            json.dumps(redact(dict(stack_values))),
            blob,
        )
        try:
            with self._transaction() as c:
                cur = c.execute(
                    "INSERT INTO snapshots (host, at, verdict, findings, stack, doc) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    row,
                )
                self._prune(row[0])
            self._conn.execute("PRAGMA incremental_vacuum")
        except sqlite3.Error as exc:
            raise HistoryError(_problem(self.path, exc)) from exc
        return int(cur.lastrowid or 0)

    def _prune(self, host: str) -> None:
        c = self._conn
        c.execute(
            "DELETE FROM snapshots WHERE host = ? AND id NOT IN "
            "(SELECT id FROM snapshots WHERE host = ? ORDER BY at DESC, id DESC LIMIT ?)",
            (host, host, KEEP_PER_HOST),
        )
        total = c.execute("SELECT COALESCE(SUM(LENGTH(doc)), 0) FROM snapshots").fetchone()[0]
        if total <= MAX_BYTES:
            return
        rows = c.execute(
            "SELECT id, LENGTH(doc) FROM (SELECT id, doc, at, ROW_NUMBER() OVER "
            "(PARTITION BY host ORDER BY at DESC, id DESC) AS n FROM snapshots) "
            "WHERE n > ? ORDER BY at, id",
            (KEEP_NEWEST,),
        ).fetchall()
        doomed = []
        for row_id, size in rows:
            if total <= MAX_BYTES:
                break
            doomed.append((row_id,))
            total -= size
        c.executemany("DELETE FROM snapshots WHERE id = ?", doomed)

    # -- reading ----------------------------------------------------------------------------
    def snapshots(self, host: str, limit: int | None = None) -> list[Snapshot]:
        """The host's snapshots, newest first."""
        sql = "SELECT * FROM snapshots WHERE host = ? ORDER BY at DESC, id DESC"
        args: tuple[Any, ...] = (host,)
        if limit is not None:
            sql += " LIMIT ?"
            args += (limit,)
        return [self._snapshot(r) for r in self._query(sql, args)]

    def latest_per_host(self) -> list[Snapshot]:
        """Each host's newest snapshot, by host name."""
        sql = (
            "SELECT * FROM snapshots s WHERE id = (SELECT id FROM snapshots t WHERE "
            "t.host = s.host ORDER BY at DESC, id DESC LIMIT 1) ORDER BY host"
        )
        return [self._snapshot(r) for r in self._query(sql, ())]

    def _query(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise HistoryError(_problem(self.path, exc)) from exc

    def _snapshot(self, row: tuple[Any, ...]) -> Snapshot:
        row_id, host, at, verdict, findings, stack_json, blob = row
        try:
            doc = json.loads(zlib.decompress(blob))
        except (zlib.error, ValueError) as exc:
            raise HistoryError(
                f"{self.path}: snapshot {row_id} of {host} is damaged ({exc}); "
                "move the file aside to start a new history"
            ) from exc
        values = json.loads(stack_json)
        return Snapshot(
            id=row_id,
            host=host,
            at=at,
            verdict=verdict,
            findings=None if findings is None else tuple(json.loads(findings)),
            stack={k: values.get(k) for k in STACK_KEYS},
            facts=doc.get("facts"),
            flashinfer=tuple(doc.get("flashinfer") or ()),
            error=doc.get("error"),
        )


def verdict_of(judged: Judged) -> str | None:
    """critical / warning / info / none, unreachable; None when reached but not judged."""
    if not judged.result.reachable or judged.facts is None:
        return "unreachable"
    if judged.diagnosis is None:
        return None
    return judged.diagnosis.worst() or "none"


def keep(judged: Judged, *, at: str | None = None, path: Path | None = None) -> str | None:
    """Store a snapshot of a probe (judged or not); None, or one line saying why it was not
    kept (the probe itself stands)."""
    host = judged.host
    path = path or store_path(host.demo)
    diagnosis = judged.diagnosis
    findings = None
    if diagnosis is not None:
        findings = [
            {"id": f.id, "severity": f.severity, "python": f.python, "title": f.title}
            for f in diagnosis.findings
        ]
    elif judged.facts is None:
        findings = []
    try:
        with HistoryStore.open(path) as store:
            store.add(
                host.name,
                at=at or now_iso(),
                verdict=verdict_of(judged),
                findings=findings,
                stack_values=stack(judged.facts, diagnosis),
                facts=judged.facts.to_json() if judged.facts is not None else None,
                flashinfer=[r.to_json() for r in diagnosis.flashinfer] if diagnosis else (),
                error=judged.error,
            )
    except HistoryError as exc:
        return f"history not kept for {host.name}: {exc}"
    return None
