"""``probe-script``: the standalone script, run as a file, from stdin, by bash and over the real
OpenSSH client, gives the facts ``probe --json`` gets on the same fake host."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import SSHEnv

from tui.cli import main
from tui.core.facts.build import facts_from_output
from tui.demo.fakehost import FakeHost, build_fake_host, reference_ct200


def inventory(tmp_path: Path, fake: FakeHost, name: str = "ct200") -> Path:
    env = "".join(f"      {k}: {json.dumps(v)}\n" for k, v in fake.env.items())
    pythons = json.dumps(list(fake.pythons))
    path = tmp_path / "hosts.yaml"
    path.write_text(
        f"hosts:\n  - name: {name}\n    local: true\n    root: {json.dumps(str(fake.root))}\n"
        "    simulate: tree\n"
        f"    python: {pythons}\n    env:\n{env}"
    )
    return path


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def comparable(facts_json: dict) -> dict:
    facts_json["probe"].pop("duration_s")
    return facts_json


@pytest.fixture
def ct200(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, dict]:
    fake = build_fake_host(tmp_path / "tree", reference_ct200(with_cuda13=True))
    inv = inventory(tmp_path, fake)
    code, out = cli(capsys, "probe", "ct200", "--json", "--hosts", str(inv))
    assert code == 0
    (probed,) = json.loads(out)
    code, script = cli(capsys, "probe-script", "ct200", "--hosts", str(inv))
    assert code == 0
    path = tmp_path / "probe.sh"
    path.write_text(script)
    return path, inv, comparable(probed["facts"])


@pytest.mark.parametrize(
    "how", [["sh", "{file}"], ["sh", "-s"], ["bash", "{file}"], ["bash", "-s"]]
)
def test_same_facts_as_probe(ct200, how: list[str]) -> None:
    path, _inv, want = ct200
    argv = [str(path) if a == "{file}" else a for a in how]
    stdin = path.read_text() if "-s" in how else None
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert comparable(facts_from_output(done.stdout).to_json()) == want


@pytest.mark.sshd
def test_same_facts_over_ssh_t(ct200, ssh_env: SSHEnv) -> None:
    path, _inv, want = ct200
    config = ssh_env.ssh_config
    config.write_text(
        config.read_text() + f"Host *\n  UserKnownHostsFile {ssh_env.known_hosts}\n"
        "  StrictHostKeyChecking yes\n  BatchMode yes\n"
    )
    done = subprocess.run(
        ["ssh", "-F", str(config), "-T", ssh_env.alias, "sh", "-s"],
        input=path.read_text(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert comparable(facts_from_output(done.stdout).to_json()) == want


def test_settings_are_baked_in_and_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = "a b $(touch /tmp/detective-pwned) `id` ; 'q' \\ $HOME"
    inv = tmp_path / "hosts.yaml"
    inv.write_text(
        "hosts:\n  - name: box\n    local: true\n    python: /opt/a/bin/python\n"
        f"    env: {{ODD: {json.dumps(odd)}}}\n"
    )
    code, script = cli(
        capsys, "probe-script", "box", "--hosts", str(inv), "--python", "/opt/b/bin/python",
        "--root", "/mnt/img", "--step-timeout", "3",
    )  # fmt: skip
    assert code == 0 and script.startswith("#!/bin/sh\n")
    head = script[: script.index("# detective-tui probe —")]
    shown = subprocess.run(
        [
            "sh",
            "-c",
            head + 'printf "%s|%s|%s|%s" "$ODD" "$DT_PYTHONS" "$DT_ROOT" "$DT_STEP_TIMEOUT"',
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "DT_STANDALONE_DEADLINE": "1"},
        check=True,
    ).stdout
    assert shown == f"{odd}|/opt/a/bin/python\n/opt/b/bin/python|/mnt/img|3"
    assert not Path("/tmp/detective-pwned").exists()


def test_no_target_needs_no_inventory(capsys: pytest.CaptureFixture[str]) -> None:
    code, script = cli(capsys, "probe-script")
    assert code == 0 and "DT_PYTHONS=''\n" in script and "DT_STEP_TIMEOUT=10\n" in script


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--root", "relative"], "absolute path"),
        (["--step-timeout", "0"], "must be positive"),
        (["--demo", "ct20[0-1]"], "names 2 hosts"),
        (["--hosts", "/nonexistent.yaml", "x"], "not found"),
    ],
)
def test_bad_usage_exits_3(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["probe-script", *argv]) == 3
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_run_as_a_file_the_whole_run_has_a_deadline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = reference_ct200()
    spec = dataclasses.replace(spec, driver=dataclasses.replace(spec.driver, hang=True))
    fake = build_fake_host(tmp_path / "hung", spec)
    inv = inventory(tmp_path, fake, "hung")
    code, script = cli(
        capsys, "probe-script", "hung", "--hosts", str(inv), "--step-timeout", "60",
        "--deadline", "2",
    )  # fmt: skip
    assert code == 0
    path = tmp_path / "probe.sh"
    path.write_text(script)
    started = time.monotonic()
    done = subprocess.run(["sh", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 124  # timeout's status: the whole-run deadline, not the 60 s step
    assert time.monotonic() - started < 45
    facts = facts_from_output(done.stdout)
    assert not facts.probe.complete and facts.host.hostname == "ct200"
