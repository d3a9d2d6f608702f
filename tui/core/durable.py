"""Files that survive ``kill -9``, a power cut and a full disk: whole or not at all.

``write_json`` writes a temp file beside the target, flushes and fsyncs it, renames it over the
target and fsyncs the directory, so a reader sees the old content or the new, never a torn
file, and the new content is on disk before the call returns. ``RunLock`` is an ``flock`` held
for as long as a process works on a record: the kernel drops it when the process dies, however
it dies, so another process can tell a run in progress from one that was cut.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any


class DurableWriteError(Exception):
    """A record could not be written durably; the message names the file and the reason."""


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json(path: Path, data: Any) -> None:
    """Replace ``path`` with ``data`` as JSON, durably (temp + fsync + rename + fsync dir)."""
    blob = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
    write_bytes(path, blob)


def write_bytes(path: Path, blob: bytes, *, mode: int = 0o600, make_parents: bool = True) -> None:
    """Replace ``path`` with ``blob``, durably (temp + fsync + rename + fsync dir). The temp
    file is ``.NAME.PID.tmp`` beside it (a reader globbing ``*.prom`` never sees it);
    without ``make_parents`` a missing directory is an error."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if make_parents:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        try:
            view = memoryview(blob)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            os.fchmod(fd, mode)  # whatever the umask: a collector running as another user reads it
        finally:
            os.close(fd)
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise DurableWriteError(f"cannot write {path}: {exc.strerror or exc}") from exc


def write_private(path: Path, data: bytes) -> None:
    """Write ``path`` readable by its owner only (0600) in a directory of theirs only (0700,
    made so when it already exists): reports and session copies carry host names, commands and
    output. ``OSError`` as it comes."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # a file that was there keeps no wider mode
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def move_durably(source: Path, target: Path) -> None:
    """Rename ``source`` to ``target`` and fsync the directory."""
    os.replace(source, target)
    fsync_dir(target.parent)


class RunLock:
    """An exclusive ``flock`` on ``path`` (created, holding the pid), held until ``release``."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def create(cls, path: Path) -> RunLock | None:
        """A new lock file, locked; None when ``path`` already exists (another run's name)."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return None
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(path, fd)

    @classmethod
    def take(cls, path: Path) -> RunLock | None:
        """Lock an existing or new lock file; None when a live process holds it."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(path, fd)

    def release(self) -> None:
        """Remove the lock file, then unlock (a reader never sees it locked and gone)."""
        if self._fd < 0:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = -1


def is_held(path: Path) -> bool:
    """Does a live process hold the lock at ``path`` (this one included, via another open)?"""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
