"""A fix whose variable comes from the caller's own shell (issue 22 item 11): the change is
verified in the context it applies to (the activated venv), the output says where the old
value comes from and what to run in the current shell, and the run exits 0.

The host is the reference ct200 tree probed as ``local`` is (``simulate: shell``: its ``env``
is the caller's shell, which ``module load``ed CUDA 12.8); nothing else sets CUDA_HOME, and
the venv has the ``activate`` a ``python -m venv`` venv has."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
from pathlib import Path

import pytest
import yaml
from step_shims import tree_standins

from tui.cli import main
from tui.core import exitcodes
from tui.demo import fakehost

C128 = "/usr/local/cuda-12.8"
C130 = "/usr/local/cuda-13.0"
VENV = "/root/venv_sglang211"
ACTIVATE = f"""# This file must be used with "source bin/activate" *from bash*
deactivate () {{ :; }}
VIRTUAL_ENV={VENV}
export VIRTUAL_ENV
_OLD_VIRTUAL_PATH="$PATH"
PATH="$VIRTUAL_ENV/bin:$PATH"
export PATH
"""


@pytest.fixture(autouse=True)
def standins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    tree_standins(monkeypatch, tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def inventory(tmp_path: Path, simulate: str) -> tuple[Path, Path]:
    base = fakehost.reference_ct200(with_cuda13=True, service=False)
    # the caller's shell has CUDA 12.8 (`module load`); no profile sets it; a plain venv
    spec = dataclasses.replace(
        base,
        env={**base.env, "CUDA_HOME": C128, "PATH": f"{C128}/bin:{VENV}/bin:/usr/bin:/bin"},
        files={f"{VENV}/bin/activate": ACTIVATE},
    )
    fake = fakehost.build_fake_host(tmp_path / "ct200 root", spec)
    host = {
        "name": "ct200",
        "local": True,
        "root": str(fake.root),
        "simulate": simulate,
        "env": fake.env,
        "python": list(fake.pythons),
    }
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump({"hosts": [host]}))
    return path, fake.root


def fakehost_env(inv: Path) -> dict[str, str]:
    (host,) = yaml.safe_load(inv.read_text())["hosts"]
    return {"PATH": "/usr/bin:/bin", **host["env"]}


def fix(inv: Path, *extra: str) -> int:
    return main(
        [
            "fix",
            "ct200",
            "use-installed-toolkit",
            f"path={C130}",
            "--yes",
            *extra,
            "--hosts",
            str(inv),
        ]
    )


@pytest.mark.slow
def test_verified_in_the_activated_venv_and_says_what_to_run_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv, root = inventory(tmp_path, "shell")
    assert fix(inv) == exitcodes.OK
    out = capsys.readouterr().out
    assert f"export CUDA_HOME={C130}" in (root / VENV.lstrip("/") / "bin/activate").read_text()
    assert f"  after:  FlashInfer 0.6.8: CUDA 13.0 from {C130} → targets 12.0f → check pass" in out
    assert "Fixed: flashinfer-arch-rejected, nvcc-torch-major-mismatch" in out
    assert "NOT fixed" not in out
    assert (
        f"CUDA_HOME={C128} comes from the shell detective-tui was started from "
        "(a login shell has it too); no fix can change a shell that is already running."
    ) in out
    assert f"Verified in the venv activated afresh ({VENV}/bin/activate), where the change " in out
    assert f"In the current shell, run: . {VENV}/bin/activate (or: export CUDA_HOME={C130} " in out
    # what it says to run gives the verified environment: source the fixed activate here
    env = {**fakehost_env(inv), "VENV": str(root) + VENV}
    got = subprocess.run(
        ["sh", "-c", '. "$VENV/bin/activate" && printf %s "$CUDA_HOME"'],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert got == C130


@pytest.mark.slow
def test_json_and_the_control_without_the_callers_shell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv, _root = inventory(tmp_path / "shell", "shell")
    assert fix(inv, "--json") == exitcodes.OK
    (item,) = json.loads(capsys.readouterr().out)
    assert item["ok"] is True and item["resolved"] == [
        "flashinfer-arch-rejected",
        "nvcc-torch-major-mismatch",
    ]
    assert item["current_shell"][-1].startswith(f"In the current shell, run: . {VENV}/bin/activate")
    # control: the same tree judged in a login shell (no caller's shell): nothing to say there
    inv, _root = inventory(tmp_path / "tree", "tree")
    assert fix(inv, "--json") == exitcodes.OK
    (item,) = json.loads(capsys.readouterr().out)
    assert item["ok"] is True and item["current_shell"] == []
