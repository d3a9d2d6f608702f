"""The headless probe table at 80 columns (issue 22 item 25): one block per host, each field
on its own line, so no word or path is split; wide terminals keep one row per host."""

from __future__ import annotations

import re

import pytest

from tui.cli import main

HOSTS = ["ct200", "gone-dark"]


def _probe(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cols: int) -> str:
    monkeypatch.setenv("COLUMNS", str(cols))
    main(["--demo", "probe", *HOSTS])
    return capsys.readouterr().out


def test_no_word_is_split_at_80_columns(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _probe(monkeypatch, capsys, 80)
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    cells = [[c.strip() for c in line.strip("│").split("│")] for line in lines if "│" in line]
    fields = {c[0]: c[1] for c in cells if len(c) == 2 and c[0]}
    assert fields["status"] == "unreachable"  # whole (was "unreachabl" / "e")
    assert "/root/venv_sglang211/bin/python3: torch 2.9.1+cu130" in out  # the path whole
    assert "12.8  /usr/local/cuda-12.8" in out
    assert [c[1] for c in cells if c[0] == "host"] == HOSTS
    assert not re.search(r"[a-z]│\s*$", out)  # no cell ends mid-word against the border


def test_a_wide_terminal_keeps_one_row_per_host(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _probe(monkeypatch, capsys, 200)
    assert "python / torch / FlashInfer" in out
    row = next(line for line in out.splitlines() if line.startswith("│ ct200 "))
    assert "│ ok " in row and "(CUDA 13.0)" in row
