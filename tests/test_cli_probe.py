"""``detective-tui probe`` end to end: JSON shape, exit codes, inventory errors, progress."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.cli import main

CUDA13 = Path("/usr/local/cuda-13.0/bin/nvcc")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.skipif(not CUDA13.exists(), reason="this machine has no /usr/local/cuda-13.0")
def test_probe_local_json_lists_cuda13(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "probe", "local", "--json")
    assert code == 0, err
    (host,) = json.loads(out)
    assert set(host) >= {"host", "reachable", "error", "facts"}
    assert host["host"] == "local" and host["reachable"] is True and host["error"] is None
    toolkits = {t["home"]: t for t in host["facts"]["toolkits"]}
    assert toolkits["/usr/local/cuda-13.0"]["version"] == "13.0"
    assert host["facts"]["probe"]["complete"] is True
    assert "local: ok" in err  # progress and the per-host outcome go to stderr


def test_unreachable_host_exit_2_and_others_still_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text(
        "hosts:\n  - name: down\n    ssh: root@127.0.0.1:1\n  - name: here\n    local: true\n"
    )
    code, out, _err = run_cli(capsys, "--hosts", str(inv), "probe", "--json")
    assert code == 2
    results = json.loads(out)
    assert [r["host"] for r in results] == ["down", "here"]
    assert [r["reachable"] for r in results] == [False, True]
    assert "cannot connect" in results[0]["error"] and results[0]["facts"] is None
    # in words that say what to check, not Python's "Connect call failed ('127.0.0.1', 1)"
    assert "connection refused: nothing listens on that port" in results[0]["error"]
    assert "Connect call failed" not in results[0]["error"]
    assert results[1]["error"] is None and results[1]["facts"]["probe"]["complete"]


def test_sub_command_hosts_option_and_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text("hosts:\n  - name: box\n    local: true\n")
    code, out, _ = run_cli(capsys, "probe", "--hosts", str(inv), "--all")
    assert code == 0
    assert "box" in out and "ok" in out


def test_bad_inventory_entry_is_a_row_the_good_hosts_are_probed_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text(
        "hosts:\n  - name: a\n    local: true\n    pyhton: /x\n    tgas: [t]\n"
        "  - name: here\n    local: true\n  - ssh: nobody\n"
    )
    code, out, err = run_cli(capsys, "--hosts", str(inv), "probe", "--all", "--json")
    assert code == 3
    # every error at once on stderr, before the probes
    assert "3 error(s) in the inventory" in err
    assert f"{inv}:4: key 'pyhton' is unknown" in err and "did you mean 'python'" in err
    assert f"{inv}:5: key 'tgas' is unknown" in err
    assert f"{inv}:8: host has no `name:`" in err
    results = {r["host"]: r for r in json.loads(out)}
    assert list(results) == ["a", "here", "hosts.yaml:8"]
    assert results["here"]["error"] is None and results["here"]["facts"]["probe"]["complete"]
    bad = results["a"]
    assert bad["error_kind"] == "bad-inventory" and not bad["reachable"]
    assert bad["facts"] is None and f"{inv}:5: key 'tgas'" in bad["error"]


def test_fix_refuses_a_bad_entry_but_names_every_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text("hosts:\n  - name: a\n    local: true\n    pyhton: /x\n")
    code, out, err = run_cli(capsys, "--hosts", str(inv), "fix", "a", "--history")
    assert code == 3 and out == ""
    assert f"{inv}:4: key 'pyhton' is unknown" in err


def test_bad_target_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "probe", "gpu1;reboot")
    assert code == 3
    assert "target 'gpu1;reboot': contains spaces or shell characters" in err


def test_probe_is_recorded_in_the_transcript(
    capsys: pytest.CaptureFixture[str], isolated_xdg: Path
) -> None:
    from tui.core.records.transcript import list_sessions, read_events

    assert run_cli(capsys, "probe", "local", "--json")[0] == 0
    (session,) = list_sessions()
    kinds = [e["kind"] for e in read_events(session)]
    assert kinds == ["session-start", "cli", "command", "probe"]


def _progress_of(console) -> list[str]:
    import io

    from tui.commands.probe import _Progress
    from tui.core.facts.build import ProbeProgress
    from tui.core.hosts import Host
    from tui.core.run.runner import ProbeResult

    hosts = [Host(name="a", local=True), Host(name="b", local=True)]
    with _Progress(console, len(hosts)) as progress:
        progress.on_progress("a", ProbeProgress("driver", 2, 8))
        progress.on_progress("a", ProbeProgress("end", 10, 10))  # the count grew mid-run
        progress.finished(ProbeResult(hosts[0], None, duration_s=1.0))
        progress.on_progress("b", ProbeProgress("end", 1, 1))
        progress.finished(ProbeResult(hosts[1], None, "no answer", "unreachable"))
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue().splitlines()


def test_progress_off_a_terminal_is_one_line_per_host() -> None:
    import io

    from rich.console import Console

    lines = _progress_of(Console(file=io.StringIO(), force_terminal=False, width=80))
    assert lines == ["a: ok (1.0 s)", "b: no answer (0.0 s)"]


def test_progress_on_a_terminal_counts_hosts_not_steps() -> None:
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, color_system=None, width=100)
    out = "\n".join(_progress_of(console))
    assert "a: ok (1.0 s)" in out and "b: no answer (0.0 s)" in out
    assert "0/2 hosts probed" in out and "2/2 hosts probed" in out and "b: end" in out
    assert "(2/8)" not in out and "10/10" not in out and "1/1" not in out
