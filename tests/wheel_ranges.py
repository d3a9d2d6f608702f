"""The few members a slow test reads from a real wheel, fetched with HTTP Range requests.

A CUDA torch wheel is ~0.9 GB; the tests read a few files of it. ``wheel_members`` asks pip
where ``pip download --no-deps`` would fetch the wheel from (``tests/pip_resolve.py``: pip's own
configuration, index and tag choice; the URL and the index's sha256, nothing downloaded), reads
the zip's central directory and the wanted members with Range requests (``RangeFile``: a
seekable file object over urllib for ``zipfile``), and keeps only those members in the test
cache, with a JSON record beside them (URL, sha256, what was fetched, how each member was
checked). Every member is checked twice: its CRC32 from the zip directory (``zipfile`` on read)
and its sha256 from the wheel's own ``RECORD``. When the server answers a Range request with
the whole file (HTTP 200), the wheel is downloaded in full instead — verified against the
index's sha256 — and a warning says so in the test output.
"""

from __future__ import annotations

import base64
import csv
import fnmatch
import hashlib
import http.client
import io
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

CACHE_ROOT = Path.home() / ".cache" / "detective-tui-tests"
RESOLVER = Path(__file__).with_name("pip_resolve.py")
TAIL = 64 * 1024 + 22  # the end-of-central-directory record with the longest zip comment
READAHEAD = 256 * 1024  # the least one request asks for outside a planned span
JOIN_GAP = 1024 * 1024  # planned spans closer than this are fetched as one request
ATTEMPTS = 3
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class IndexWheel:
    """A wheel file on the package index, as pip chose it (nothing downloaded)."""

    requirement: str
    url: str
    filename: str
    sha256: str | None
    cafile: str | None = None
    proxy: str | None = None
    timeout: float = 180.0


def resolve(
    requirements: Sequence[str], pip_args: Sequence[str], env: Mapping[str, str] | None = None
) -> dict[str, IndexWheel]:
    """{requirement: the file ``pip download --no-deps <pip_args> <requirement>`` would fetch}."""
    cmd = [sys.executable, str(RESOLVER), "--no-deps", *pip_args, *requirements]
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, env=None if env is None else dict(env)
    )
    if done.returncode != 0:
        raise RuntimeError(f"pip could not resolve {list(requirements)}: {done.stderr.strip()}")
    out = json.loads(done.stdout)
    extra = {"cafile": out["cafile"], "proxy": out["proxy"], "timeout": float(out["timeout"])}
    return {req: IndexWheel(req, **w, **extra) for req, w in out["wheels"].items()}


class RangeIgnored(Exception):
    """The server sent the whole file (HTTP 200) to a Range request; ``response`` is open."""

    def __init__(self, response: http.client.HTTPResponse) -> None:
        super().__init__(f"HTTP {response.status} to a Range request")
        self.response = response


_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file, read with HTTP Range requests.

    Opening it fetches the last ``TAIL`` bytes (the zip's end record) and learns the size.
    Other reads stream from one open response while they move forward; a read outside it opens
    a new request for the planned span it falls in (``plan``), else for ``READAHEAD`` bytes.
    ``requests`` and ``received`` count what went over the wire.
    """

    def __init__(self, url: str, opener: urllib.request.OpenerDirector, timeout: float) -> None:
        super().__init__()
        self.url, self._opener, self._timeout = url, opener, timeout
        self.requests = self.received = 0
        self._spans: list[tuple[int, int]] = []
        self._resp: http.client.HTTPResponse | None = None
        self._at = self._end = self._pos = 0
        resp = self._request(f"bytes=-{TAIL}")
        if resp.status != 206:
            raise RangeIgnored(resp)
        start, last, self.size = self._content_range(resp)
        with resp:
            self._tail = self._take(resp, last + 1 - start)
        self._tail_start = start

    # -- the io.RawIOBase interface zipfile uses --------------------------------------------

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        if base + offset < 0:
            raise OSError(f"seek before the start of {self.url}")
        self._pos = base + offset
        return self._pos

    def read(self, n: int | None = -1) -> bytes:
        left = self.size - self._pos if n is None or n < 0 else min(n, self.size - self._pos)
        parts = []
        while left > 0:
            chunk = self._chunk(left)
            parts.append(chunk)
            self._pos += len(chunk)
            left -= len(chunk)
        return b"".join(parts)

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._drop()
        super().close()

    # -- planning and fetching -----------------------------------------------------------------

    def plan(self, spans: Sequence[tuple[int, int]]) -> None:
        """The byte ranges about to be read: each becomes one request (near ones joined)."""
        joined: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if joined and start - joined[-1][1] <= JOIN_GAP:
                joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
            else:
                joined.append((start, end))
        self._spans = joined

    def _chunk(self, n: int) -> bytes:
        pos = self._pos
        if pos >= self._tail_start:
            return self._tail[pos - self._tail_start : pos - self._tail_start + n]
        n = min(n, self._tail_start - pos)
        for attempt in range(ATTEMPTS):
            if self._resp is None or not (self._at <= pos < self._end) or pos - self._at > JOIN_GAP:
                self._open(pos, self._stream_end(pos, n))
            try:
                if pos > self._at:  # a short gap inside the open stream: read past it
                    self._take(self._resp, pos - self._at)  # type: ignore[arg-type]
                    self._at = pos
                data = self._resp.read(min(n, self._end - pos))  # type: ignore[union-attr]
            except (OSError, http.client.HTTPException):
                data = b""
            if data:
                self.received += len(data)
                self._at += len(data)
                return data
            self._drop()  # the connection ended early: ask again from here
            time.sleep(attempt)
        raise OSError(f"{self.url}: the server stopped sending at byte {pos} ({ATTEMPTS} tries)")

    def _stream_end(self, pos: int, n: int) -> int:
        i = bisect_right(self._spans, (pos, self.size)) - 1
        planned = (
            self._spans[i][1] if i >= 0 and self._spans[i][0] <= pos < self._spans[i][1] else 0
        )
        return min(max(planned, pos + n, pos + READAHEAD), self._tail_start)

    def _open(self, start: int, end: int) -> None:
        self._drop()
        resp = self._request(f"bytes={start}-{end - 1}")
        got = self._content_range(resp) if resp.status == 206 else None
        if got is None or got[0] != start:
            resp.close()
            raise OSError(f"{self.url}: asked for bytes {start}-{end - 1}, got HTTP {resp.status}")
        self._resp, self._at, self._end = resp, start, got[1] + 1

    def _request(self, byte_range: str) -> http.client.HTTPResponse:
        req = urllib.request.Request(
            self.url, headers={"Range": byte_range, "Accept-Encoding": "identity"}
        )
        for attempt in range(ATTEMPTS):
            self.requests += 1
            try:
                return self._opener.open(req, timeout=self._timeout)
            except urllib.error.HTTPError:
                raise
            except OSError as error:  # URLError, a timeout, a reset connection: try again
                failed = error
                time.sleep(1 + attempt)
        raise OSError(f"{self.url}: {failed} ({ATTEMPTS} tries)")

    def _content_range(self, resp: http.client.HTTPResponse) -> tuple[int, int, int]:
        m = _CONTENT_RANGE.fullmatch(resp.headers.get("Content-Range", ""))
        if m is None:
            resp.close()
            raise OSError(f"{self.url}: HTTP 206 without a usable Content-Range")
        start, last, size = (int(g) for g in m.groups())
        return start, last, size

    def _take(self, resp: http.client.HTTPResponse, n: int) -> bytes:
        data = resp.read(n)
        self.received += len(data)
        if len(data) != n:
            raise OSError(f"{self.url}: expected {n} bytes, the server sent {len(data)}")
        return data

    def _drop(self) -> None:
        if self._resp is not None:
            self._resp.close()
        self._resp = None


def opener_for(wheel: IndexWheel) -> urllib.request.OpenerDirector:
    """urllib with pip's CA bundle and proxy."""
    handlers: list[urllib.request.BaseHandler] = [
        urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=wheel.cafile))
    ]
    if wheel.proxy:
        handlers.append(urllib.request.ProxyHandler({"http": wheel.proxy, "https": wheel.proxy}))
    return urllib.request.build_opener(*handlers)


def wheel_members(
    name: str,
    requirement: str,
    pip_args: Sequence[str],
    patterns: Sequence[str],
    cache: Path,
    siblings: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Path:
    """``cache/name``: the members of the wheel matching ``patterns`` (fnmatch), fetched once.

    ``cache/name.json`` (written last) records the wheel's URL and sha256, the patterns, how
    the members were fetched and each member's size, CRC32 and sha256. ``siblings``: the
    other requirements (same ``pip_args``) the caller will ask for next — one pip run locates
    them all (pip reads the project's index page once).
    """
    dest, record_path = cache / name, cache / f"{name}.json"
    if _covers(record_path, patterns) and dest.is_dir():
        return dest
    wheel = _located(requirement, pip_args, siblings, env)
    cache.mkdir(parents=True, exist_ok=True)
    # fetched aside and moved in whole, so a run stopped half-way (or another run fetching the
    # same wheel) never leaves a directory that looks complete
    with tempfile.TemporaryDirectory(dir=cache, prefix=f".{name}-") as tmp:
        record = fetch(wheel, patterns, Path(tmp) / name)
        if _covers(record_path, patterns):  # another run finished first
            return dest
        if dest.exists():
            shutil.rmtree(dest)  # members of an earlier, narrower fetch
        os.replace(Path(tmp) / name, dest)
        (Path(tmp) / "record").write_text(json.dumps(record, indent=1) + "\n")
        os.replace(Path(tmp) / "record", record_path)
    return dest


def _covers(record_path: Path, patterns: Sequence[str]) -> bool:
    if not record_path.is_file():
        return False
    return set(patterns) <= set(json.loads(record_path.read_text())["patterns"])


_LOCATED: dict[tuple, IndexWheel] = {}


def _located(
    requirement: str,
    pip_args: Sequence[str],
    siblings: Sequence[str],
    env: Mapping[str, str] | None,
) -> IndexWheel:
    context = (tuple(pip_args), tuple(sorted(env.items())) if env is not None else None)
    if (requirement, *context) not in _LOCATED:
        wanted = dict.fromkeys([requirement, *siblings])
        todo = [req for req in wanted if (req, *context) not in _LOCATED]
        for req, wheel in resolve(todo, pip_args, env).items():
            _LOCATED[(req, *context)] = wheel
    return _LOCATED[(requirement, *context)]


def fetch(wheel: IndexWheel, patterns: Sequence[str], dest: Path) -> dict:
    """Extract the members matching ``patterns`` into ``dest``; the record of what was done."""
    scheme = urllib.parse.urlsplit(wheel.url).scheme
    record: dict = {
        "requirement": wheel.requirement,
        "url": wheel.url,
        "filename": wheel.filename,
        "sha256": wheel.sha256,
        "patterns": sorted(patterns),
    }
    if scheme == "file":
        path = urllib.request.url2pathname(urllib.parse.urlsplit(wheel.url).path)
        with open(path, "rb") as local:
            record["via"] = "local file"
            record["members"] = _extract(local, patterns, dest, wheel.filename)
        return record
    opener = opener_for(wheel)
    try:
        remote = RangeFile(wheel.url, opener, wheel.timeout)
    except RangeIgnored as ignored:
        warnings.warn(
            f"{wheel.url}: the server ignored the Range request (HTTP 200): downloading the "
            f"whole wheel for {wheel.requirement}",
            stacklevel=2,
        )
        with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            whole = _download(ignored.response, wheel, Path(tmp) / wheel.filename)
            with open(whole, "rb") as local:
                record["members"] = _extract(local, patterns, dest, wheel.filename)
            record["via"] = "full download (the server ignored Range)"
            record["size"] = record["received"] = whole.stat().st_size
            record["requests"] = 1
        return record
    with remote:
        record["members"] = _extract(remote, patterns, dest, wheel.filename, remote)
        record.update(
            via="HTTP Range", size=remote.size, received=remote.received, requests=remote.requests
        )
    return record


def _download(resp: http.client.HTTPResponse, wheel: IndexWheel, path: Path) -> Path:
    digest = hashlib.sha256()
    with resp, open(path, "wb") as out:
        while chunk := resp.read(CHUNK):
            digest.update(chunk)
            out.write(chunk)
    if wheel.sha256 and digest.hexdigest() != wheel.sha256:
        raise OSError(
            f"{wheel.url}: sha256 {digest.hexdigest()}, the index says {wheel.sha256}: "
            "a damaged download; run the test again"
        )
    return path


def _extract(
    source: io.RawIOBase | io.BufferedReader,
    patterns: Sequence[str],
    dest: Path,
    label: str,
    remote: RangeFile | None = None,
) -> dict[str, dict]:
    with zipfile.ZipFile(source) as zf:
        infos = zf.infolist()
        wanted = [i for i in infos if any(fnmatch.fnmatchcase(i.filename, p) for p in patterns)]
        records = [i for i in infos if re.fullmatch(r"[^/]+\.dist-info/RECORD", i.filename)]
        if len(records) != 1:
            raise OSError(f"{label}: {len(records)} .dist-info/RECORD files, expected one")
        if remote is not None:
            starts = sorted({i.header_offset for i in infos} | {zf.start_dir})
            remote.plan(
                [
                    (i.header_offset, starts[bisect_right(starts, i.header_offset)])
                    for i in (*wanted, *records)
                ]
            )
        members = {}
        for info in sorted(wanted, key=lambda i: i.header_offset):
            members[info.filename] = _extract_one(zf, info, dest)
        listed = _record_hashes(zf.read(records[0]).decode())
    for member, got in members.items():
        if listed.get(member) != (got["sha256"], got["size"]):
            raise OSError(
                f"{label}: {member}: sha256 {got['sha256']} and size {got['size']}, "
                f"the wheel's RECORD says {listed.get(member)}"
            )
    return members


def _extract_one(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path) -> dict:
    target = (dest / info.filename).resolve()
    if not target.is_relative_to(dest.resolve()) or info.is_dir():
        raise OSError(f"refusing the zip member {info.filename!r}")
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    tmp = target.with_name(target.name + ".part")
    with zf.open(info) as src, open(tmp, "wb") as out:  # zipfile checks the CRC32 at the end
        while chunk := src.read(CHUNK):
            digest.update(chunk)
            out.write(chunk)
    mode = (info.external_attr >> 16) & 0o777
    if mode:
        tmp.chmod(mode)
    os.replace(tmp, target)
    return {"size": info.file_size, "crc32": f"{info.CRC:08x}", "sha256": digest.hexdigest()}


def _record_hashes(text: str) -> dict[str, tuple[str, int]]:
    """RECORD's ``path,sha256=<urlsafe base64>,size`` rows as {path: (hex sha256, size)}."""
    out = {}
    for row in csv.reader(io.StringIO(text)):
        if len(row) == 3 and row[1].startswith("sha256="):
            raw = base64.urlsafe_b64decode(row[1][len("sha256=") :] + "==")
            out[row[0]] = (raw.hex(), int(row[2]))
    return out
