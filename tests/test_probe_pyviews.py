"""One Python run per interpreter and user: the host helper answers the pyfacts requests of one
interpreter (the inventory's view and a serving process's import path) from one run
(op_pyviews), each answer exactly what a run of its own gives. The helper's own program
(helper_program), with the real pyfacts program, on this machine's python3."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from probes import helper_program, pyfacts_program

PYTHON = "/usr/bin/python3"
pytestmark = pytest.mark.skipif(not os.path.isfile(PYTHON), reason="no /usr/bin/python3")


def request(index: str, **proc: str) -> list[bytes]:
    """A pyfacts request as probe.sh's run_pyfacts makes it (no drop, nothing only read)."""
    names = ("HOME", "PYTHONPATH", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "CWD", "FLAGS", "PATH0")
    values = ["DT_READ_FOR=", f"DT_PROC={'1' if proc else ''}"]
    values += [f"DT_PROC_{n}={proc.get(n, '')}" for n in names]
    return [b"pyfacts", index.encode(), PYTHON.encode(), b"", b"", *map(str.encode, values)]


@pytest.fixture
def helper() -> dict:
    space: dict = {"__name__": "hosthelper"}
    exec(helper_program(), space)
    space["PYFACTS"] = pyfacts_program().encode()
    space["STEP"] = 20
    runs = []
    spawn = space["spawn"]

    def counted(argv: list[str], **kw: object) -> tuple[bytes, int, int]:
        runs.append(argv)
        return spawn(argv, **kw)

    space["spawn"] = counted
    space["runs"] = runs
    return space


def test_two_views_of_one_interpreter_share_one_run(helper: dict, tmp_path: Path) -> None:
    (tmp_path / "extra" / "torch-2.5.1.dist-info").mkdir(parents=True)
    (tmp_path / "extra" / "torch-2.5.1.dist-info" / "METADATA").write_text(
        "Name: torch\nVersion: 2.5.1\n"
    )
    inventory = request("1")
    process = request("2", HOME=str(tmp_path), PYTHONPATH="extra", CWD=str(tmp_path), FLAGS="")
    helper["start_early"](inventory)
    helper["start_early"](process)
    assert helper["runs"] == []  # held until the serving processes are known
    helper["start_pending"]()
    together = [helper["claim"](r) for r in (process, inventory)]
    assert len(helper["runs"]) == 1
    alone = [helper["answer"](r) for r in (process, inventory)]
    assert len(helper["runs"]) == 3
    assert together == alone
    assert b"Version: 2.5.1" in together[0] and b"Version: 2.5.1" not in together[1]
    assert together[1].count(b"\tpy\t1\t") > 3  # its records, under its own index


def test_a_claim_before_go_starts_what_is_held(helper: dict) -> None:
    inventory = request("1")
    helper["start_early"](inventory)
    assert helper["claim"](inventory) == helper["answer"](inventory)
    assert len(helper["runs"]) == 2


def test_the_hosts_environment_never_asks_for_views() -> None:
    """DT_VIEWS and DT_VIEW_MARK inherited from the host (its sshd's or login environment) change
    nothing: only the helper's argv word ``views`` does."""
    program = pyfacts_program().encode()
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}

    def run(**extra: str) -> bytes:
        argv = [PYTHON, "-E", "-S", "-", "1"]
        done = subprocess.run(argv, input=program, env={**env, **extra}, capture_output=True)
        return done.stdout

    planted = run(DT_VIEWS=f"1:DT_PROC={b'1'.hex()},DT_PROC_PYTHONPATH={b'/x'.hex()}",
                  DT_VIEW_MARK="@@DT1\tview\tx")  # fmt: skip
    assert planted == run() and b"\tversion\t" in planted
