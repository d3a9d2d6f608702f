"""Host keys as OpenSSH treats them, against real sshd instances on 127.0.0.1: ``@revoked``
lines, host certificates (no CA, another CA, the right CA, a revoked CA), a server that switched
key type, hashed entries, and a pre-auth banner that is not UTF-8."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CertSSHD, SSHEnv, home_with_bashrc, make_ssh_env
from sshd import SSH_KEYGEN, SSHD, keygen, public_key, sshd_available, start_sshd

from tui.cli import main
from tui.core.hosts import Host
from tui.core.reach.hostkeys import HostKeyRevoked
from tui.core.run.runner import Session, add_known_host, trust_host

pytestmark = pytest.mark.sshd


def _server(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    host_keys: tuple[str, ...] = ("ed25519",),
    extra: str = "",
) -> Iterator[SSHD]:
    """An sshd with one host key per type in ``host_keys`` (``<dir>/host_<type>``)."""
    reason = sshd_available()
    if reason:
        pytest.skip(f"no loopback sshd: {reason}")
    workdir = tmp_path_factory.mktemp(name)
    home = home_with_bashrc(tmp_path_factory, f"{name}-home", "")
    keys = [workdir / f"host_{kind}" for kind in host_keys]
    for kind, key in zip(host_keys, keys, strict=True):
        keygen(key, kind)
    more = "".join(f"HostKey {key}\n" for key in keys[1:])
    server = start_sshd(workdir, extra=f"{more}{extra}SetEnv HOME={home}\n", host_key=keys[0])
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def sshd_rsa_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    """A host that now offers only an RSA key (it used to have an ed25519 one)."""
    yield from _server(tmp_path_factory, "sshd-rsa", host_keys=("rsa",))


@pytest.fixture(scope="module")
def sshd_two_keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    """A host with an ed25519 and an RSA host key."""
    yield from _server(tmp_path_factory, "sshd-two", host_keys=("ed25519", "rsa"))


@pytest.fixture(scope="module")
def sshd_latin1_banner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    """sshd's ``Banner`` (sent before authentication) in Latin-1, not UTF-8."""
    banner = tmp_path_factory.mktemp("banner") / "issue.net"
    banner.write_bytes("Accès réservé — Zugriff nur für Befugte\n".encode("latin-1", "replace"))
    yield from _server(tmp_path_factory, "sshd-banner-latin1", extra=f"Banner {banner}\n")


async def cli(*argv: str) -> int:
    """The CLI from an async test (it runs its own event loop)."""
    return await asyncio.to_thread(main, list(argv))


def fake(env: SSHEnv) -> Host:
    return Host(name="fake", ssh=env.alias)


def session(env: SSHEnv) -> Session:
    return Session(known_hosts=env.known_hosts, ssh_config=env.ssh_config, connect_timeout=15)


def _name(server: SSHD) -> str:
    return f"[127.0.0.1]:{server.port}"


def _hashed(line: str, tmp: Path) -> str:
    """The line with its host name hashed by ``ssh-keygen -H`` (|1|salt|hash)."""
    tmp.write_text(line + "\n")
    subprocess.run([SSH_KEYGEN, "-H", "-f", str(tmp)], check=True, capture_output=True)
    hashed = tmp.read_text().strip()
    assert hashed.startswith("|1|"), hashed
    return hashed


# -- @revoked ---------------------------------------------------------------------------------


async def test_revoked_key_is_refused_as_revoked(ssh_env: SSHEnv) -> None:
    line = "@revoked " + ssh_env.sshd.host_key_line
    ssh_env.known_hosts.write_text(f"# retired after the 2024 incident\n{line}\n")
    async with session(ssh_env) as s:
        p = await s.probe(fake(ssh_env))
        r = await s.run_script(fake(ssh_env), "true")
    assert p.error_kind == r.error_kind == "hostkey-revoked"
    assert p.error is not None and not p.reachable and p.facts is None
    assert "REVOKED" in p.error and ssh_env.sshd.host_fingerprint in p.error
    assert f"line 2: @revoked {_name(ssh_env.sshd)} ssh-ed25519" in p.error
    assert p.hostkey is not None and p.hostkey.fingerprint == ssh_env.sshd.host_fingerprint
    assert p.hostkey_note.startswith("Revoked by: line 2")


def test_trust_never_appends_a_revoked_key(
    ssh_env: SSHEnv, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "@revoked " + ssh_env.sshd.host_key_line + "\n"
    ssh_env.known_hosts.write_text(text)
    assert main(["trust", "fakehost", "--yes"]) == 2
    err = capsys.readouterr().err
    assert "HOST KEY REVOKED" in err and "line 1" in err
    assert ssh_env.known_hosts.read_text() == text
    assert main(["probe", "fakehost", "--json"]) == 2
    (result,) = json.loads(capsys.readouterr().out)
    assert result["error_kind"] == "hostkey-revoked"


async def test_revoked_api_refuses_to_trust(ssh_env: SSHEnv) -> None:
    text = "@revoked " + ssh_env.sshd.host_key_line + "\n"
    ssh_env.known_hosts.write_text(text)
    with pytest.raises(HostKeyRevoked) as refused:
        await trust_host(fake(ssh_env), known_hosts=ssh_env.known_hosts)
    with pytest.raises(HostKeyRevoked):
        add_known_host(fake(ssh_env), refused.value.info, ssh_env.known_hosts)
    assert ssh_env.known_hosts.read_text() == text


async def test_revoked_wins_over_a_trusted_line_also_hashed(
    ssh_env: SSHEnv, tmp_path: Path
) -> None:
    """The same key trusted (hashed by ssh-keygen -H) and revoked (a hashed pattern too)."""
    trusted = _hashed(ssh_env.sshd.host_key_line, tmp_path / "h1")
    revoked = "@revoked " + _hashed(ssh_env.sshd.host_key_line, tmp_path / "h2")
    ssh_env.known_hosts.write_text(f"{trusted}\n{revoked}\n")
    async with session(ssh_env) as s:
        r = await s.run_script(fake(ssh_env), "true")
    assert r.error_kind == "hostkey-revoked", r.error
    assert "line 2: @revoked |1|" in r.error


async def test_hashed_and_bracketed_entries_keep_working(ssh_env: SSHEnv, tmp_path: Path) -> None:
    ssh_env.known_hosts.write_text(_hashed(ssh_env.sshd.host_key_line, tmp_path / "h") + "\n")
    async with session(ssh_env) as s:
        r = await s.run_script(fake(ssh_env), "echo ok")
    assert r.output == "ok\n", r.error


# -- host certificates ----------------------------------------------------------------------


def _cert_env(cert: CertSSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SSHEnv:
    return make_ssh_env(cert.sshd, tmp_path / "ssh", monkeypatch)


async def test_certificate_without_a_trusted_ca_falls_back_to_the_plain_key(
    sshd_cert: CertSSHD,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No @cert-authority line: OpenSSH checks the plain key, so it can be trusted."""
    env = _cert_env(sshd_cert, tmp_path, monkeypatch)
    env.known_hosts.write_text("")
    async with session(env) as s:
        p = await s.probe(fake(env))
    assert p.error_kind == "hostkey-unknown", p.error
    assert p.hostkey is not None and p.hostkey.fingerprint == sshd_cert.sshd.host_fingerprint
    assert "detective-tui trust fakehost" in p.error
    assert await cli("trust", "fakehost", "--yes") == 0
    assert sshd_cert.sshd.host_fingerprint in capsys.readouterr().out
    async with session(env) as s:
        r = await s.run_script(fake(env), "echo in")
    assert r.output == "in\n", r.error


async def test_certificate_from_another_ca_names_the_line_that_trusts_its_ca(
    sshd_cert: CertSSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _cert_env(sshd_cert, tmp_path, monkeypatch)
    env.known_hosts.write_text(f"@cert-authority * {public_key(sshd_cert.other_ca)}\n")
    async with session(env) as s:
        p = await s.probe(fake(env))
    assert p.error_kind == "hostkey-unknown", p.error
    assert p.hostkey is not None and p.hostkey.fingerprint == sshd_cert.sshd.host_fingerprint
    wanted = f"@cert-authority {_name(sshd_cert.sshd)} {public_key(sshd_cert.ca)}"
    assert wanted in p.error and wanted in p.hostkey_note
    env.known_hosts.write_text(wanted + "\n")  # the line it names is the one that works
    async with session(env) as s:
        r = await s.run_script(fake(env), "echo in")
    assert r.output == "in\n", r.error


async def test_certificate_from_a_trusted_ca_connects(
    sshd_cert: CertSSHD,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = _cert_env(sshd_cert, tmp_path, monkeypatch)
    text = f"@cert-authority 127.0.0.1,[127.0.0.1]:* {public_key(sshd_cert.ca)}\n"
    env.known_hosts.write_text(text)
    async with session(env) as s:
        r = await s.run_script(fake(env), "echo in")
    assert r.output == "in\n", r.error
    assert await cli("trust", "fakehost", "--yes") == 0  # already trusted, through its CA
    assert env.known_hosts.read_text() == text


async def test_certificate_from_a_revoked_ca_is_refused_as_revoked(
    sshd_cert: CertSSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _cert_env(sshd_cert, tmp_path, monkeypatch)
    ca = public_key(sshd_cert.ca)
    env.known_hosts.write_text(f"@cert-authority * {ca}\n@revoked * {ca}\n")
    async with session(env) as s:
        r = await s.run_script(fake(env), "true")
    assert r.error_kind == "hostkey-revoked", r.error
    assert "certificate whose CA is @revoked" in r.error and "line 2: @revoked *" in r.error


# -- key types ------------------------------------------------------------------------------


async def test_switched_key_type_is_a_changed_key(
    sshd_rsa_only: SSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """known_hosts has the host's old ed25519 key; the server now offers only RSA."""
    env = make_ssh_env(sshd_rsa_only, tmp_path / "ssh", monkeypatch)
    old = tmp_path / "old_ed25519"
    keygen(old)
    env.known_hosts.write_text(f"{_name(sshd_rsa_only)} {public_key(old)}\n")
    async with session(env) as s:
        p = await s.probe(fake(env))
    assert p.error_kind == "hostkey-changed", p.error
    assert "HOST KEY CHANGED" in p.error and "it now offers ssh-rsa" in p.error
    assert p.hostkey is not None and p.hostkey.fingerprint == sshd_rsa_only.host_fingerprint
    assert f"On file for it: line 1: {_name(sshd_rsa_only)} ssh-ed25519" in p.error
    assert await cli("trust", "fakehost", "--yes") == 2


@pytest.mark.parametrize("kind", ["ed25519", "rsa"])
async def test_the_key_type_on_file_is_asked_for_first(
    sshd_two_keys: SSHD, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With either of the host's two keys on file, the server is asked for that one."""
    env = make_ssh_env(sshd_two_keys, tmp_path / "ssh", monkeypatch)
    key = sshd_two_keys.dir / f"host_{kind}"
    env.known_hosts.write_text(f"{_name(sshd_two_keys)} {public_key(key)}\n")
    async with session(env) as s:
        r = await s.run_script(fake(env), "echo in")
    assert r.output == "in\n", r.error


# -- banner ---------------------------------------------------------------------------------


async def test_banner_that_is_not_utf8_is_decoded_leniently(
    sshd_latin1_banner: SSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = make_ssh_env(sshd_latin1_banner, tmp_path / "ssh", monkeypatch)
    async with session(env) as s:
        r = await s.run_script(fake(env), "echo in")
    assert r.output == "in\n", r.error
