"""Fix plans' shell snippets, run for real by sh against throwaway directory trees: quoting of
hostile paths, idempotence and undo are properties of the real shell, not of string comparisons.
"""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
from pathlib import Path

from ct200_plans import (
    STAMP,
    ct200_facts,
)

from tui.core.facts import EnvContext, Facts, PythonEnv, Toolkit
from tui.core.fixes import build_plan
from tui.core.fixes.confine import with_resolver
from tui.core.fixes.plan import parse_flags
from tui.core.hosts import Host


def sh(command: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    return subprocess.run(
        ["sh", "-c", with_resolver(command)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=30,
    )


HOSTILE_TOOLKIT = "/opt/cuda 13.0;$(touch PWNED)`touch PWNED2`"
HOSTILE_VENV = "/opt/my venv $HOME;x"


def hostile_setup(tmp_path: Path) -> tuple[Host, Facts, Path, Path]:
    root = tmp_path / "fake root $USER; rm -rf ~"
    venv = Path(str(root) + HOSTILE_VENV)
    (venv / "bin").mkdir(parents=True)
    activate = venv / "bin" / "activate"
    activate.write_text('VIRTUAL_ENV="/opt/my venv $HOME;x"\nexport VIRTUAL_ENV\n')
    py = f"{HOSTILE_VENV}/bin/python3"
    label = "pid 7 sglang"
    facts = dataclasses.replace(
        ct200_facts(),
        toolkits=(
            Toolkit(home=HOSTILE_TOOLKIT, nvcc=f"{HOSTILE_TOOLKIT}/bin/nvcc", version="13.0"),
        ),
        contexts=(
            EnvContext(
                kind="process",
                label=label,
                pid=7,
                exe=py,
                unit="sglang.service",
                vars={"PATH": "/usr/bin:/bin"},
            ),
        ),
        pythons=(
            PythonEnv(path=py, prefix=HOSTILE_VENV, context=label, flashinfer_version="0.6.8"),
        ),
    )
    host = Host(name="hostile", local=True, root=str(root))
    return host, facts, root, activate


def test_hostile_paths_survive_quoting(tmp_path: Path) -> None:
    from tui.core.fixes.unitenv import parse_environment

    host, facts, root, activate = hostile_setup(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    plan = build_plan(facts, host, "use-installed-toolkit", {"path": HOSTILE_TOOLKIT}, stamp=STAMP)
    for command in plan.preview_commands():
        done = sh(command, home, tmp_path)
        assert done.returncode == 0, done.stderr
        assert "@@dt changed" in done.stdout
    assert not list(tmp_path.rglob("PWNED*"))
    dropin = root / "etc/systemd/system/sglang.service.d/50-detective-tui-cuda.conf"
    env = parse_environment([dropin.read_text()])
    assert env == {"CUDA_HOME": HOSTILE_TOOLKIT, "PATH": f"{HOSTILE_TOOLKIT}/bin:/usr/bin:/bin"}
    shown = sh(f". {shlex.quote(str(activate))}; printf '%s' \"$CUDA_HOME\"", home, tmp_path)
    assert shown.stdout == HOSTILE_TOOLKIT
    assert not list(tmp_path.rglob("PWNED*"))


def test_running_a_plan_twice_changes_nothing_and_undo_restores(tmp_path: Path) -> None:
    host, facts, root, activate = hostile_setup(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    original = activate.read_bytes()
    plan = build_plan(facts, host, "use-installed-toolkit", {"path": HOSTILE_TOOLKIT}, stamp=STAMP)
    for command in plan.preview_commands():
        sh(command, home, tmp_path)
    dropin = root / "etc/systemd/system/sglang.service.d/50-detective-tui-cuda.conf"
    after_first = (dropin.read_bytes(), activate.read_bytes())
    for command in plan.preview_commands():
        again = sh(command, home, tmp_path)
        flags = parse_flags(again.stdout)
        assert again.returncode == 0 and not flags.changed and flags.unchanged
    assert (dropin.read_bytes(), activate.read_bytes()) == after_first
    for step in reversed(plan.steps):
        assert step.undo is not None
        undone = sh(step.undo, home, tmp_path)
        assert undone.returncode == 0 and parse_flags(undone.stdout).changed
    assert activate.read_bytes() == original
    assert not dropin.exists()


def test_a_changed_parameter_replaces_the_block_instead_of_adding_one(tmp_path: Path) -> None:
    host, facts, _root, activate = hostile_setup(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    other = "/usr/local/cuda-13.0"
    facts = dataclasses.replace(
        facts, toolkits=(*facts.toolkits, Toolkit(home=other, nvcc=f"{other}/bin/nvcc"))
    )
    for path in (HOSTILE_TOOLKIT, other):
        plan = build_plan(facts, host, "use-installed-toolkit", {"path": path}, stamp=STAMP)
        assert sh(plan.preview_commands()[1], home, tmp_path).returncode == 0
    text = activate.read_text()
    assert text.count("# >>> detective-tui cuda >>>") == 1
    assert f"export CUDA_HOME={other}\n" in text


def test_jit_cache_is_moved_aside_never_deleted(tmp_path: Path) -> None:
    root = tmp_path / "r"
    cache = root / "root/.cache/flashinfer/0.6.8"
    cache.mkdir(parents=True)
    (cache / "sampling.so").write_text("old")
    host = Host(name="ct200", local=True, root=str(root))
    plan = build_plan(ct200_facts(), host, "clear-flashinfer-jit-cache", {}, stamp=STAMP)
    (step,) = plan.steps
    home = tmp_path
    assert "@@dt changed" in sh(plan.preview_commands()[0], home, tmp_path).stdout
    moved = root / f"root/.cache/flashinfer.moved-{STAMP}/0.6.8/sampling.so"
    assert moved.read_text() == "old" and not (root / "root/.cache/flashinfer").exists()
    assert "@@dt unchanged" in sh(plan.preview_commands()[0], home, tmp_path).stdout
    (root / "root/.cache/flashinfer").mkdir()
    refused = sh(step.undo or "", home, tmp_path)
    assert refused.returncode == 1 and "was rebuilt since the move" in refused.stderr
    (root / "root/.cache/flashinfer").rmdir()
    assert sh(step.undo or "", home, tmp_path).returncode == 0
    assert (cache / "sampling.so").read_text() == "old"


def test_a_file_without_a_final_newline_keeps_its_last_line(tmp_path: Path) -> None:
    host, facts, _root, activate = hostile_setup(tmp_path)
    activate.write_text("export VIRTUAL_ENV=/v")  # no newline at the end
    plan = build_plan(facts, host, "use-installed-toolkit", {"path": HOSTILE_TOOLKIT}, stamp=STAMP)
    assert sh(plan.preview_commands()[1], tmp_path, tmp_path).returncode == 0
    lines = activate.read_text().splitlines()
    assert lines[0] == "export VIRTUAL_ENV=/v"
    assert lines[1] == "# >>> detective-tui cuda >>>"


def test_a_block_that_lost_its_end_marker_is_not_edited(tmp_path: Path) -> None:
    host, facts, _root, activate = hostile_setup(tmp_path)
    damaged = "# >>> detective-tui cuda >>>\nexport CUDA_HOME=/old\nexport KEEP=me\n"
    activate.write_text(damaged)
    plan = build_plan(facts, host, "use-installed-toolkit", {"path": HOSTILE_TOOLKIT}, stamp=STAMP)
    done = sh(plan.preview_commands()[1], tmp_path, tmp_path)
    assert done.returncode == 1
    assert "block without its end marker; fix it by hand" in done.stderr
    assert str(activate) in done.stderr
    assert activate.read_text() == damaged
    # the undo acts only on what this run left (a backup, a created-marker): here nothing
    undo = sh(plan.steps[1].undo or "", tmp_path, tmp_path)
    assert undo.returncode == 0 and "nothing of this fix run in the file" in undo.stdout
    assert activate.read_text() == damaged
