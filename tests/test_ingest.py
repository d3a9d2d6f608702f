"""``ingest``: the demo fleet's outputs captured by running ``probe-script`` give what ``diagnose
--demo --json`` gives; and what engines do to output — CRLF, two hosts in one file, truncation,
a hostname that does not match, missing hosts — each gives the documented result.

The real engines (Ansible, ansible-runner, clush) run in tests/test_engines_slow.py; the JSON
inputs here are built from the structure those runs write (ansible-core 2.19, ansible-runner 2.4,
ansible.posix json callback), with real probe output inside.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tui.cli import main
from tui.core import exitcodes
from tui.demo.fleet import DEMO_HOSTS

ANSWERING = [h.name for h in DEMO_HOSTS if h.spec is not None]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def capture_demo(script_dir: Path) -> dict[str, str]:
    """Each answering demo host's output of its standalone probe script, run with sh (the demo
    trees live in the current XDG cache dir)."""
    out: dict[str, str] = {}
    for name in ANSWERING:
        script = script_dir / f"{name}.sh"
        with open(script, "w") as f, pytest.MonkeyPatch.context() as mp:
            mp.setattr("sys.stdout", f)
            assert main(["probe-script", "--demo", name]) == 0
        done = subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        out[name] = done.stdout
    return out


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        return capture_demo(tmp_path_factory.mktemp("scripts"))


def write_dir(base: Path, files: dict[str, str]) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (base / name).write_bytes(text.encode())
    return base


def without_durations(report: list[dict]) -> list[dict]:
    for host in report:
        host.pop("warnings", None)
        if host["facts"] is not None:
            host["facts"]["probe"].pop("duration_s")
    return report


def test_demo_fleet_equals_diagnose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = {f"{name}.txt": text for name, text in capture_demo(tmp_path).items()}
    out_dir = write_dir(tmp_path / "out", files)
    code, out, err = cli(capsys, "ingest", str(out_dir), "--demo", "--json")
    ingested = without_durations(json.loads(out))
    want_code, want_out, _ = cli(capsys, "diagnose", "--demo", "--json")
    want = without_durations(json.loads(want_out))
    assert code == want_code == exitcodes.CRITICAL
    gone = next(h for h in ingested if h["host"] == "gone-dark")
    assert gone["error"] == "no output for this host in the captured output"
    assert gone["error_kind"] == "unreachable" and not gone["reachable"]
    for host in (ingested, want):
        gone = next(h for h in host if h["host"] == "gone-dark")
        gone["error"], gone["unseen"] = "-", ["-"]  # the reason differs, and is what is unseen
    assert ingested == want
    assert "warning" not in err


def test_markdown_and_text_reports(
    captured: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = write_dir(tmp_path / "out", {"ct200": captured["ct200"]})
    code, md, _ = cli(capsys, "ingest", str(out_dir), "--markdown")
    assert code == exitcodes.CRITICAL
    assert md.startswith("# detective-tui report") and "`flashinfer-arch-rejected`" in md
    code, text, _ = cli(capsys, "ingest", str(out_dir))
    assert code == exitcodes.CRITICAL and "flashinfer-arch-rejected" in text


def test_crlf_from_a_pty_gives_the_same_facts(
    captured: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = write_dir(tmp_path / "plain", {"h100-node": captured["h100-node"]})
    crlf = write_dir(tmp_path / "crlf", {"h100-node": captured["h100-node"].replace("\n", "\r\n")})
    _, a, _ = cli(capsys, "ingest", str(plain), "--json")
    code, b, _ = cli(capsys, "ingest", str(crlf), "--json")
    assert code == exitcodes.OK
    assert json.loads(a) == json.loads(b)


def test_two_hosts_in_one_file_are_an_error_never_merged(
    captured: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = captured["h100-node"].splitlines(keepends=True)
    b = captured["ct200"].splitlines(keepends=True)
    interleaved = "".join(x for pair in zip(a, b, strict=False) for x in pair)
    out_dir = write_dir(
        tmp_path / "out",
        {"h100-node": interleaved, "ct200": captured["ct200"] + captured["ct200"]},
    )
    code, out, _ = cli(capsys, "ingest", str(out_dir), "--json")
    by_host = {h["host"]: h for h in json.loads(out)}
    assert code == exitcodes.UNREACHABLE
    for name in ("h100-node", "ct200"):
        host = by_host[name]
        assert host["facts"] is None and host["error_kind"] == "probe-failed"
        assert "2 probe runs in one output (begin records on lines 1, " in host["error"]
        assert "not merged" in host["error"]


def test_truncated_output_gives_partial_facts(
    captured: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = captured["h100-node"].splitlines(keepends=True)
    cut = "".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:7]  # mid-line
    out_dir = write_dir(tmp_path / "out", {"h100-node": cut})
    code, out, _ = cli(capsys, "ingest", str(out_dir), "--json")
    (host,) = json.loads(out)
    assert code == exitcodes.UNREACHABLE
    assert host["reachable"] and host["error_kind"] == "probe-failed"
    assert "ends before the probe's end record" in host["error"]
    assert host["facts"]["host"]["hostname"] == "h100-node"
    assert host["facts"]["probe"]["complete"] is False


def test_a_hostname_that_does_not_match_is_a_warning(
    captured: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = write_dir(
        tmp_path / "out",
        {"gpu07.log": captured["h100-node"], "h100-node.dc.example": captured["h100-node"]},
    )
    code, out, err = cli(capsys, "ingest", str(out_dir), "--json")
    by_host = {h["host"]: h for h in json.loads(out)}
    assert code == exitcodes.OK
    assert by_host["gpu07"]["warnings"] == [
        f"the output says hostname 'h100-node', not 'gpu07': is {out_dir / 'gpu07.log'} "
        "really this host's?"
    ]
    assert by_host["h100-node.dc.example"]["warnings"] == []  # the short name matches
    assert "gpu07: warning: the output says hostname 'h100-node'" in err


def test_inventory_hosts_without_output_are_unreachable(
    captured: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text("hosts:\n  - name: h100-node\n  - name: gpu[1-2]\n")
    out_dir = write_dir(tmp_path / "out", {"h100-node": captured["h100-node"], "x.out": "noise"})
    code, out, err = cli(capsys, "ingest", str(out_dir), "--hosts", str(inv), "--json")
    report = json.loads(out)
    assert [h["host"] for h in report] == ["h100-node", "gpu1", "gpu2", "x"]
    assert code == exitcodes.UNREACHABLE
    assert report[0]["error"] is None
    assert [h["error_kind"] for h in report[1:]] == ["unreachable", "unreachable", "probe-failed"]
    assert report[3]["error"].endswith("no probe output: noise")
    assert "not in the inventory: x" in err


def test_labelled_lines_from_several_hosts(
    captured: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hand-made from two real outputs: `host: line`, the hosts' lines alternating (the
    real clush labelled output is in tests/test_engines_slow.py)."""
    a = [f"h100-node: {line}" for line in captured["h100-node"].splitlines()]
    b = [f"ct200: {line}" for line in captured["ct200"].splitlines()]
    mixed = [x for pair in zip(a, b, strict=False) for x in pair] + a[len(b) :] + b[len(a) :]
    log = tmp_path / "pdsh.log"
    log.write_text("pdsh@client: gpu9: ssh exited with exit code 255\n" + "\n".join(mixed) + "\n")
    code, out, err = cli(capsys, "ingest", str(log), "--json")
    report = {h["host"]: h for h in json.loads(out)}
    code_dir, out_dir, _ = cli(
        capsys,
        "ingest",
        str(write_dir(tmp_path / "d", {k: captured[k] for k in ("h100-node", "ct200")})),
        "--json",
    )
    assert code == code_dir == exitcodes.CRITICAL
    assert report == {h["host"]: h for h in json.loads(out_dir)}
    assert "ignored 1 lines without a `host: ` label" in err


def ansible_res(stdout: str, **extra: object) -> dict:
    return {"changed": True, "rc": 0, "stderr": "", "stdout": stdout, **extra}


def test_ansible_json_callback(
    captured: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {
        "custom_stats": {},
        "plays": [
            {
                "play": {"name": "probe"},
                "tasks": [
                    {"task": {"name": "gather"}, "hosts": {"h100-node": {"changed": False}}},
                    {
                        "task": {"name": "script"},
                        "hosts": {
                            "h100-node": ansible_res(captured["h100-node"]),
                            "down": {
                                "changed": False,
                                "msg": "Failed to connect to the host via ssh: Connection refused",
                                "unreachable": True,
                            },
                            "broken": ansible_res(
                                "sh: 1: nvidia: not found\n",
                                rc=127,
                                failed=True,
                                msg="non-zero return code",
                            ),
                        },
                    },
                ],
            }
        ],
        "stats": {},
    }
    path = tmp_path / "ansible.json"
    path.write_text("[WARNING]: a warning before the JSON\n" + json.dumps(doc, indent=4))
    code, out, err = cli(capsys, "ingest", str(path), "--json")
    report = {h["host"]: h for h in json.loads(out)}
    assert code == exitcodes.UNREACHABLE
    assert report["h100-node"]["error"] is None and report["h100-node"]["facts"]["gpus"]
    assert report["down"]["error_kind"] == "unreachable"
    assert report["down"]["error"].startswith("Failed to connect to the host via ssh")
    assert report["broken"]["error_kind"] == "probe-failed"
    assert "(non-zero return code)" in report["broken"]["error"]
    assert "ignored the text before the JSON document" in err


def test_ansible_runner_artifacts(
    captured: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [
        {"event": "playbook_on_start", "counter": 1, "event_data": {}},
        {
            "event": "runner_on_ok",
            "counter": 4,
            "event_data": {"host": "h100-node", "task": "script", "res": ansible_res("x")},
        },
        {
            "event": "runner_on_ok",
            "counter": 5,
            "event_data": {
                "host": "h100-node",
                "task": "script",
                "res": ansible_res(captured["h100-node"].replace("\n", "\r\n")),
            },
        },
        {
            "event": "runner_on_unreachable",
            "counter": 6,
            "event_data": {
                "host": "down",
                "task": "script",
                "res": {"msg": "Task failed: Failed to connect", "unreachable": True},
            },
        },
    ]
    for ident, when in (("old-run", 1), ("new-run", 2)):
        job = tmp_path / "pd" / "artifacts" / ident / "job_events"
        job.mkdir(parents=True)
        for e in events if ident == "new-run" else events[:2]:
            (job / f"{e['counter']}-uuid.json").write_text(json.dumps(e))
        os.utime(job, (when * 1000, when * 1000))
    code, out, err = cli(capsys, "ingest", str(tmp_path / "pd"), "--json")
    report = {h["host"]: h for h in json.loads(out)}
    assert code == exitcodes.UNREACHABLE and set(report) == {"h100-node", "down"}
    assert report["h100-node"]["error"] is None and report["h100-node"]["facts"]["gpus"]
    assert report["down"]["error"] == "Task failed: Failed to connect"
    assert "read the newest (new-run), ignored old-run" in err


def test_the_same_host_in_two_paths_is_not_merged(
    captured: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write_dir(tmp_path / "a", {"h100-node": captured["h100-node"]})
    b = write_dir(tmp_path / "b", {"h100-node.out": captured["h100-node"]})
    code, out, _ = cli(capsys, "ingest", str(a), str(b), "--json")
    (host,) = json.loads(out)
    assert code == exitcodes.UNREACHABLE and host["facts"] is None
    assert "output for this host in 2 places" in host["error"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent"], "no such file or directory"),
        (["{tmp}/plain.txt", "--format", "ansible-json"], "not the output of Ansible's json"),
        (["{tmp}/plain.txt", "--format", "labelled"], "no `host: line` lines"),
        (["{tmp}", "--format", "ansible-runner"], "no ansible-runner job_events"),
    ],
)
def test_unreadable_inputs_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    (tmp_path / "plain.txt").write_text("hello\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code, out, err = cli(capsys, "ingest", *argv)
    assert code == exitcodes.USAGE and out == "" and message in err
