"""Host-key dialogs against a real OpenSSH sshd on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CertSSHD, make_ssh_env
from sshd import SSHD, keygen, public_key

from tui.core.hosts import Host
from tui.core.records.transcript import Transcript, read_events
from tui.core.run.runner import Session
from tui.ui.screens.hostkey import HostKeyChangedScreen, HostKeyRevokedScreen, HostKeyScreen
from tui.ui.screens.hosts import HostsScreen

from .conftest import make_app, settle

pytestmark = pytest.mark.sshd


def _app(env, known_hosts: Path):
    def factory() -> Session:
        return Session(
            transcript=Transcript.open_session(),
            known_hosts=known_hosts,
            ssh_config=env.ssh_config,
        )

    return make_app([Host(name="box", ssh=env.alias)], session_factory=factory)


async def test_unknown_key_accept_appends_and_reconnects(
    sshd: SSHD, tmp_path: Path, monkeypatch
) -> None:
    env = make_ssh_env(sshd, tmp_path / "ssh", monkeypatch)
    env.known_hosts.write_text("")
    app = _app(env, env.known_hosts)
    async with app.run_test(size=(110, 36)) as pilot:
        app.request_probe(("box",))
        await settle(pilot, lambda: isinstance(app.screen, HostKeyScreen))
        dialog = app.screen
        assert dialog.fingerprint == sshd.host_fingerprint
        assert dialog.fingerprint.startswith("SHA256:")
        assert dialog.key_type == "ssh-ed25519"
        assert app.fleet["box"].status == "hostkey-unknown"
        await pilot.press("y")
        await settle(pilot, lambda: app.fleet["box"].status == "done")
        assert isinstance(app.screen, HostsScreen)
        key = sshd.host_key.with_suffix(".pub").read_text().split()[1]
        assert key in env.known_hosts.read_text()
        assert app.fleet["box"].facts is not None
        events = read_events(app.transcript_path)
        (decision,) = [e for e in events if e["kind"] == "decision"]
        assert decision["action"] == "trust-host-key" and decision["answer"] == "yes"
        assert decision["host"] == "box" and decision["hosts"] == ["box"]
        assert decision["details"]["fingerprint"] == sshd.host_fingerprint


async def test_unknown_key_refused_writes_nothing(sshd: SSHD, tmp_path: Path, monkeypatch) -> None:
    env = make_ssh_env(sshd, tmp_path / "ssh", monkeypatch)
    env.known_hosts.write_text("")
    app = _app(env, env.known_hosts)
    async with app.run_test(size=(110, 36)) as pilot:
        app.request_probe(("box",))
        await settle(pilot, lambda: isinstance(app.screen, HostKeyScreen))
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, HostsScreen)
        assert env.known_hosts.read_text() == ""
        assert app.fleet["box"].status == "hostkey-unknown"


async def test_changed_key_is_refused_and_never_offered(
    sshd: SSHD, tmp_path: Path, monkeypatch
) -> None:
    env = make_ssh_env(sshd, tmp_path / "ssh", monkeypatch)
    other = tmp_path / "other_key"
    keygen(other)
    stale = (
        f"[127.0.0.1]:{sshd.port} {' '.join(other.with_suffix('.pub').read_text().split()[:2])}\n"
    )
    env.known_hosts.write_text(stale)
    app = _app(env, env.known_hosts)
    async with app.run_test(size=(110, 36)) as pilot:
        app.request_probe(("box",))
        await settle(pilot, lambda: isinstance(app.screen, HostKeyChangedScreen))
        dialog = app.screen
        assert app.fleet["box"].status == "hostkey-changed"
        assert not dialog.query("#accept")
        body = str(dialog.query_one("#hostkey-body").render())
        assert "ssh-keygen -R" in body and f"[127.0.0.1]:{sshd.port}" in body
        await pilot.press("y")  # no trust key here
        assert env.known_hosts.read_text() == stale
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HostsScreen)
        assert env.known_hosts.read_text() == stale


async def test_revoked_key_is_refused_and_never_offered(
    sshd: SSHD, tmp_path: Path, monkeypatch
) -> None:
    env = make_ssh_env(sshd, tmp_path / "ssh", monkeypatch)
    revoked = f"@revoked {sshd.host_key_line}\n"
    env.known_hosts.write_text(revoked)
    app = _app(env, env.known_hosts)
    async with app.run_test(size=(110, 36)) as pilot:
        app.request_probe(("box",))
        await settle(pilot, lambda: isinstance(app.screen, HostKeyRevokedScreen))
        dialog = app.screen
        assert app.fleet["box"].status == "hostkey-revoked"
        assert dialog.fingerprint == sshd.host_fingerprint
        assert not dialog.query("#accept")
        body = str(dialog.query_one("#hostkey-body").render())
        assert "@revoked" in body and f"line 1: @revoked [127.0.0.1]:{sshd.port}" in body
        await pilot.press("y")  # no trust key here
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HostsScreen)
        assert env.known_hosts.read_text() == revoked


async def test_certificate_from_an_untrusted_ca_offers_its_plain_key(
    sshd_cert: CertSSHD, tmp_path: Path, monkeypatch
) -> None:
    """The dialog shows the plain key (trusting it connects) and the line that would trust
    the CA instead."""
    env = make_ssh_env(sshd_cert.sshd, tmp_path / "ssh", monkeypatch)
    other = f"@cert-authority * {public_key(sshd_cert.other_ca)}\n"
    env.known_hosts.write_text(other)
    app = _app(env, env.known_hosts)
    async with app.run_test(size=(110, 36)) as pilot:
        app.request_probe(("box",))
        await settle(pilot, lambda: isinstance(app.screen, HostKeyScreen))
        dialog = app.screen
        assert dialog.fingerprint == sshd_cert.sshd.host_fingerprint
        body = str(dialog.query_one("#hostkey-body").render())
        assert f"@cert-authority [127.0.0.1]:{sshd_cert.sshd.port} ssh-ed25519" in body
        await pilot.press("y")
        await settle(pilot, lambda: app.fleet["box"].status == "done")
        assert env.known_hosts.read_text().startswith(other)
        assert app.fleet["box"].facts is not None
