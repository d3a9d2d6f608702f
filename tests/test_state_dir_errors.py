"""An unwritable or full state dir is one clear line, never a traceback, and a fix changes
nothing without its journal (issue 19, item 5)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from tui.cli import main
from tui.core import exitcodes
from tui.demo.fakehost import build_fake_host, reference_ct200


def tree_digest(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("command", ["diagnose", "fix"])
def test_a_state_dir_that_cannot_be_written_is_one_line(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake = build_fake_host(tmp_path / "ct200 root", reference_ct200(with_cuda13=True))
    entry = {"name": "ct200", "local": True, "root": str(fake.root), "env": fake.env}
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": [entry]}))
    blocked = tmp_path / "state-is-a-file"
    blocked.write_text("")  # every directory under it fails as a full or read-only disk would
    monkeypatch.setenv("XDG_STATE_HOME", str(blocked))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    before = tree_digest(fake.root)
    argv = {"diagnose": ["diagnose", "ct200"], "fix": ["fix", "ct200", "use-installed-toolkit"]}
    rc = main([*argv[command], "--hosts", str(inv), *(["--yes"] if command == "fix" else [])])
    err = capsys.readouterr().err
    assert rc == exitcodes.USAGE
    (line,) = err.splitlines()
    assert line.startswith(f"detective-tui: cannot write {blocked}/detective-tui")
    assert "Not a directory" in line and "Traceback" not in err
    assert tree_digest(fake.root) == before
