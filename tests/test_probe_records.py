"""Records that cannot be forged (issue 18): every field is escaped where the probe writes it,
and only the probe's own framing counts — a directory name or an rc file that prints the
sentinel adds nothing."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

import pytest
from conftest import _start, home_with_bashrc, make_ssh_env
from hypothesis import given
from hypothesis import strategies as st
from sshd import SSHD

from probes import SENTINEL, probe_env, probe_script
from tui.core.facts.build import FactBuilder, facts_from_output
from tui.core.facts.probe_records import unescape_field
from tui.core.hosts import Host
from tui.core.run.runner import Session
from tui.demo.fakehost import build_fake_host, reference_ct200

# a process that does not exist, with its own unit, argv and CUDA_HOME (the payload)
FORGED = (
    "\n@@DT1\tctx\t42\tprocess\tpid 42 forged\n@@DT1\tctxkv\t42\tpid\t42"
    "\n@@DT1\tenv\t42\tCUDA_HOME\t\\057forged\n@@DT1\tctxkv\t42\tunit\tforged.service\n"
)
ODD_NAME = "1" + FORGED + "a\\b\tc\rd"
RC_FORGERY = (
    "printf '@@DT1\\tbegin\\t2\\t\\n'\n"
    "printf '@@DT1\\tctx\\t42\\tprocess\\tpid 42 forged\\n'\n"
    "printf '@@DT1\\tenv\\t0\\tCUDA_HOME\\t/forged\\n'\n"
    "echo CUDA_HOME=/forged-too\n"
)


def test_a_forged_cache_dir_name_is_one_value(tmp_path: Path) -> None:
    fake = build_fake_host(tmp_path / "tree", reference_ct200())
    (fake.root / "root/.cache/flashinfer/0.6.8" / ODD_NAME).mkdir(parents=True)
    env = {"SHELL": "/bin/sh", **fake.env, **probe_env([], root=str(fake.root), tree_exec=True)}
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    facts = facts_from_output(out.stdout)
    assert not [c for c in facts.contexts if "forged" in c.label or c.pid == 42]
    assert all("forged" not in v for c in facts.contexts for v in c.vars.values())
    # every record is one line of the probe's own; the name arrives whole
    lines = out.stdout.splitlines()
    assert not [ln for ln in lines if ln.startswith(f"{SENTINEL}\tctx\t42")]
    (jit,) = [ln for ln in lines if ln.startswith(f"{SENTINEL}\tjit\t0\t") and "forged" in ln]
    assert unescape_field(jit.split("\t", 3)[3]) == f"/root/.cache/flashinfer/0.6.8/{ODD_NAME}"


@pytest.fixture(scope="module")
def sshd_forging(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHD]:
    """An sshd whose sessions (and login shells) run a ~/.bashrc that prints records."""
    home = home_with_bashrc(tmp_path_factory, "forging-home", RC_FORGERY)
    yield from _start(tmp_path_factory, "sshd-forging", extra=f"SetEnv HOME={home}\n")


@pytest.mark.sshd
async def test_rc_file_records_stay_noise(
    sshd_forging: SSHD, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = make_ssh_env(sshd_forging, tmp_path / "ssh", monkeypatch)
    async with Session(known_hosts=env.known_hosts, ssh_config=env.ssh_config) as s:
        result = await s.probe(Host(name="rc", ssh=env.alias))
    assert result.facts is not None and result.facts.probe.complete, result.error
    facts = result.facts
    assert any("@@DT1\tctx\t42" in ln for ln in result.raw_lines)  # the rc file did print it
    assert not [c for c in facts.contexts if c.pid == 42 or "forged" in c.label]
    assert all(not v.startswith("/forged") for c in facts.contexts for v in c.vars.values()), [
        c.vars for c in facts.contexts
    ]


def test_records_before_begin_and_after_end_are_noise() -> None:
    b = FactBuilder()
    for line in (
        "@@DT1\tctx\t7\tprocess\tbefore",
        "@@DT1\tbegin\t2\t",
        "@@DT1\thost\thostname\tgpu\\0121",
        "@@DT1\tend\t5",
        "@@DT1\tctx\t8\tprocess\tafter",
    ):
        b.feed(line)
    facts = b.facts()
    assert facts.host.hostname == "gpu\n1" and not facts.contexts


def _pyfacts_esc() -> Callable[[str], str]:
    """The Python side's own esc (pyrecord.py, which pyfacts.py imports: its text is taken)."""
    text = resources.files("probes").joinpath("pyrecord.py").read_text(encoding="utf-8")
    code = text[text.index("def esc(") : text.index("def rec(")]
    space: dict[str, object] = {"SENTINEL": SENTINEL}
    exec(code, space)
    return space["esc"]  # type: ignore[return-value]


PYFACTS_ESC = _pyfacts_esc()


@given(st.text())
def test_pyfacts_escapes_what_the_builder_unescapes(text: str) -> None:
    field = PYFACTS_ESC(text)
    assert "\t" not in field and "\n" not in field and "\r" not in field
    assert SENTINEL not in field
    assert unescape_field(field) == text


def test_the_shell_escapes_what_the_builder_unescapes(tmp_path: Path) -> None:
    values = ["plain", "a\\b", "t\tab", "new\nline", "c\rr", "x@@DT1\ty", "\\012 literal"]
    script = (
        probe_script().split("\nrec begin ", 1)[0]
        + '\nwhile IFS= read -r v; do rec kind "$(printf \'%b\' "$v")"; done\n'
    )
    feed = "".join(
        v.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
        + "\n"
        for v in values
    )
    path = tmp_path / "esc.sh"
    path.write_text(script)
    out = subprocess.run(
        ["sh", str(path)], input=feed, capture_output=True, text=True, timeout=30, env=os.environ
    )
    got = [unescape_field(ln.split("\t", 2)[2]) for ln in out.stdout.splitlines()]
    assert got == values
