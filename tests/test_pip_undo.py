"""The pieces of the pip plans' undo, run for real without pip (fast; the whole plans run with
the real pip in ``test_fix_pip_real.py``): the ``pip freeze`` parsing in sh, the venv snapshot
and the leftover sweep with a real venv's interpreter, and the PyTorch index override."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from factsmaker import make_facts

from tui.core.fixes import FixError, build_plan
from tui.core.fixes.pipplan import FREEZE_NAMES, FREEZE_PINS, LEFTOVERS, SNAPSHOT, STATE_DIR
from tui.core.fixes.undo import new_record, undo_plan, undo_steps_of
from tui.core.hosts import Host
from tui.core.tables.torch_index import INDEX_ENV, TORCH_INDEX, IndexSettingError, index_url

# `pip freeze --all` as pip 23–25 print it: pins, a wheel installed from a file, an
# editable install, the comment pip adds before it
FREEZE = """\
nvidia-cuda-runtime-cu12==12.8.90
# Editable install with no version control (mypkg==0.1)
-e /src/mypkg
torch==2.9.1+cpu
torchvision @ file:///srv/wheels%20new/torchvision-0.24.1-cp311-cp311-linux_x86_64.whl
pip==25.0.1
"""


def _sh(command: str, tmp_path: Path) -> list[str]:
    (tmp_path / "freeze.txt").write_text(FREEZE)
    out = subprocess.run(
        ["sh", "-c", f"{command} freeze.txt"], cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_freeze_names_include_packages_from_files(tmp_path: Path) -> None:
    names = ["nvidia-cuda-runtime-cu12", "torch", "torchvision", "pip"]
    assert _sh(FREEZE_NAMES, tmp_path) == names


def test_freeze_pins_are_exact_and_keep_the_url(tmp_path: Path) -> None:
    assert _sh(FREEZE_PINS, tmp_path) == [
        "nvidia-cuda-runtime-cu12===12.8.90",
        "torch===2.9.1+cpu",
        "torchvision @ file:///srv/wheels%20new/torchvision-0.24.1-cp311-cp311-linux_x86_64.whl",
        "pip===25.0.1",
    ]


# -- the snapshot and the sweep, with a real venv's interpreter -----------------------------------


def _dist(site: Path, name: str, version: str, files: dict[str, str]) -> None:
    """A dist-info as pip writes it (RECORD lines end in CRLF: csv.writer's default)."""
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    record = [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
        record.append(f"{rel},,")
    (info / "RECORD").write_bytes("".join(f"{r}\r\n" for r in record).encode())


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_the_sweep_moves_aside_only_what_is_new_and_unowned(tmp_path: Path) -> None:
    """A venv before pip ran (torch 2.9.1+cpu, a user's notes file, an empty directory) and
    after a cut install and the undo's reinstall: pip's ``~orch`` stash, the new torch half
    written, an empty parent directory an uninstall left, a new package that is installed,
    the REQUESTED marker the reinstall put on torch. The sweep moves aside the stash, the
    half-written files and the marker (out of RECORD too), removes the empty directory that
    is new, and touches nothing else that was there before or that a package owns."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site_rel = f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    site = venv / site_rel
    torch_files = {"torch/__init__.py": "", "torch/version.py": "__version__ = '2.9.1+cpu'\n"}
    _dist(site, "torch", "2.9.1+cpu", torch_files)
    (site / "notes.txt").write_text("mine\n")
    (venv / "share" / "empty-before").mkdir(parents=True)
    state = venv / STATE_DIR
    state.mkdir()
    paths = state / "pip-freeze-s.txt.paths"
    subprocess.run([python, "-I", "-c", SNAPSHOT, str(venv), str(paths)], check=True)
    before = _tree(venv)
    assert f"{STATE_DIR}/pip-freeze-s.txt.paths" in before  # the sweep excludes it itself
    assert f"{site_rel}/torch/version.py" in json.loads(paths.read_text())

    record = (site / "torch-2.9.1+cpu.dist-info" / "RECORD").read_bytes()
    _dist(site, "torch", "2.9.1+cpu", {**torch_files, "torch-2.9.1+cpu.dist-info/REQUESTED": ""})
    (site / "~orch").mkdir()
    (site / "~orch" / "version.py").write_text("__version__ = '2.9.1+cpu'\n")
    (site / "torch" / "lib").mkdir()
    (site / "torch" / "lib" / "padding.bin").write_bytes(b"\0" * 64)
    (site / "nvidia" / "cu13" / "include" / "cccl").mkdir(parents=True)
    _dist(site, "vllm", "0.10.1", {"vllm/__init__.py": ""})
    (site / "vllm" / "link").symlink_to("__init__.py")  # new and unowned: moved as a link

    aside = state / "pip-leftovers-s"
    sweep = [python, "-I", "-c", LEFTOVERS, str(venv), str(paths), str(aside)]
    out = subprocess.run(sweep, capture_output=True, text=True, check=True).stdout
    assert out.startswith(f"moved aside to {aside} what pip left behind: ")
    moved = {
        f"{site_rel}/torch-2.9.1+cpu.dist-info/REQUESTED",
        f"{site_rel}/~orch/version.py",
        f"{site_rel}/torch/lib/padding.bin",
        f"{site_rel}/vllm/link",
    }
    assert {str(p.relative_to(aside)) for p in aside.rglob("*") if not p.is_dir()} == moved
    assert (aside / site_rel / "vllm" / "link").is_symlink()
    assert (site / "torch-2.9.1+cpu.dist-info" / "RECORD").read_bytes() == record
    vllm = {f"{site_rel}/vllm", f"{site_rel}/vllm/__init__.py", f"{site_rel}/vllm-0.10.1.dist-info"}
    vllm |= {f"{site_rel}/vllm-0.10.1.dist-info/{n}" for n in ("METADATA", "RECORD")}
    assert {p for p in _tree(venv) if not p.startswith(STATE_DIR)} == {
        p for p in before | vllm if not p.startswith(STATE_DIR)
    }
    again = subprocess.run(sweep, capture_output=True, text=True, check=True)
    assert again.stdout == ""  # nothing left to move: the sweep can run again


# -- the index override ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "url"),
    [
        ("", "https://download.pytorch.org/whl/cu128"),
        (
            "https://mirror.example/pytorch/{variant}/simple",
            "https://mirror.example/pytorch/cu128/simple",
        ),
        ("https://mirror.example/pytorch/", "https://mirror.example/pytorch/cu128"),
        ("file:///srv/torch-index", "file:///srv/torch-index/cu128"),
    ],
)
def test_index_override(value: str, url: str) -> None:
    assert TORCH_INDEX == "https://download.pytorch.org/whl/{variant}"
    assert index_url("cu128", {INDEX_ENV: value}) == url


@pytest.mark.parametrize(
    "value", ["mirror.example/pytorch", "https://mirror.example/a b", "https://m/{variant}/{x}"]
)
def test_a_bad_override_is_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(IndexSettingError, match=INDEX_ENV):
        index_url("cu128", {INDEX_ENV: value})


CPU = dict(  # test_torch_cpu_build's host: torch 2.9.1+cpu in a vLLM venv on 4× H100
    gpus=("9.0",) * 4,
    driver="570.148.08",
    torch_cuda=None,
    torch_version="2.9.1+cpu",
    flashinfer=None,
    packages={"vllm": "0.11.0"},
)


def test_the_plans_take_the_override_and_refuse_a_bad_one(monkeypatch: pytest.MonkeyPatch) -> None:
    host = Host(name="h", ssh="h")
    monkeypatch.setenv(INDEX_ENV, "https://mirror.example/pytorch/{variant}/simple")
    plan = build_plan(make_facts(**CPU), host, "install-cuda-torch", {"cuda": "12.8"})
    mirror = "--extra-index-url https://mirror.example/pytorch/cu128/simple"
    assert mirror in plan.steps[0].command and mirror in (plan.steps[0].undo or "")
    assert "download.pytorch.org" not in plan.steps[0].command
    monkeypatch.setenv(INDEX_ENV, "mirror.example/pytorch")
    with pytest.raises(FixError, match=f"{INDEX_ENV}='mirror.example/pytorch' is not an index URL"):
        build_plan(make_facts(**CPU), host, "install-cuda-torch", {"cuda": "12.8"})


def test_the_override_is_quoted_into_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(INDEX_ENV, "https://mirror.example/p;reboot/{variant}")
    host = Host(name="h", ssh="h")
    plan = build_plan(make_facts(**CPU), host, "install-cuda-torch", {"cuda": "12.8"})
    url = shlex.quote("https://mirror.example/p;reboot/cu128")
    assert url.startswith("'") and f"--extra-index-url {url} " in plan.steps[0].command


def test_the_undo_of_a_pip_step_gets_the_step_s_deadline(tmp_path: Path) -> None:
    """A pip undo reinstalls (a CUDA torch is GBs): it runs under the step's own 1800 s, not
    the 120 s a step gets by default (the remote ``timeout`` would cut the reinstall)."""
    host = Host(name="h", ssh="h")
    plan = build_plan(make_facts(**CPU), host, "install-cuda-torch", {"cuda": "12.8"})
    record = new_record(plan, "r1", tmp_path / "r1.json", "2026-11-29T12:00:00")
    journal = tuple(replace(s, status="changed") for s in record.journal)
    record = replace(record, journal=journal, steps=undo_steps_of(journal))
    (step,) = undo_plan(record, host, sudo=False, stamp="s").steps
    assert step.deadline_s == plan.steps[0].deadline_s == 1800.0
    assert step.command == plan.steps[0].undo
