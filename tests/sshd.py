"""A real OpenSSH sshd on 127.0.0.1 for tests and the benchmark (never any other address).

Temp host key and client key, ``AuthorizedKeysFile`` in the temp dir, ``UsePAM no``,
``StrictModes no``, ``PermitRootLogin yes`` (tests run as root), no ``AcceptEnv``.
``extra`` lines go at the end of sshd_config, e.g. ``SetEnv BASH_ENV=/path/rc.sh`` to give the
remote shell an rc file that prints a banner or does work.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SSHD_BIN = "/usr/sbin/sshd"
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"


def sshd_available() -> str | None:
    """None when a loopback sshd can run here, else the reason it cannot."""
    if not os.access(SSHD_BIN, os.X_OK):
        return f"{SSHD_BIN} is not installed (apt-get install openssh-server)"
    if not os.access(SSH_KEYGEN, os.X_OK):
        return "ssh-keygen is not installed"
    if os.geteuid() != 0:
        return "sshd with PermitRootLogin needs root; tests run it as root"
    return None


def keygen(path: Path, kind: str = "ed25519") -> None:
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", kind, "-N", "", "-C", "detective-tui-test", "-f", str(path)],
        check=True,
    )


def fingerprint(pub: Path) -> str:
    out = subprocess.run(
        [SSH_KEYGEN, "-l", "-E", "sha256", "-f", str(pub)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.split()[1]


def public_key(key: Path) -> str:
    """``type base64`` of a private key's ``.pub``, as known_hosts lines take it."""
    return " ".join(Path(f"{key}.pub").read_text().split()[:2])


def sign_host_key(ca: Path, host_key: Path, principal: str = "127.0.0.1") -> Path:
    """``ssh-keygen -s``: a host certificate for ``host_key`` signed by ``ca``, valid for
    ``principal``; returns its path (``…-cert.pub`` beside the key), sshd's ``HostCertificate``."""
    sign = [SSH_KEYGEN, "-q", "-s", str(ca), "-I", "detective-tui-test", "-h", "-n", principal]
    subprocess.run([*sign, f"{host_key}.pub"], check=True)
    return Path(f"{host_key}-cert.pub")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class SSHD:
    """A running sshd. ``host_key_line`` is ready for a known_hosts file."""

    dir: Path
    port: int
    host_key: Path  # private; .pub beside it
    client_key: Path  # private; .pub beside it
    proc: subprocess.Popen

    @property
    def host_fingerprint(self) -> str:
        return fingerprint(self.host_key.with_suffix(".pub"))

    @property
    def host_key_line(self) -> str:
        key = self.host_key.with_suffix(".pub").read_text().split()[:2]
        return f"[127.0.0.1]:{self.port} {' '.join(key)}"

    def write_client_files(self, dest: Path, alias: str = "fakehost") -> tuple[Path, Path]:
        """An ssh_config with ``alias`` → this sshd, and a known_hosts that trusts it."""
        dest.mkdir(parents=True, exist_ok=True)
        config = dest / "ssh_config"
        config.write_text(
            f"Host {alias}\n"
            "  HostName 127.0.0.1\n"
            f"  Port {self.port}\n"
            "  User root\n"
            f"  IdentityFile {self.client_key}\n"
            "  IdentitiesOnly yes\n"
            "Host 127.0.0.1\n"
            "  User root\n"
            f"  IdentityFile {self.client_key}\n"
            "  IdentitiesOnly yes\n"
        )
        known = dest / "known_hosts"
        known.write_text(self.host_key_line + "\n")
        return config, known

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_sshd(
    workdir: Path,
    extra: str = "",
    host_key: Path | None = None,
    log_level: str = "ERROR",
    wrapper: Sequence[str] = (),
) -> SSHD:
    """Start sshd in the foreground (``-D -e``) on a free loopback port and wait until it
    answers. ``host_key`` reuses an existing key (to test a changed key, pass a new one);
    ``log_level`` ``VERBOSE`` logs every connection to ``sshd.log`` (sshd keeps the first
    value of a keyword, so it cannot come in ``extra``). ``wrapper``: a command that execs its
    arguments (e.g. into a private mount namespace)."""
    workdir.mkdir(parents=True, exist_ok=True)
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # privilege-separation dir
    if host_key is None:
        host_key = workdir / "ssh_host_ed25519_key"
        keygen(host_key)
    client_key = workdir / "id_ed25519"
    if not client_key.exists():
        keygen(client_key)
    (workdir / "authorized_keys").write_text(client_key.with_suffix(".pub").read_text())
    last_error = ""
    for _attempt in range(5):
        port = free_port()
        cfg = workdir / "sshd_config"
        cfg.write_text(
            f"Port {port}\n"
            "ListenAddress 127.0.0.1\n"
            f"HostKey {host_key}\n"
            f"PidFile {workdir / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {workdir / 'authorized_keys'}\n"
            "UsePAM no\n"
            "StrictModes no\n"
            "PermitRootLogin yes\n"
            "PasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\n"
            "PubkeyAuthentication yes\n"
            "PrintMotd no\n"
            f"LogLevel {log_level}\n" + extra
        )
        log = open(workdir / "sshd.log", "ab")  # noqa: SIM115 - kept open for sshd's lifetime
        proc = subprocess.Popen(
            [*wrapper, SSHD_BIN, "-D", "-e", "-f", str(cfg)],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                    if s.recv(4).startswith(b"SSH-"):
                        return SSHD(workdir, port, host_key, client_key, proc)
            except OSError:
                time.sleep(0.05)
        proc.kill()
        proc.wait()
        last_error = (workdir / "sshd.log").read_text(errors="replace")[-2000:]
    raise RuntimeError(f"sshd did not start on 127.0.0.1: {last_error}")


# -- processes on this machine (where the loopback sshd runs its sessions) ----------------


def processes_with(*argv: str) -> list[int]:
    """PIDs on this machine (where the sshd runs) whose argv contains ``argv`` in order."""
    needle = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


async def gone(*argv: str, within_s: float = 10.0) -> bool:
    """Poll until no process has that argv (a deadline, not a timing assertion)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within_s
    while loop.time() < end:
        if not processes_with(*argv):
            return True
        await asyncio.sleep(0.05)
    return False


def unique_sleep() -> str:
    return str(random.randint(100_000, 999_999))
