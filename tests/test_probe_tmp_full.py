"""Issue 9 (f): a host whose /tmp is full. A tiny tmpfs, filled, is mounted on /tmp in a private
mount namespace (``unshare -m``; this machine's own /tmp is never touched) around the real
loopback sshd; the probe falls back to another directory, or to the foreground, and the verdict
is the same as on a healthy host. Before: no GPUs and no login shell, with ``complete: true``."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from conftest import home_with_bashrc, make_ssh_env
from sshd import SSHD, sshd_available, start_sshd

from tui.core.hosts import Host
from tui.core.run.runner import ProbeResult, Session
from tui.demo import fakehost

UNSHARE = shutil.which("unshare")


def _unshare_problem() -> str | None:
    if UNSHARE is None:
        return "unshare (util-linux) is not installed"
    proc = subprocess.run(
        [UNSHARE, "-m", "--propagation", "private", "sh", "-c",
         "mount -t tmpfs -o size=4k tmpfs /mnt"],
        capture_output=True, text=True,
    )  # fmt: skip
    if proc.returncode != 0:
        return f"no private mount namespace here (needs root/CAP_SYS_ADMIN): {proc.stderr.strip()}"
    return None


pytestmark = pytest.mark.skipif((problem := _unshare_problem()) is not None, reason=str(problem))

# Inside the namespace: keep the test's own files (under the pytest base dir in /tmp) visible
# through a bind mount, put a 64 KiB tmpfs on /tmp (and on the other FULL dirs) and fill it.
FULL_TMP = r"""
set -e
base=$1 full=$2
shift 2
mount --bind /tmp /mnt
for d in $full; do
  mount -t tmpfs -o size=64k tmpfs "$d"
done
mkdir -p "/tmp/$base"
mount --bind "/mnt/$base" "/tmp/$base"
for d in $full; do
  dd if=/dev/zero of="$d/fill" bs=4096 2>/dev/null || true
  echo x >"$d/fill2" 2>/dev/null && exit 90
done
exec "$@"
"""


def namespace_wrapper(base: Path, full: Sequence[str]) -> list[str]:
    top = base.relative_to("/tmp").parts[0]
    return [UNSHARE, "-m", "--propagation", "private", "sh", "-c", FULL_TMP, "full-tmp",
            top, " ".join(full)]  # fmt: skip


def start_in_namespace(
    tmp_path_factory: pytest.TempPathFactory, name: str, full: Sequence[str], home: str | None
) -> Iterator[SSHD]:
    """An sshd in its own mount namespace where ``full`` are full; its sessions' HOME is
    ``home`` (None: a quiet home of the test's, which holds data)."""
    reason = sshd_available()
    if reason:
        pytest.skip(f"no loopback sshd: {reason}")
    base = tmp_path_factory.getbasetemp()
    if not base.is_relative_to("/tmp"):
        pytest.skip(f"the pytest base dir {base} is not under /tmp")
    if home is None:
        home = str(home_with_bashrc(tmp_path_factory, f"{name}-home", ""))
    server = start_sshd(
        tmp_path_factory.mktemp(name),
        extra=f"SetEnv HOME={home}\n",
        wrapper=namespace_wrapper(base, full),
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def sshd_tmp_full(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    """Sessions see a full /tmp; /var/tmp still holds data."""
    yield from start_in_namespace(tmp_path_factory, "sshd-tmp-full", ["/tmp"], None)


@pytest.fixture(scope="module")
def sshd_all_full(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    """Sessions see /tmp, /var/tmp, /dev/shm and their $HOME (/tmp) all full."""
    yield from start_in_namespace(
        tmp_path_factory, "sshd-all-full", ["/tmp", "/var/tmp", "/dev/shm"], "/tmp"
    )


async def probe(server: SSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: str | None):
    env = make_ssh_env(server, tmp_path / "ssh", monkeypatch)
    host = Host(name="full", ssh=env.alias, root=root, simulate="tree")
    async with Session(known_hosts=env.known_hosts, ssh_config=env.ssh_config) as session:
        return await session.probe(host)


def assert_seen_everything(result: ProbeResult, gpus: int) -> None:
    facts = result.facts
    assert result.error is None and facts is not None, result.error
    assert facts.probe.complete and facts.probe.errors == () and facts.probe.timed_out == ()
    assert len(facts.gpus) == gpus, facts.driver
    if gpus:
        assert facts.driver.state == "ok", facts.driver
    else:
        assert facts.driver.state != "error", facts.driver  # nvidia-smi's answer arrived
        login = next(c for c in facts.contexts if c.kind == "login")
        assert login.vars.get("PATH"), login  # the login shell's environment arrived


@pytest.mark.parametrize("where", ["fake host", "this machine"])
async def test_a_full_tmp_falls_back_to_another_dir(
    sshd_tmp_full: SSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    root = None
    gpus = 0
    if where == "fake host":
        root = str(fakehost.build_fake_host(tmp_path / "root", fakehost.reference_ct200()).root)
        gpus = 8
    result = await probe(sshd_tmp_full, tmp_path, monkeypatch, root)
    assert_seen_everything(result, gpus)
    assert any("/var/tmp/detective-tui." in line for line in result.raw_lines)
    assert any("/tmp cannot hold data" in line for line in result.raw_lines)


@pytest.mark.parametrize("where", ["fake host", "this machine"])
async def test_with_no_dir_that_holds_data_the_steps_run_in_the_foreground(
    sshd_all_full: SSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    root = None
    gpus = 0
    if where == "fake host":
        root = str(fakehost.build_fake_host(tmp_path / "root", fakehost.reference_ct200()).root)
        gpus = 8
    result = await probe(sshd_all_full, tmp_path, monkeypatch, root)
    assert_seen_everything(result, gpus)
    assert any("no temp dir that holds data" in line for line in result.raw_lines)
