"""Rolling fleet fixes (issue 20, from issue 22's list): ``fix a,b,c,d FIX --rolling N
--stop-on-failure`` over a real sshd. Four fake CT200 trees (CUDA 13.0 on disk) reached as four
inventory hosts through the same loopback sshd; one is made to fail (its drop-in directory is
a file). With one host at a time and stop-on-failure, the hosts after the failing one are never
touched and are reported ``not-started``; with two at a time, two hosts' first steps meet
through a FIFO, which only two concurrent runs can do."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import SSHEnv
from step_shims import tree_standins

from tui.cli import main
from tui.commands.fix_common import fleet_code, fleet_table
from tui.core import exitcodes
from tui.core.fixes import build_plan
from tui.core.fixes.plan import Step
from tui.core.fixes.undo import list_records
from tui.core.hosts import Host
from tui.core.locations import sessions_dir
from tui.core.records.transcript import read_events
from tui.core.run.fix_session import FixSession, Rollout
from tui.core.run.fleet import FleetItem
from tui.core.run.runner import Session
from tui.demo.fakehost import SYSTEMCTL_LOG, build_fake_host, reference_ct200

pytestmark = pytest.mark.sshd

DROPIN_DIR = "etc/systemd/system/sglang.service.d"
FIX = "use-installed-toolkit"


def _trees(tmp_path: Path, names: tuple[str, ...], broken: str | None = None) -> dict[str, Any]:
    fakes = {}
    for name in names:
        fake = fakes[name] = build_fake_host(tmp_path / name, reference_ct200(with_cuda13=True))
        if name == broken:
            dropins = fake.root / DROPIN_DIR
            if dropins.is_dir():
                shutil.rmtree(dropins)
            dropins.write_text("not a directory\n")  # the drop-in step cannot write here
    return fakes


def _inventory(tmp_path: Path, ssh_env: SSHEnv, fakes: dict[str, Any]) -> Path:
    entries = [
        {
            "name": name,
            "ssh": ssh_env.alias,
            "root": str(fake.root),
            "simulate": "tree",
            "env": dict(fake.env),
            "python": list(fake.pythons),
        }
        for name, fake in fakes.items()
    ]
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump({"hosts": entries}))
    return path


@pytest.mark.slow  # four hosts probed over sshd: ~9 s
def test_one_at_a_time_stops_at_the_first_failure(
    tmp_path: Path,
    ssh_env: SSHEnv,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tree_standins(monkeypatch, tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    names = ("a", "b", "c", "d")
    fakes = _trees(tmp_path, names, broken="b")
    inv = _inventory(tmp_path, ssh_env, fakes)
    roots = {n: Path(f.root) for n, f in fakes.items()}
    untouched = {n: sorted(p.relative_to(roots[n]) for p in roots[n].rglob("*")) for n in "cd"}
    argv = ["fix", ",".join(names), FIX, "--yes", "--rolling", "1", "--stop-on-failure"]
    assert main([*argv, "--hosts", str(inv)]) == exitcodes.CRITICAL
    out = capsys.readouterr().out
    assert "1 host at a time, stop at the first failure" in out
    table = out.split("\nhost ", 1)[1].splitlines()[1:]
    rows = {p[0]: (p[1], p[2]) for p in (line.split(None, 2) for line in table) if p}
    assert {n: s for n, (s, _) in rows.items()} == {
        "a": "fixed",
        "b": "failed",
        "c": "not-started",
        "d": "not-started",
    }
    assert rows["c"][1] == "not started: the run stopped after b failed"
    assert (roots["a"] / DROPIN_DIR).is_dir() and (roots["b"] / DROPIN_DIR).is_file()
    for name in "cd":  # never touched: no file written, no systemctl run, no journal
        assert sorted(p.relative_to(roots[name]) for p in roots[name].rglob("*")) == untouched[name]
        assert not (roots[name] / SYSTEMCTL_LOG).exists()
        assert list_records(name) == []
    (session,) = sessions_dir().glob("*.jsonl")
    events = read_events(session)
    assert {e["host"] for e in events if e["kind"] == "fix-start"} == {"a", "b"}
    (decision,) = [e for e in events if e["kind"] == "decision"]
    assert (decision["action"], decision["answer"], decision["hosts"]) == ("fix", "yes", [*names])
    assert decision["details"] == {"at_once": 1, "stop_on_failure": True}  # how it was asked


def test_not_started_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    from tui.core.run.fleet import HostFixResult

    host = Host(name="c", local=True)
    plan = object()  # only "is there a plan" matters to a host that never started
    item = FleetItem(host=host, facts=None, plan=plan)  # type: ignore[arg-type]
    result = HostFixResult(item=item, outcome=None, not_started="not started: the run stopped")
    fleet_table([result], argparse.Namespace(json=True))
    (row,) = json.loads(capsys.readouterr().out)
    assert row == {"host": "c", "status": "not-started", "detail": "not started: the run stopped",
                   "outcome": None}  # fmt: skip
    assert fleet_code([result]) == exitcodes.CRITICAL  # never reported as done


@pytest.mark.slow  # two hosts probed and fixed over sshd: ~7 s
async def test_two_at_a_time_run_together(tmp_path: Path, ssh_env: SSHEnv) -> None:
    meet = tmp_path / "meet"
    os.mkfifo(meet)
    fifo = shlex.quote(str(meet))
    # each end of a FIFO blocks until the other opens it: both steps end only side by side
    ends = {"a": f"read x < {fifo}", "b": f"echo go > {fifo}"}
    fakes = _trees(tmp_path, ("a", "b"))
    async with Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config) as s:
        items = []
        for name, fake in fakes.items():
            host = Host(name=name, ssh=ssh_env.alias, root=str(fake.root), simulate="tree",
                        env=fake.env, python=fake.pythons, standins=fake.standins)  # fmt: skip
            facts = (await s.probe(host)).facts
            assert facts is not None
            plan = build_plan(facts, host, FIX, {"path": "/usr/local/cuda-13.0"})
            meet_step = Step(title="meet the other host", command=ends[name], undo=None,
                             changes="nothing", needs_root=False, deadline_s=20)  # fmt: skip
            plan = dataclasses.replace(plan, steps=(meet_step, *plan.steps))
            items.append(FleetItem(host=host, facts=facts, plan=plan))
        run = FixSession(s, items, fix_id=FIX, rollout=Rollout(2, stop_on_failure=True))
        run.decide("yes")
        results = await run.apply()
    assert [r.status for r in results] == ["fixed", "fixed"], [r.detail for r in results]
