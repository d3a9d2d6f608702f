"""``probe_script(cache_dir)``: the built probe is kept under the digest of its sources and read
back by later processes without ``ast``; the text is byte-identical to a fresh build, and a
kept file that is torn, changed, stale or not safely ours is never used."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import probes

REPO = Path(__file__).resolve().parents[1]
# a fresh interpreter: the kept script read back, whether ast was needed, the text's length
READ_BACK = (
    "import sys, probes; from pathlib import Path; s = probes.probe_script(Path(sys.argv[1])); "
    "print('ast' in sys.modules, len(s)); sys.stdout.flush()"
)


def _kept(cache: Path) -> list[Path]:
    return sorted(cache.glob(f"{probes.KEPT_PREFIX}*.sh"))


def _fresh_process(cache: Path) -> tuple[bool, int]:
    proc = subprocess.run(
        [sys.executable, "-c", READ_BACK, str(cache)],
        cwd=REPO, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    used_ast, length = proc.stdout.split()
    return used_ast == "True", int(length)


def test_the_kept_script_is_the_built_one_and_is_read_back_without_ast(tmp_path: Path) -> None:
    built = probes._build_script()
    assert probes.probe_script(tmp_path) == built == probes.probe_script()
    (kept,) = _kept(tmp_path)
    assert kept.stat().st_mode & 0o777 == 0o600
    head, body = kept.read_bytes().split(b"\n", 1)
    assert body == built.encode()  # byte for byte, after its checksum line
    assert head.decode() == hashlib.sha256(body).hexdigest()
    assert _fresh_process(tmp_path) == (False, len(built))


def test_a_torn_or_changed_kept_script_is_built_again(tmp_path: Path) -> None:
    built = probes._build_script()
    probes.probe_script(tmp_path)
    (kept,) = _kept(tmp_path)
    data = kept.read_bytes()
    for damaged in (data[: len(data) // 2], data.replace(b"@@DT1", b"@@DT2", 1), b""):
        kept.write_bytes(damaged)
        assert probes._read_kept(kept) is None
        assert _fresh_process(tmp_path) == (True, len(built))  # built, not read
        assert kept.read_bytes() == data  # and kept again, whole


def test_a_kept_script_others_may_write_is_not_used(tmp_path: Path) -> None:
    probes.probe_script(tmp_path)
    (kept,) = _kept(tmp_path)
    kept.chmod(0o622)
    assert probes._read_kept(kept) is None
    kept.chmod(0o600)
    assert probes._read_kept(kept) == probes._build_script()


def test_scripts_of_other_sources_are_removed_when_a_new_one_is_kept(tmp_path: Path) -> None:
    stale = tmp_path / f"{probes.KEPT_PREFIX}{'0' * 64}.sh"
    stale.write_text("0\nexit 1\n")
    unrelated = tmp_path / "other-file"
    unrelated.write_text("x")
    torn = tmp_path / f".{probes.KEPT_PREFIX}abc123"  # a writer killed before its rename
    torn.write_text("half a scr")
    probes.probe_script(tmp_path)
    assert not stale.exists() and not torn.exists() and unrelated.exists()
    assert len(_kept(tmp_path)) == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_cache_dir_that_cannot_be_written_still_gives_the_script(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert probes.probe_script(blocker / "cache") == probes._build_script()
    assert blocker.read_text() == "not a directory"
