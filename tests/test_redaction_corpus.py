"""Issue 9 (e): a corpus of secret shapes (tests/secret_corpus.py) planted in argv, process
environments, a systemd unit, its EnvironmentFile and login profiles, pushed through every
output over the real loopback sshd — ``probe`` and ``diagnose`` in every format, ``fix`` (its
dry run, the run that reads the unit files back, its history), ``validate``, the session
transcripts and every export of them — and none survives. The same for this machine (a real
process with those arguments and environment, a login profile). The TUI's screens:
tests/ui/test_redaction_screens.py."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import SSHEnv, make_ssh_env
from secret_corpus import (
    ARGV_TAIL,
    PROCESS_ENV,
    PROFILE,
    corpus_host,
    leaks,
)
from sshd import SSHD, sshd_available, start_sshd

from tui.core import locations

REPO = Path(__file__).resolve().parents[1]


def cli(*args: str, check_codes: tuple[int, ...] = (0, 1, 2)) -> str:
    """``detective-tui ARGS`` as a user runs it; its stdout and stderr together."""
    proc = subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode in check_codes, (args, proc.returncode, out[-3000:])
    return out


def every_transcript_output() -> dict[str, str]:
    """Each session file as written, and ``transcript list|show|export`` of each (read-only
    runs, two at a time: one per core)."""
    listed = cli("transcript", "list")
    sessions = sorted(locations.sessions_dir().glob("*.jsonl"))
    assert sessions
    runs: dict[str, tuple[str, ...]] = {}
    for path in sessions:
        runs[f"show {path.name}"] = ("transcript", "show", str(path))
        for fmt in ("md", "html", "json"):
            runs[f"export {fmt} {path.name}"] = ("transcript", "export", str(path), "--format", fmt)
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(runs, pool.map(lambda argv: cli(*argv), runs.values()), strict=True))
    files = {f"file {path.name}": path.read_text() for path in sessions}
    return {"transcript list": listed, **files, **done}


def assert_nothing_leaked(outputs: dict[str, str]) -> None:
    leaked = {name: found for name, text in outputs.items() if (found := leaks(text))}
    assert leaked == {}, leaked


# -- a fake host (a root-prefixed tree) over the real sshd ---------------------------------


def test_no_planted_secret_reaches_any_output_of_a_fake_host(
    ssh_env: SSHEnv, tmp_path: Path
) -> None:
    fake = corpus_host(tmp_path / "root")
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(
        f"hosts:\n  - name: ct200\n    ssh: {ssh_env.alias}\n    root: {fake.root}\n"
        "    simulate: tree\n"
        f"    python: {fake.pythons[0]}\n"
    )
    inv = ("--hosts", str(inventory))
    outputs = {
        "probe --json": cli(*inv, "probe", "ct200", "--json"),
        "probe": cli(*inv, "probe", "ct200"),
        "diagnose --json": cli(*inv, "diagnose", "ct200", "--json"),
        "diagnose --markdown": cli(*inv, "diagnose", "ct200", "--markdown"),
        "diagnose": cli(*inv, "diagnose", "ct200"),
        "fix --dry-run": cli(*inv, "fix", "ct200", "use-installed-toolkit", "--dry-run"),
        "fix --json --dry-run": cli(
            *inv, "fix", "ct200", "use-installed-toolkit", "--dry-run", "--json"
        ),
        "fix --yes": cli(*inv, "fix", "ct200", "use-installed-toolkit", "--yes"),
        "fix --history": cli(*inv, "fix", "ct200", "--history"),
        "fix --history --json": cli(*inv, "fix", "ct200", "--history", "--json"),
        "validate --json": cli(*inv, "validate", "ct200", "--json", check_codes=(0, 1, 2)),
    }
    # the corpus really went through: the probe saw the process, its unit and its env file,
    # and the fix read the unit files back (their text is in the transcript)
    assert '"SGLANG_API_KEY": "***"' in outputs["probe --json"]
    assert "postgres://***@db.internal/x" in outputs["probe --json"]
    assert "--api-key *** --token *** --hf-token=***" in outputs["probe --json"]
    assert "flashinfer-arch-rejected" in outputs["diagnose --json"]
    outputs |= every_transcript_output()
    transcripts = "".join(t for n, t in outputs.items() if n.startswith("file "))
    assert "@@unitfile /etc/systemd/system/sglang.service" in transcripts
    assert "@@envpart /etc/default/sglang" in transcripts
    assert_nothing_leaked(outputs)


# -- this machine over the real sshd: a real process, a real login shell --------------------


@pytest.fixture
def planted_server(tmp_path: Path):
    """A real process on this machine shaped like a server with the corpus in its argv and
    environment (the probe discovers it through /proc)."""
    pkg = tmp_path / "srv" / "vllm"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "serve_stand_in.py").write_text("import time\ntime.sleep(1e5)\n")
    env = {**os.environ, **PROCESS_ENV, "PYTHONPATH": str(pkg.parent)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vllm.serve_stand_in", *ARGV_TAIL],
        cwd=pkg.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def sshd_with_profile(tmp_path_factory: pytest.TempPathFactory):
    """An sshd whose sessions' login profile exports the corpus."""
    reason = sshd_available()
    if reason:
        pytest.skip(f"no loopback sshd: {reason}")
    home = tmp_path_factory.mktemp("corpus-home")
    (home / ".profile").write_text(PROFILE)
    (home / ".bashrc").write_text("")
    server: SSHD = start_sshd(tmp_path_factory.mktemp("sshd-corpus"), f"SetEnv HOME={home}\n")
    yield server
    server.stop()


def test_no_planted_secret_reaches_any_output_of_this_machine(
    sshd_with_profile: SSHD, planted_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = make_ssh_env(sshd_with_profile, tmp_path / "ssh", monkeypatch)
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(f"hosts:\n  - name: here\n    ssh: {env.alias}\n")
    inv = ("--hosts", str(inventory))
    outputs = {
        "probe --json": cli(*inv, "probe", "here", "--json"),
        "probe": cli(*inv, "probe", "here"),
        "diagnose --json": cli(*inv, "diagnose", "here", "--json"),
        "diagnose --markdown": cli(*inv, "diagnose", "here", "--markdown"),
        "diagnose": cli(*inv, "diagnose", "here"),
    }
    probe = outputs["probe --json"]
    assert f"pid {planted_server.pid} vllm.serve_stand_in" in probe  # the process was read
    assert '"GH_TOKEN"' not in probe and '"SGLANG_URL": "https://***@h.internal"' in probe
    outputs |= every_transcript_output()
    assert_nothing_leaked(outputs)
