"""A unit's ``EnvironmentFile=`` overrides ``Environment=``, as systemd applies them.

systemd reads the files named by ``EnvironmentFile=`` (the unit file's, then the drop-ins',
sorted by name; an empty value resets the list; ``-`` makes a file optional) and their
variables override ``Environment=`` ones, a later file winning. These tests run the real read
script with ``sh`` against throwaway trees; the plans that follow from it are in
test_fix_unit_envfile.py, the fixes run over sshd in test_fix_unit_envfile_sshd.py.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unit_envfile_host import (
    UNIT,
    UNIT_FILE,
)

from tui.core.facts.parsers import environment_file_paths, environment_files
from tui.core.fixes.envset import env_file_text
from tui.core.fixes.unitenv import parse_environment_file, unit_files_script, unit_start
from tui.core.hosts import Host


def write(root: Path, path: str, text: str) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def read_unit(root: Path, unit: str = UNIT):
    """The real read script, run by sh against the tree: what a fix's verdict sees."""
    script = unit_files_script(Host(name="t", root=str(root), simulate="tree"), unit)
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return unit_start(done.stdout, unit)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "host root $HOME; x"


def test_environment_file_overrides_environment(root: Path) -> None:
    write(root, UNIT_FILE, "[Service]\nEnvironment=A=unit B=unit\nEnvironmentFile=/etc/a.env\n")
    write(root, "/etc/a.env", "A=file\n")
    start = read_unit(root)
    assert start.env == {"A": "file", "B": "unit"}
    assert start.env_files == ("/etc/a.env",)
    assert start.missing_env_files == () and start.problems == ()


def test_environment_file_wins_even_when_environment_comes_later(root: Path) -> None:
    write(root, UNIT_FILE, "[Service]\nEnvironmentFile=/etc/a.env\n")
    write(root, f"etc/systemd/system/{UNIT}.d/override.conf", "[Service]\nEnvironment=A=dropin\n")
    write(root, "/etc/a.env", "A=file\n")
    assert read_unit(root).env == {"A": "file"}


def test_files_apply_in_order_unit_file_then_dropins_by_name_later_wins(root: Path) -> None:
    write(root, UNIT_FILE, "[Service]\nEnvironmentFile=/etc/1.env\n")
    write(root, f"etc/systemd/system/{UNIT}.d/20-b.conf", "[Service]\nEnvironmentFile=/etc/3.env\n")
    # a drop-in under /run sorts by name among those of /etc: 10- comes before 20-
    write(root, f"run/systemd/system/{UNIT}.d/10-a.conf", "[Service]\nEnvironmentFile=/etc/2.env\n")
    write(root, "/etc/1.env", "A=1\nB=1\nC=1\n")
    write(root, "/etc/2.env", "B=2\nC=2\n")
    write(root, "/etc/3.env", "C=3\n")
    start = read_unit(root)
    assert start.env == {"A": "1", "B": "2", "C": "3"}
    assert start.env_files == ("/etc/1.env", "/etc/2.env", "/etc/3.env")


def test_a_missing_file_with_dash_is_ignored_without_it_the_unit_would_not_start(
    root: Path,
) -> None:
    write(
        root,
        UNIT_FILE,
        "[Service]\nEnvironment=A=unit\nEnvironmentFile=-/etc/optional.env\n"
        "EnvironmentFile=/etc/required.env\n",
    )
    start = read_unit(root)
    assert start.env == {"A": "unit"}
    assert start.env_files == ()
    assert start.missing_env_files == ("/etc/required.env",)
    (problem,) = start.problems
    assert "EnvironmentFile=/etc/required.env does not exist" in problem
    assert "systemd refuses to start the unit" in problem
    assert "EnvironmentFile=-/etc/required.env" in problem


def test_an_empty_value_resets_the_list(root: Path) -> None:
    write(root, UNIT_FILE, "[Service]\nEnvironment=A=unit\nEnvironmentFile=/etc/gone.env\n")
    write(root, f"etc/systemd/system/{UNIT}.d/50-x.conf", "[Service]\nEnvironmentFile=\n")
    write(root, "/etc/gone.env", "A=file\n")
    start = read_unit(root)
    assert start.env == {"A": "unit"}
    assert start.env_files == () and start.missing_env_files == ()


def test_file_syntax_quotes_comments_export_blanks_and_globs(root: Path) -> None:
    write(
        root,
        UNIT_FILE,
        "[Unit]\nEnvironmentFile=/etc/not-service.env\n"
        "[Service]\n  EnvironmentFile =  -/etc/sglang.d/*.env\n"
        "#EnvironmentFile=/etc/commented.env\n",
    )
    write(root, "/etc/not-service.env", "A=wrong-section\n")
    write(root, "/etc/commented.env", "A=commented\n")
    write(
        root,
        "/etc/sglang.d/10-first.env",
        "# comment\n; another\nexport A='single $HOME'\nB=\"double quoted\"\nC=plain\n",
    )
    write(root, "/etc/sglang.d/20-second.env", "C=second\n")
    write(root, "/etc/sglang.d/30-not-matched.conf", "C=ignored\n")
    start = read_unit(root)
    assert start.env == {"A": "single $HOME", "B": "double quoted", "C": "second"}
    assert start.env_files == ("/etc/sglang.d/10-first.env", "/etc/sglang.d/20-second.env")


def test_hostile_file_names_are_read_not_run(root: Path, tmp_path: Path) -> None:
    name = "/etc/a b;$(touch PWNED)`touch PWNED2`.env"
    write(root, UNIT_FILE, f"[Service]\nEnvironmentFile={name}\n")
    write(root, name, "A=read\n")
    start = read_unit(root)
    assert start.env == {"A": "read"}
    assert start.env_files == (name,)
    assert not list(tmp_path.rglob("PWNED*"))


def test_the_probe_rules_for_environment_file_values() -> None:
    values = ["/etc/a", "-/etc/b", "relative/ignored", "", "/etc/c d", " -/etc/e "]
    assert environment_files(values) == (("/etc/c d", False), ("/etc/e", True))
    assert environment_file_paths(values) == ("/etc/c d", "/etc/e")


VALUES = st.text(
    alphabet=st.characters(
        codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp"), exclude_characters="\x85"
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(VALUES, min_size=1, max_size=3))
def test_our_environment_file_reads_back_unchanged(tmp_path_factory, values: list[str]) -> None:
    """What the fix writes is read back as written by the verdict's parser and by sh."""
    names = [f"DT_VAR_{i}" for i in range(len(values))]
    text = env_file_text(
        "use-installed-toolkit", UNIT, [f"{k}={v}" for k, v in zip(names, values, strict=True)]
    )
    assert parse_environment_file(text) == dict(zip(names, values, strict=True))
    path = tmp_path_factory.mktemp("env") / "x.env"
    path.write_text(text + "\n")
    shown = subprocess.run(
        [
            "sh",
            "-c",
            f". {shlex.quote(str(path))}; " + " ".join(f'printf "%s\\0" "${n}";' for n in names),
        ],
        capture_output=True,
        timeout=30,
    )
    assert shown.stdout.decode().split("\0")[:-1] == values
