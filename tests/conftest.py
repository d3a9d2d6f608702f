"""Shared fixtures: isolated XDG dirs for every test, a HOME without a user site for the probe's
real interpreters, fake hosts built under a hostile directory name, and a real OpenSSH sshd on
loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from awkward_host import HOSTILE
from shared_fixtures import SHARED_FIXTURES
from sshd import SSHD, keygen, sign_host_key, sshd_available, start_sshd

from tui.demo import fakehost

BANNER_RC = """\
echo "Welcome to a very chatty host"
echo "@@not-a-record from the rc file"
echo "rc file noise on stderr" >&2
"""


def pytest_sessionstart(session: pytest.Session) -> None:
    """Locally, tests that need ../shared/fixtures or sshd skip with a reason; in CI
    (``CI`` set) a missing piece is an error, so a green run never hides skipped real parts."""
    if not os.environ.get("CI"):
        return
    if not SHARED_FIXTURES.is_dir():
        raise pytest.UsageError(f"CI: the shared fixtures are missing at {SHARED_FIXTURES}")
    problem = sshd_available()
    if problem:
        raise pytest.UsageError(f"CI: no loopback sshd: {problem}")


@pytest.fixture(autouse=True)
def no_answer_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo fleet's never-answering host fails at once (its transport's delay is 0)."""
    from tui.demo.unreachable import NeverAnswers

    monkeypatch.setattr(NeverAnswers, "delay_s", 0.0)


@pytest.fixture(autouse=True)
def isolated_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own XDG config/state/cache dirs, known_hosts and (absent) ssh
    config, and no ssh-agent: a developer's own files never leak in or get written."""
    home = tmp_path / "xdg"
    for var, sub in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        (home / sub).mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("DETECTIVE_TUI_KNOWN_HOSTS", str(home / "known_hosts"))
    monkeypatch.setenv("DETECTIVE_TUI_SSH_CONFIG", str(home / "ssh_config"))
    monkeypatch.delenv("DETECTIVE_TUI_HOSTS", raising=False)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A HOME without a user site, so root's own ~/.local never leaks into a result."""
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def build(tmp_path: Path) -> Callable[[fakehost.FakeHostSpec], fakehost.FakeHost]:
    """Builds a fake host from a spec under this test's tmp_path, in a directory whose name is
    hostile (``HOSTILE``)."""

    def _build(spec: fakehost.FakeHostSpec) -> fakehost.FakeHost:
        return fakehost.build_fake_host(tmp_path / HOSTILE / "root", spec)

    return _build


def _start(tmp_path_factory: pytest.TempPathFactory, name: str, extra: str = "") -> Iterator[SSHD]:
    reason = sshd_available()
    if reason:
        pytest.skip(f"no loopback sshd: {reason}")
    workdir = tmp_path_factory.mktemp(name)
    server = start_sshd(workdir, extra=extra.format(dir=workdir))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    """A plain sshd on 127.0.0.1 (session-scoped, sync). Its sessions get an empty home, so
    the machine's own /root/.bashrc (pyenv, conda…) never adds noise or work to a test."""
    home = home_with_bashrc(tmp_path_factory, "quiet-home", "")
    yield from _start(tmp_path_factory, "sshd", extra=f"SetEnv HOME={home}\n")


def home_with_bashrc(tmp_path_factory: pytest.TempPathFactory, name: str, rc: str) -> Path:
    """A home dir whose .bashrc is ``rc``; an sshd with ``SetEnv HOME=<it>`` makes root's bash
    read that file instead of the machine's own /root/.bashrc."""
    home = tmp_path_factory.mktemp(name)
    (home / ".bashrc").write_text(rc)
    return home


@pytest.fixture(scope="session")
def sshd_banner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    """An sshd whose sessions run a ~/.bashrc that prints a banner on stdout and stderr."""
    home = home_with_bashrc(tmp_path_factory, "banner-home", BANNER_RC)
    yield from _start(tmp_path_factory, "sshd-banner", extra=f"SetEnv HOME={home}\n")


@dataclass(frozen=True)
class CertSSHD:
    """An sshd whose ed25519 host key comes with a host certificate for 127.0.0.1 signed by
    ``ca`` (private key; ``.pub`` beside it); ``other_ca`` signed nothing."""

    sshd: SSHD
    ca: Path
    other_ca: Path


@pytest.fixture(scope="session")
def sshd_cert(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CertSSHD]:
    reason = sshd_available()
    if reason:
        pytest.skip(f"no loopback sshd: {reason}")
    workdir = tmp_path_factory.mktemp("sshd-cert")
    ca, other_ca, host_key = workdir / "host_ca", workdir / "other_ca", workdir / "host_key"
    for key in (ca, other_ca, host_key):
        keygen(key)
    home = home_with_bashrc(tmp_path_factory, "cert-home", "")
    server = start_sshd(
        workdir,
        extra=f"HostCertificate {sign_host_key(ca, host_key)}\nSetEnv HOME={home}\n",
        host_key=host_key,
    )
    try:
        yield CertSSHD(server, ca, other_ca)
    finally:
        server.stop()


@dataclass(frozen=True)
class SSHEnv:
    sshd: SSHD
    ssh_config: Path
    known_hosts: Path
    alias: str = "fakehost"


def make_ssh_env(server: SSHD, dest: Path, monkeypatch: pytest.MonkeyPatch) -> SSHEnv:
    config, known = server.write_client_files(dest)
    monkeypatch.setenv("DETECTIVE_TUI_SSH_CONFIG", str(config))
    monkeypatch.setenv("DETECTIVE_TUI_KNOWN_HOSTS", str(known))
    return SSHEnv(server, config, known)


@pytest.fixture
def ssh_env(sshd: SSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SSHEnv:
    """ssh_config with alias ``fakehost`` → the sshd, a known_hosts that trusts it, and the
    DETECTIVE_TUI_SSH_CONFIG / DETECTIVE_TUI_KNOWN_HOSTS variables pointing at them."""
    return make_ssh_env(sshd, tmp_path / "ssh", monkeypatch)


SERVING_ARGV = ("-m", "sglang.launch_server", "--model-path", "/models/stand-in", "--port", "1")
_STAND_IN = "import signal, time\nsignal.signal(signal.SIGTERM, lambda *_: exit())\ntime.sleep(1e5)"


@pytest.fixture(scope="session", autouse=True)
def serving_process_on_this_machine(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[subprocess.Popen[bytes]]:
    """For the whole suite, a process named like the servers a GPU host runs (``python -m
    sglang.launch_server …``: a harmless Python that sleeps), so every test proves it does not
    depend on what else runs on the machine (the probe discovers such processes on ``local``)."""
    pkg = tmp_path_factory.mktemp("stand-in-server") / "sglang"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "launch_server.py").write_text(_STAND_IN)
    proc = subprocess.Popen(
        [sys.executable, *SERVING_ARGV],
        cwd=pkg.parent,
        env={**os.environ, "PYTHONPATH": str(pkg.parent)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
