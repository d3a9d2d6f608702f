"""``detective-tui fix a,b,c --undo last`` (and ``'*'``, ``--history``) end to end: two fake
CT200s with CUDA 13.0 installed and a healthy H100, through the local transport, the real
probe and rules; undo records in the test's own XDG state dir."""

from __future__ import annotations

import io
import json
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from step_shims import tree_standins

from tui.cli import main
from tui.core import exitcodes
from tui.core.fixes.undo import list_records, records_dir
from tui.core.locations import sessions_dir
from tui.core.records.transcript import read_events
from tui.demo.fakehost import SYSTEMCTL_LOG, build_fake_host, healthy_h100, reference_ct200

DROPIN = "etc/systemd/system/sglang.service.d/50-detective-tui-cuda.conf"
FINDING = "flashinfer-arch-rejected"
PAIR = ("ct200", "ct201")
HOSTS = (*PAIR, "h100", "ghost")


@pytest.fixture
def no_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Path]]:
    """hosts.yaml with ct200 and ct201 (the reference case, CUDA 13.0 on disk), a healthy
    h100 and an unreachable ghost; the trees' roots by host name (their fake systemctl the
    hosts' stand-in)."""
    tree_standins(monkeypatch, tmp_path)
    entries: list[dict[str, object]] = []
    roots: dict[str, Path] = {}
    for name, spec in (
        ("ct200", reference_ct200(with_cuda13=True)),
        ("ct201", reference_ct200(with_cuda13=True)),
        ("h100", healthy_h100()),
    ):
        fake = build_fake_host(tmp_path / f"{name} root", spec)
        roots[name] = fake.root
        entries.append(
            {
                "name": name,
                "local": True,
                "root": str(fake.root),
                "simulate": "tree",
                "env": fake.env,
                "python": list(fake.pythons),
            }
        )
    entries.append({"name": "ghost", "ssh": "root@127.0.0.1:1"})
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump({"hosts": entries}))
    return path, roots


def run(inv: Path, *argv: str) -> int:
    return main(["fix", *argv, "--hosts", str(inv)])


def rows(out: str) -> dict[str, tuple[str, str]]:
    """The result table (after its ``host  result  detail`` heading): host → (status, detail)."""
    table = out.split("\nhost ", 1)[1].splitlines()[1:]
    return {
        parts[0]: (parts[1], parts[2] if len(parts) > 2 else "")
        for parts in (line.split(None, 2) for line in table)
        if parts and parts[0] in HOSTS
    }


def diagnosis(inv: Path, capsys: pytest.CaptureFixture[str], *names: str) -> dict[str, set]:
    main(["diagnose", *names, "--json", "--hosts", str(inv)])
    return {
        h["host"]: {(f["id"], f["severity"]) for f in h["findings"]}
        for h in json.loads(capsys.readouterr().out)
    }


def fix_pair(inv: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> None:
    assert run(inv, "ct200,ct201", "use-installed-toolkit", "--yes", *extra) == exitcodes.OK
    statuses = {n: s for n, (s, _) in rows(capsys.readouterr().out).items()}
    assert statuses == {"ct200": "fixed", "ct201": "fixed"}


def undo_decisions() -> list[dict]:
    """Every ``decision`` about an undo in this test's transcripts."""
    return [
        e
        for path in sessions_dir().glob("*.jsonl")
        for e in read_events(path)
        if e["kind"] == "decision" and "undo" in e
    ]


def test_undo_last_on_every_host_brings_the_findings_back(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, roots = fleet
    fix_pair(inv, capsys, "--restart")
    assert diagnosis(inv, capsys, *PAIR) == {n: set() for n in PAIR}  # both green
    records = {n: list_records(n)[0].id for n in PAIR}

    # '*': every inventory host; h100 and ghost have nothing to undo (not an error)
    assert run(inv, "*", "--undo", "last", "--yes", "--restart") == exitcodes.OK
    captured = capsys.readouterr()
    out = captured.out
    for name in PAIR:
        assert f"Undo use-installed-toolkit on {name}" in out  # the preview, per host
        assert f"[{name}] ── step 1/1: Undo: Set CUDA_HOME, PATH for sglang.service" in out
        assert not (roots[name] / DROPIN).exists()
        assert list_records(name) == []
        assert (records_dir(name) / f"{records[name]}.undone").is_file()
    assert "h100: nothing to undo: no fix recorded for h100" in out
    assert "nothing to undo" not in captured.err  # reported, not an error
    table = rows(out)
    assert {n: s for n, (s, _) in table.items()} == {
        "ct200": "undone",
        "ct201": "undone",
        "h100": "skipped",
        "ghost": "skipped",
    }
    assert table["ct200"][1].startswith(
        "verdict as before the fix: flashinfer-arch-rejected, nvcc-torch-major-mismatch"
    )
    assert "restart pending: sglang.service" in table["ct201"][1]
    assert table["ghost"][1].startswith("nothing to undo")
    assert out.count("Restart sglang.service: changed — restarted sglang.service") == 2

    # restarted without the drop-in: both are critical again, through the real probe
    again = diagnosis(inv, capsys, *PAIR)
    for name in PAIR:
        assert (FINDING, "critical") in again[name]
    # the decision per host, as the single-host undo records it
    assert {(e["host"], e["undo"], e["answer"]) for e in undo_decisions()} == {
        (n, records[n], "yes") for n in PAIR
    }

    assert run(inv, "ct200,ct201,h100", "--history") == exitcodes.OK
    assert capsys.readouterr().out.splitlines() == [
        "ct200:",
        "  No fixes to undo.",
        "ct201:",
        "  No fixes to undo.",
        "h100:",
        "  No fixes to undo.",
    ]


def test_json_results_are_shaped_like_the_fleet_fix(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, _roots = fleet
    fix_pair(inv, capsys)
    records = {n: list_records(n)[0].id for n in PAIR}
    assert run(inv, "ct200,ct201,h100", "--undo", "last", "--yes", "--json") == exitcodes.OK
    results = json.loads(capsys.readouterr().out)  # nothing but the JSON on stdout
    assert [(r["host"], r["status"]) for r in results] == [
        ("ct200", "undone"),
        ("ct201", "undone"),
        ("h100", "skipped"),
    ]
    for r in results[:2]:
        o = r["outcome"]
        assert o["fix"] == "undo:use-installed-toolkit"
        assert o["params"] == {"record": records[r["host"]]}
        # never restarted: the unit as it will start next time is critical again
        assert (o["worst_before"], o["worst_after"]) == (None, "critical")
        assert o["undo_record"] is None
    assert results[2]["outcome"] is None and results[2]["detail"].startswith("nothing to undo")


def test_a_failing_undo_does_not_stop_the_others_and_exits_1(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, roots = fleet
    fix_pair(inv, capsys)
    kept = list_records("ct201")[0].id
    (roots["ct201"] / "usr/bin/systemctl").write_text(
        "#!/bin/sh\necho 'Failed to reload daemon: Access denied' >&2\nexit 1\n"
    )
    assert run(inv, "ct200,ct201", "--undo", "last", "--yes") == exitcodes.CRITICAL
    out = capsys.readouterr().out
    table = rows(out)
    assert table["ct200"][0] == "undone" and table["ct201"][0] == "failed"
    assert "Failed to reload daemon" in out
    assert list_records("ct200") == []
    assert [r.id for r in list_records("ct201")] == [kept]  # still there to undo again
    assert run(inv, "ct200,ct201", "--history") == exitcodes.OK
    history = capsys.readouterr().out
    assert f"ct201:\n  {kept}  " in history and "ct200:\n  No fixes to undo." in history


def test_an_unreachable_host_with_a_record_exits_2_and_the_others_are_undone(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, roots = fleet
    fix_pair(inv, capsys)
    (record,) = list_records("ct200")
    ghost = records_dir("ghost")
    ghost.mkdir(parents=True)
    shutil.copy(record.path, ghost / record.path.name)
    assert run(inv, "ct200,ghost", "--undo", "last", "--yes") == exitcodes.UNREACHABLE
    table = rows(capsys.readouterr().out)
    assert table["ct200"][0] == "undone" and table["ghost"][0] == "unreachable"
    assert not (roots["ct200"] / DROPIN).exists()
    assert [r.id for r in list_records("ghost")] == [record.id]


def test_an_undo_record_id_names_one_host(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, roots = fleet
    fix_pair(inv, capsys)
    record = list_records("ct200")[0].id
    assert run(inv, "ct200,ct201", "--undo", record, "--yes") == exitcodes.USAGE
    err = capsys.readouterr().err
    assert (
        f"--undo {record} names one host's undo record, but 2 hosts were given (ct200, ct201): "
        f"name one host (fix HOST --undo {record}), or undo the last fix on each host with "
        "--undo last"
    ) in err
    assert all((roots[n] / DROPIN).is_file() for n in PAIR)
    assert all(list_records(n) for n in PAIR)


def test_nothing_to_undo_anywhere_needs_no_confirmation(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, _roots = fleet
    assert run(inv, "ct200,h100", "--undo", "last") == exitcodes.OK
    table = rows(capsys.readouterr().out)
    assert {n: s for n, (s, _) in table.items()} == {"ct200": "skipped", "h100": "skipped"}
    assert table["ct200"][1].startswith("nothing to undo: no fix recorded for ct200")
    assert undo_decisions() == []


def test_without_a_terminal_or_yes_nothing_is_undone(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, roots = fleet
    fix_pair(inv, capsys)
    assert run(inv, "ct200,ct201", "--undo", "last") == exitcodes.USAGE
    assert "no terminal to ask on" in capsys.readouterr().err
    assert all((roots[n] / DROPIN).is_file() and list_records(n) for n in PAIR)


def test_a_no_at_the_prompt_changes_nothing(
    fleet: tuple[Path, dict[str, Path]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inv, roots = fleet
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    fix_pair(inv, capsys)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    monkeypatch.setattr("builtins.input", lambda question: "n")
    assert run(inv, "ct200,ct201", "--undo", "last") == exitcodes.OK
    assert "Nothing was changed." in capsys.readouterr().out
    assert all((roots[n] / DROPIN).is_file() and list_records(n) for n in PAIR)
    assert {(e["host"], e["answer"]) for e in undo_decisions()} == {(n, "no") for n in PAIR}


def test_dry_run_json_lists_each_hosts_undo_commands(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, roots = fleet
    fix_pair(inv, capsys)
    argv = ("ct200,ct201,h100", "--undo", "last", "--dry-run", "--json")
    assert run(inv, *argv) == exitcodes.OK
    items = json.loads(capsys.readouterr().out)
    assert [(i["host"], i["fix"]) for i in items] == [
        ("ct200", "undo:use-installed-toolkit"),
        ("ct201", "undo:use-installed-toolkit"),
        ("h100", None),
    ]
    for item in items[:2]:
        (command,) = item["commands"]
        dropin = roots[item["host"]] / DROPIN
        root = shlex.quote(str(roots[item["host"]]))
        assert f'd="$(dt_in_root {root} /etc/systemd/system/sglang.service.d)"\n' in command
        assert f'f="$d"/{dropin.name}\n' in command
        assert 'rm -f "$f"' in command
        assert dropin.is_file()
    assert items[2]["error"].startswith("nothing to undo")


def test_history_json_lists_each_host(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, _roots = fleet
    fix_pair(inv, capsys)
    (records_dir("h100") / "broken.json").parent.mkdir(parents=True)
    (records_dir("h100") / "broken.json").write_text("{")
    assert run(inv, "ct200,ct201,h100", "--history", "--json") == exitcodes.USAGE
    captured = capsys.readouterr()
    listed = json.loads(captured.out)
    assert [(h["host"], [r["fix"] for r in h["records"]]) for h in listed] == [
        ("ct200", ["use-installed-toolkit"]),
        ("ct201", ["use-installed-toolkit"]),
        ("h100", []),
    ]
    assert listed[2]["error"].startswith(str(records_dir("h100") / "broken.json"))
    assert "not a readable undo record" in captured.err


def test_the_fake_hosts_systemctl_log_shows_one_reload_per_run(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    """The undo ran each host's own systemctl shim, once per host, never another host's."""
    inv, roots = fleet
    fix_pair(inv, capsys)
    assert run(inv, "ct200,ct201", "--undo", "last", "--yes") == exitcodes.OK
    for name in PAIR:
        log = roots[name] / SYSTEMCTL_LOG.lstrip("/")
        assert log.read_text().splitlines() == ["daemon-reload", "daemon-reload"]


def test_an_unreadable_record_is_reported_and_exits_3(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    inv, _roots = fleet
    broken = records_dir("h100") / "20260101-000000-use-installed-toolkit.json"
    broken.parent.mkdir(parents=True)
    broken.write_text("{")
    assert run(inv, "ct200,h100", "--undo", "last", "--yes") == exitcodes.USAGE
    captured = capsys.readouterr()
    table = rows(captured.out)
    assert table["ct200"][0] == "skipped" and table["h100"][0] == "not-planned"
    assert table["h100"][1].startswith(f"{broken}: not a readable undo record")
    assert f"h100: {broken}: not a readable undo record" in captured.err


def test_fleet_fix_and_undo_json_are_only_json(
    fleet: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    """--json keeps the live per-host lines off stdout, for the fix and for its undo."""
    inv, _roots = fleet
    argv = ("ct200,ct201", "use-installed-toolkit", "--yes", "--json")
    assert run(inv, *argv) == exitcodes.OK
    fixed = json.loads(capsys.readouterr().out)
    assert [(r["host"], r["status"]) for r in fixed] == [("ct200", "fixed"), ("ct201", "fixed")]
    assert run(inv, "ct200,ct201", "--undo", "last", "--yes", "--json") == exitcodes.OK
    undone = json.loads(capsys.readouterr().out)
    assert [(r["host"], r["status"]) for r in undone] == [("ct200", "undone"), ("ct201", "undone")]
