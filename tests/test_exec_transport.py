"""The ``exec`` transport: through a recording ``kubectl`` stand-in whose "pod" processes run in
their own session (killing kubectl does not stop them, as with the real one), and through the
real OpenSSH client against the loopback sshd. Same facts as the local probe, the remote
deadline, cancel kills the remote group, clear errors when the engine or the size fails."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from conftest import SSHEnv
from exec_engines import (
    KUBECTL,
    calls,
    cancel_after_start,
    comparable,
    install_shim,
    ssh_client_config,
    tree_host,
)
from sshd import gone, unique_sleep

from tui.cli import main
from tui.core.hosts import SCRIPT_WORD, Host
from tui.core.reach.exec_transport import MAX_ARG_BYTES
from tui.core.records.transcript import Transcript, read_events
from tui.core.run.runner import Session
from tui.demo.fakehost import build_fake_host, reference_ct200


@pytest.fixture
def kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    return install_shim(tmp_path, "kubectl", KUBECTL, monkeypatch), tmp_path / "kubectl.log"


def pod(shim: Path, name: str = "ct200", **kw: object) -> Host:
    words = (str(shim), "exec", "-i", "-n", "ml", name, "--", "sh", "-c", SCRIPT_WORD)
    return Host(name=name, exec=words, **kw)  # type: ignore[arg-type]


async def test_probe_through_kubectl_equals_local(kubectl, tmp_path: Path) -> None:
    shim, log = kubectl
    tree = build_fake_host(tmp_path / "ct200", reference_ct200(with_cuda13=True))
    local = Host(
        name="l",
        local=True,
        root=str(tree.root),
        simulate="tree",
        env=tree.env,
        python=tree.pythons,
    )
    transcript = Transcript(tmp_path / "t.jsonl")
    async with Session(transcript=transcript) as s:
        over_exec, here = await s.probe_many([tree_host(tree, pod(shim)), local])
    assert over_exec.ok, over_exec.error
    assert comparable(over_exec.facts) == comparable(here.facts)
    (argv,) = calls(log)
    assert argv[:9] == ["exec", "-i", "-n", "ml", "ct200", "--", "sh", "-c", argv[8]]
    assert len(argv) == 9  # the whole program is one argument
    assert "@@detective-tui-pgid" in argv[8] and "DT_PYFACTS_EOF" in argv[8]
    events = read_events(tmp_path / "t.jsonl")
    (event,) = [e for e in events if e["kind"] == "command" and e["host"] == "ct200"]
    assert event["target"].startswith(f"{shim} exec -i -n ml ct200 -- sh -c {{script}}")
    assert event["exit_status"] == 0 and "@@detective-tui-exec-started" not in event["output"]


async def test_script_and_env_arrive_exactly(kubectl) -> None:
    shim, _log = kubectl
    odd = "a b $(touch /tmp/detective-pwned) `id` ; 'q' \"d\" \\ \n new line"
    async with Session() as s:
        r = await s.run_script(pod(shim), 'printf "%s|" "$V"; echo; exit 3', env={"V": odd})
    assert (r.exit_status, r.output, r.error) == (3, f"{odd}|\n", None)
    assert not Path("/tmp/detective-pwned").exists()


async def test_remote_deadline(kubectl) -> None:
    shim, _log = kubectl
    n = unique_sleep()
    async with Session() as s:
        r = await s.run_script(pod(shim), f"echo started; sleep {n}; echo never", deadline_s=1)
    assert r.timed_out and r.error_kind == "timeout" and r.output == "started\n"
    assert await gone("sleep", n)


async def test_cancel_kills_the_pod_side_through_a_second_exec(kubectl) -> None:
    shim, log = kubectl
    n = unique_sleep()
    async with Session() as s:
        await cancel_after_start(s, pod(shim), n)
    assert await gone("sleep", n)
    run, kill = calls(log)
    assert kill[:8] == run[:8] and kill[8].startswith("kill -TERM -")


async def test_engine_failure_is_unreachable_with_its_message(kubectl) -> None:
    shim, _log = kubectl
    async with Session() as s:
        result = await s.probe(pod(shim, "missing"))
    assert result.error_kind == "unreachable" and not result.reachable
    assert "exited with status 1 before the script started" in (result.error or "")
    assert 'pods "missing" not found' in (result.error or "")


async def test_missing_engine_binary(tmp_path: Path) -> None:
    async with Session() as s:
        r = await s.run_script(pod(tmp_path / "no-kubectl"), "true")
    assert r.error_kind == "unreachable" and "cannot run" in (r.error or "")


async def test_a_script_over_the_argument_limit_is_refused_before_running(kubectl) -> None:
    shim, log = kubectl
    async with Session() as s:
        r = await s.run_script(pod(shim), "#" * (MAX_ARG_BYTES + 1) + "\n")
    assert r.exit_status is None and "over Linux's limit of 131072 bytes" in (r.error or "")
    assert not log.exists()


# -- through the real OpenSSH client -------------------------------------------------------


@pytest.fixture
def ssh_words(ssh_env: SSHEnv) -> tuple[str, ...]:
    return ("ssh", "-F", str(ssh_client_config(ssh_env)), "-T", ssh_env.alias, SCRIPT_WORD)


@pytest.mark.sshd
async def test_probe_through_the_ssh_client_equals_local(ssh_words, tmp_path: Path) -> None:
    tree = build_fake_host(tmp_path / "ct200", reference_ct200())
    over = Host(name="ct200", exec=ssh_words)
    local = Host(
        name="l",
        local=True,
        root=str(tree.root),
        simulate="tree",
        env=tree.env,
        python=tree.pythons,
    )
    async with Session() as s:
        over_exec, here = await s.probe_many([tree_host(tree, over), local])
    assert over_exec.ok, over_exec.error
    assert comparable(over_exec.facts) == comparable(here.facts)


@pytest.mark.sshd
async def test_ssh_client_deadline_and_cancel(ssh_words) -> None:
    host = Host(name="fake", exec=ssh_words)
    n = unique_sleep()
    async with Session() as s:
        r = await s.run_script(host, f"echo started; sleep {n}", deadline_s=1)
        assert r.timed_out and r.output == "started\n"
        assert await gone("sleep", n)
        m = unique_sleep()
        await cancel_after_start(s, host, m)
    assert await gone("sleep", m)


def test_a_fix_and_its_undo_run_through_exec(
    kubectl, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same plan as over SSH: applied, verified by a re-probe, undone — every command
    through the kubectl stand-in."""
    shim, log = kubectl
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    tree = build_fake_host(tmp_path / "ct200", reference_ct200(with_cuda13=True))
    inv = tmp_path / "hosts.yaml"
    host = {
        "name": "ct200",
        "exec": f"{shim} exec -i -n ml {{name}} -- sh -c {{script}}",
        "root": str(tree.root),
        "simulate": "tree",
        "env": dict(tree.env),
        "python": list(tree.pythons),
    }
    inv.write_text(yaml.safe_dump({"hosts": [host]}))
    dropin = tree.root / "etc/systemd/system/sglang.service.d/50-detective-tui-cuda.conf"
    assert main(["fix", "ct200", "use-installed-toolkit", "--yes", "--hosts", str(inv)]) == 0
    assert "Fixed: flashinfer-arch-rejected" in capsys.readouterr().out
    assert dropin.is_file()
    runs = len(calls(log))
    assert main(["fix", "ct200", "--undo", "last", "--yes", "--hosts", str(inv)]) == 0
    assert "Back to the verdict before the fix: " in capsys.readouterr().out
    assert not dropin.exists()
    assert len(calls(log)) > runs > 2 and {c[4] for c in calls(log)} == {"ct200"}
