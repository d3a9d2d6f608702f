"""``tests/wheel_ranges.py`` against an HTTP server on loopback: members read with Range
requests, the full-download fallback when Range is ignored, and every check that can refuse
a damaged member (CRC32, the wheel's RECORD, the index's sha256). The last test goes through
pip's own finder with a loopback package index."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import random
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from wheel_ranges import IndexWheel, fetch, wheel_members

WHEEL = "demo-1.0-py3-none-any.whl"
WANTED = ("demo/lib/libdemo.so", "demo/version.py")


def _noise(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)  # incompressible: the zip holds it at full size


def make_wheel(path: Path, record_lies: bool = False) -> dict[str, bytes]:
    """A wheel whose wanted members sit between two large ones the tests must not fetch."""
    members = {
        "demo/__init__.py": b"",
        "demo/before.bin": _noise(3 << 20, 1),
        "demo/lib/libdemo.so": _noise(5 << 19, 2),  # 2.5 MB: more than one read of zipfile
        "demo/version.py": b"__version__ = '1.0'\n",
        "demo/after.bin": _noise(3 << 20, 3),
        "demo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
    }
    rows = []
    for name, data in members.items():
        digest = hashlib.sha256(b"lie" if record_lies and name == WANTED[1] else data).digest()
        b64 = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        rows.append(f"{name},sha256={b64},{len(data)}")
    rows.append("demo-1.0.dist-info/RECORD,,")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr("demo-1.0.dist-info/RECORD", "\n".join(rows) + "\n")
    return members


class Server:
    """Serves ``files`` ({path: bytes}) on 127.0.0.1; honours ``Range`` when ``ranges``."""

    def __init__(self, files: dict[str, bytes], ranges: bool) -> None:
        self.files, self.ranges, self.requests = files, ranges, 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests += 1
                body = server.files.get(self.path.split("#")[0])
                if body is None:
                    self.send_error(404)
                    return
                spec = self.headers.get("Range", "")
                if server.ranges and spec.startswith("bytes="):
                    first, _, last = spec[len("bytes=") :].partition("-")
                    if first == "":
                        start, end = max(0, len(body) - int(last)), len(body)
                    else:
                        start, end = int(first), min(len(body), int(last) + 1)
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(body)}")
                    body = body[start:end]
                else:
                    self.send_response(200)
                html = self.path.endswith("/")
                self.send_header("Content-Type", "text/html" if html else "application/zip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator:
    started: list[Server] = []

    def start(files: dict[str, bytes], ranges: bool = True) -> Server:
        started.append(Server(files, ranges))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def index_wheel(server: Server, blob: bytes, sha256: str | None = None) -> IndexWheel:
    server.files[f"/files/{WHEEL}"] = blob
    return IndexWheel(
        "demo==1.0",
        f"{server.url}/files/{WHEEL}",
        WHEEL,
        sha256 or hashlib.sha256(blob).hexdigest(),
        timeout=30,
    )


def test_only_the_wanted_members_cross_the_wire(tmp_path: Path, serve) -> None:
    members = make_wheel(tmp_path / WHEEL)
    blob = (tmp_path / WHEEL).read_bytes()
    server = serve({})
    record = fetch(index_wheel(server, blob), WANTED, tmp_path / "out")
    for name in WANTED:
        assert (tmp_path / "out" / name).read_bytes() == members[name]
    assert sorted(p.name for p in (tmp_path / "out").rglob("*") if p.is_file()) == [
        "libdemo.so",
        "version.py",
    ]
    assert record["via"] == "HTTP Range" and record["size"] == len(blob)
    # the end record, the directory, one request for both members, one for RECORD: 2.5 MB of
    # the 8.5 MB
    assert record["received"] < 3 << 20 and record["requests"] <= 4, record
    assert server.requests == record["requests"]
    so = record["members"]["demo/lib/libdemo.so"]
    assert so["sha256"] == hashlib.sha256(members["demo/lib/libdemo.so"]).hexdigest()


def test_a_server_that_ignores_range_gets_the_full_download(tmp_path: Path, serve) -> None:
    members = make_wheel(tmp_path / WHEEL)
    blob = (tmp_path / WHEEL).read_bytes()
    server = serve({}, ranges=False)
    with pytest.warns(UserWarning, match="ignored the Range request.*whole wheel"):
        record = fetch(index_wheel(server, blob), WANTED, tmp_path / "out")
    assert (tmp_path / "out" / WANTED[0]).read_bytes() == members[WANTED[0]]
    assert record["via"] == "full download (the server ignored Range)"
    assert record["received"] == len(blob) and server.requests == 1
    assert not list(tmp_path.glob("tmp*"))  # the whole wheel is not kept


def test_a_full_download_with_another_sha256_is_refused(tmp_path: Path, serve) -> None:
    make_wheel(tmp_path / WHEEL)
    server = serve({}, ranges=False)
    wheel = index_wheel(server, (tmp_path / WHEEL).read_bytes(), sha256="0" * 64)
    with pytest.warns(UserWarning), pytest.raises(OSError, match="the index says 0000"):
        fetch(wheel, WANTED, tmp_path / "out")


def test_a_member_that_differs_from_the_wheels_record_is_refused(tmp_path: Path, serve) -> None:
    make_wheel(tmp_path / WHEEL, record_lies=True)
    server = serve({})
    wheel = index_wheel(server, (tmp_path / WHEEL).read_bytes())
    with pytest.raises(OSError, match=r"demo/version\.py: sha256 .* the wheel.s RECORD says"):
        fetch(wheel, WANTED, tmp_path / "out")


def test_a_damaged_member_fails_its_crc(tmp_path: Path, serve) -> None:
    members = make_wheel(tmp_path / WHEEL)
    blob = bytearray((tmp_path / WHEEL).read_bytes())
    at = blob.index(members["demo/lib/libdemo.so"][1000:1032])  # stored as is: incompressible
    blob[at] ^= 0xFF
    server = serve({})
    with pytest.raises(zipfile.BadZipFile, match="CRC"):
        fetch(index_wheel(server, bytes(blob)), WANTED, tmp_path / "out")


def test_pip_locates_the_wheel_on_its_index_and_the_cache_keeps_it(tmp_path: Path, serve) -> None:
    members = make_wheel(tmp_path / WHEEL)
    blob = (tmp_path / WHEEL).read_bytes()
    sha = hashlib.sha256(blob).hexdigest()
    page = f'<a href="/files/{WHEEL}#sha256={sha}">{WHEEL}</a>\n'.encode()
    server = serve({"/simple/demo/": page, f"/files/{WHEEL}": blob})
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=f"{server.url}/simple", PIP_NO_CACHE_DIR="1"
    )
    args = (
        "--only-binary=:all:",
        "--python-version",
        "3.12",
        "--platform",
        "manylinux_2_28_x86_64",
    )
    cache = tmp_path / "cache"
    dest = wheel_members("demo-1.0", "demo==1.0", args, WANTED, cache, env=env)
    assert (dest / WANTED[0]).read_bytes() == members[WANTED[0]]
    record = json.loads((cache / "demo-1.0.json").read_text())
    assert (record["url"], record["sha256"]) == (f"{server.url}/files/{WHEEL}", sha)
    assert record["received"] < len(blob) // 2
    asked = server.requests
    assert wheel_members("demo-1.0", "demo==1.0", args, WANTED[1:], cache, env=env) == dest
    assert server.requests == asked  # a cache hit asks neither pip nor the server
    wider = (*WANTED, "demo-1.0.dist-info/METADATA")
    assert wheel_members("demo-1.0", "demo==1.0", args, wider, cache, env=env) == dest
    assert server.requests > asked
    assert sorted(p.name for p in dest.rglob("*") if p.is_file()) == [
        "METADATA",
        "libdemo.so",
        "version.py",
    ]
    assert sorted(p.name for p in cache.iterdir()) == ["demo-1.0", "demo-1.0.json"]
