"""The login shell is the account's, from the passwd database — not whatever ``$SHELL`` the
caller happened to have (cron and CI runners often have none; sshd always sets it)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from probes import probe_env, probe_script
from tui.core.facts import Facts
from tui.core.facts.build import facts_from_output
from tui.demo import fakehost

pytestmark = pytest.mark.skipif(not shutil.which("getent"), reason="no getent on this machine")


def _passwd_shell() -> str:
    out = subprocess.run(
        ["getent", "passwd", str(os.getuid())], capture_output=True, text=True, check=True
    )
    return out.stdout.strip().rsplit(":", 1)[1]


def _probe(env: dict[str, str], root: str | None = None) -> Facts:
    env = {**env, **probe_env([], root=root, tree_exec=bool(root), step_timeout_s=10)}
    proc = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return facts_from_output(proc.stdout)


def test_without_shell_the_login_context_runs_the_accounts_shell() -> None:
    shell = _passwd_shell()
    facts = _probe({"PATH": os.environ["PATH"], "HOME": str(Path.home())})  # no SHELL
    assert facts.host.shell == shell, facts.host
    labels = [c.label for c in facts.contexts if c.kind == "login"]
    assert labels and labels[0].startswith(f"login shell ({Path(shell).name} "), (
        labels,
        facts.probe,
    )


def test_a_different_shell_variable_does_not_change_the_fact() -> None:
    facts = _probe({"PATH": os.environ["PATH"], "HOME": str(Path.home()), "SHELL": "/bin/dash"})
    assert facts.host.shell == _passwd_shell()


def test_an_inspected_root_answers_from_its_own_passwd(tmp_path: Path) -> None:
    fake = fakehost.build_fake_host(tmp_path / "root", fakehost.healthy_h100())
    (fake.root / "etc" / "passwd").write_text(
        f"root:x:0:0:root:/root:/usr/bin/zsh\nme:x:{os.getuid()}:{os.getgid()}::/home/me:/usr/bin/fish\n"
    )
    facts = _probe({"PATH": os.environ["PATH"], **fake.env}, root=str(fake.root))
    expected = "/usr/bin/zsh" if os.getuid() == 0 else "/usr/bin/fish"
    assert facts.host.shell == expected
