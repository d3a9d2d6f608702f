"""The real engines from the package index (ansible-core, ansible-runner, ClusterShell) run the
standalone probe against the loopback sshd; ``ingest`` of what they captured gives the facts
``probe --json`` gives for the same fake host. Nothing but 127.0.0.1 is ever contacted."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import SSHEnv
from engines_venv import engines_bin, posix_collection
from sshd import free_port

from tui.cli import main
from tui.core import exitcodes
from tui.demo.fakehost import build_fake_host, reference_ct200

pytestmark = [pytest.mark.slow, pytest.mark.sshd]

REPO = Path(__file__).resolve().parents[1]
HOSTS = ("ct200", "other")  # two aliases of the sshd; the tree's hostname is ct200


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


class Fleet:
    """A fake host tree reached as two ssh aliases, its standalone probe, the facts ``probe``
    gets for it, and the environment the engines run in."""

    def __init__(self, tmp: Path, ssh_env: SSHEnv, capsys: pytest.CaptureFixture[str]) -> None:
        self.tmp = tmp
        self.bin = engines_bin()
        fake = build_fake_host(tmp / "tree", reference_ct200(with_cuda13=True))
        env = "".join(f"      {k}: {json.dumps(v)}\n" for k, v in fake.env.items())
        inv = tmp / "hosts.yaml"
        inv.write_text(
            "hosts:\n  - name: ct200\n    local: true\n"
            f"    root: {json.dumps(str(fake.root))}\n    simulate: tree\n"
            f"    python: {json.dumps(list(fake.pythons))}\n    env:\n{env}"
        )
        code, out, _ = cli(capsys, "probe", "ct200", "--json", "--hosts", str(inv))
        assert code == 0
        self.want = facts_only(json.loads(out)[0]["facts"])
        code, script, _ = cli(capsys, "probe-script", "ct200", "--hosts", str(inv))
        assert code == 0
        self.script = tmp / "probe.sh"
        self.script.write_text(script)
        server = ssh_env.sshd
        self.ssh_config = tmp / "ssh_config"
        self.ssh_config.write_text(
            f"Host {' '.join(HOSTS)} down\n  HostName 127.0.0.1\n  User root\n"
            f"  IdentityFile {server.client_key}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {ssh_env.known_hosts}\n  StrictHostKeyChecking yes\n"
            "  BatchMode yes\n  ConnectTimeout 10\n"
            f"Host {' '.join(HOSTS)}\n  Port {server.port}\n"
            f"Host down\n  Port {free_port()}\n"  # nothing listens there
        )
        self.env = {
            **os.environ,
            "PATH": f"{self.bin}:{os.environ['PATH']}",
            "ANSIBLE_HOME": str(tmp / "ansible-home"),
            "ANSIBLE_LOCAL_TEMP": str(tmp / "ansible-tmp"),
            "ANSIBLE_COLLECTIONS_PATH": str(posix_collection()),
            "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
            "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1",
            "ANSIBLE_NOCOLOR": "1",
        }

    def ansible_inventory(self, *, tty: bool) -> Path:
        args = f"ansible_ssh_common_args='-F {self.ssh_config}' ansible_ssh_use_tty={tty}"
        path = self.tmp / f"inventory-{tty}.ini"
        path.write_text("".join(f"{h} ansible_host={h} {args}\n" for h in (*HOSTS, "down")))
        return path

    def run(self, argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=300, **kw)  # type: ignore[call-overload]


def facts_only(facts: dict) -> dict:
    facts["probe"].pop("duration_s")
    return facts


@pytest.fixture
def fleet(tmp_path: Path, ssh_env: SSHEnv, capsys: pytest.CaptureFixture[str]) -> Fleet:
    return Fleet(tmp_path, ssh_env, capsys)


def check_report(report: list[dict], want: dict, *, down: str | None = None) -> None:
    """Facts equal, PTY or not: with a root prefix the probe replays the tree's profile files
    instead of starting a login shell, so a terminal changes nothing here."""
    by_host = {h["host"]: h for h in report}
    for name in HOSTS:
        got = by_host[name]
        assert got["error"] is None, got["error"]
        assert facts_only(got["facts"]) == want
        assert {f["id"] for f in got["findings"]} >= {"flashinfer-arch-rejected"}
    assert by_host["ct200"]["warnings"] == []
    assert "hostname 'ct200', not 'other'" in by_host["other"]["warnings"][0]
    if down is not None:
        assert by_host["down"]["error_kind"] == "unreachable" and not by_host["down"]["reachable"]
        assert down in by_host["down"]["error"]


@pytest.mark.parametrize("tty", [False, True])
def test_ansible_script_module(fleet: Fleet, capsys, tty: bool) -> None:
    done = fleet.run(
        ["ansible", "all", "-i", str(fleet.ansible_inventory(tty=tty)), "-m", "script",
         "-a", str(fleet.script)]
    )  # fmt: skip
    assert done.returncode == 4, done.stderr  # 4: a host was unreachable
    out = fleet.tmp / "ansible.json"
    out.write_text(done.stdout)
    code, report, _ = cli(capsys, "ingest", str(out), "--json")
    assert code == exitcodes.CRITICAL
    check_report(json.loads(report), fleet.want, down="Connection refused")


def test_ansible_raw_module_under_a_pty(fleet: Fleet, capsys) -> None:
    """``-m raw`` runs through ``ssh -tt``: CRLF line ends and stderr mixed in."""
    done = fleet.run(
        ["ansible", "ct200,other", "-i", str(fleet.ansible_inventory(tty=True)), "-m", "raw",
         "-a", f"sh {fleet.script}"]
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "\\r\\n@@DT1" in done.stdout  # the PTY's line ends, as JSON escapes
    out = fleet.tmp / "raw.json"
    out.write_text(done.stdout)
    code, report, _ = cli(capsys, "ingest", str(out), "--format", "ansible-json", "--json")
    assert code == exitcodes.CRITICAL
    check_report(json.loads(report), fleet.want)


def test_ansible_runner_artifacts(fleet: Fleet, capsys) -> None:
    private = fleet.tmp / "runner"
    (private / "inventory").mkdir(parents=True)
    (private / "inventory" / "hosts").write_text(fleet.ansible_inventory(tty=False).read_text())
    env = {k: v for k, v in fleet.env.items() if k != "ANSIBLE_STDOUT_CALLBACK"}
    done = subprocess.run(
        ["ansible-runner", "run", str(private), "-m", "script", "-a", str(fleet.script),
         "--hosts", "all"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 4, done.stdout[-2000:]
    (events,) = private.glob("artifacts/*/job_events")
    assert any("runner_on_unreachable" in p.read_text() for p in events.glob("*.json"))
    code, report, _ = cli(capsys, "ingest", str(private), "--json")
    assert code == exitcodes.CRITICAL
    check_report(json.loads(report), fleet.want, down="Connection refused")


def clush(fleet: Fleet, *extra: str) -> subprocess.CompletedProcess[str]:
    with open(fleet.script) as stdin:
        return fleet.run(
            ["clush", "-w", ",".join(HOSTS), "-o", f"-F {fleet.ssh_config}", *extra, "sh", "-s"],
            stdin=stdin,
        )


def test_clush_outdir(fleet: Fleet, capsys) -> None:
    outdir = fleet.tmp / "out"
    done = clush(fleet, "--outdir", str(outdir))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in outdir.iterdir()) == sorted(HOSTS)
    inv = fleet.tmp / "fleet.yaml"
    inv.write_text("hosts:\n  - name: ct200\n  - name: other\n  - name: gpu[1-2]\n")
    code, report, _ = cli(capsys, "ingest", str(outdir), "--hosts", str(inv), "--json")
    assert code == exitcodes.CRITICAL
    data = json.loads(report)
    check_report(data, fleet.want)
    assert [h["error_kind"] for h in data[2:]] == ["unreachable", "unreachable"]


def test_clush_labelled_output(fleet: Fleet, capsys) -> None:
    done = clush(fleet)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(("ct200: ", "other: "))
    log = fleet.tmp / "clush.log"
    log.write_text(done.stdout)
    code, report, _ = cli(capsys, "ingest", str(log), "--json")
    assert code == exitcodes.CRITICAL
    check_report(json.loads(report), fleet.want)


def test_ssh_tt_output(fleet: Fleet, capsys) -> None:
    done = subprocess.run(
        ["ssh", "-F", str(fleet.ssh_config), "-tt", "ct200", f"sh {fleet.script}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert b"\r\n@@DT1" in done.stdout  # the PTY's line ends
    outdir = fleet.tmp / "tt"
    outdir.mkdir()
    (outdir / "ct200.out").write_bytes(done.stdout)
    code, report, _ = cli(capsys, "ingest", str(outdir), "--json")
    assert code == exitcodes.CRITICAL
    (got,) = json.loads(report)
    assert got["error"] is None
    assert facts_only(got["facts"]) == fleet.want


def test_example_playbook(fleet: Fleet, capsys) -> None:
    """examples/ansible/probe.yml, run by the real ansible-playbook, then ingest with an
    inventory: the two hosts as probe gives them, the unreachable one reported so."""
    out = fleet.tmp / "out"
    env = {k: v for k, v in fleet.env.items() if k != "ANSIBLE_STDOUT_CALLBACK"}
    done = subprocess.run(
        ["ansible-playbook", "-i", str(fleet.ansible_inventory(tty=False)),
         str(REPO / "examples" / "ansible" / "probe.yml"),
         "-e", f"probe_script={fleet.script}", "-e", f"out_dir={out}"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 4, done.stdout[-3000:]  # 4: a host was unreachable
    assert sorted(p.name for p in out.iterdir()) == sorted(HOSTS)
    inv = fleet.tmp / "fleet.yaml"
    inv.write_text("hosts:\n  - name: ct200\n  - name: other\n  - name: down\n")
    code, report, _ = cli(capsys, "ingest", str(out), "--hosts", str(inv), "--json")
    assert code == exitcodes.CRITICAL
    check_report(json.loads(report), fleet.want)
    assert json.loads(report)[2]["error_kind"] == "unreachable"
