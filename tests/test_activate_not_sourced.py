"""A fix's check of a venv's ``activate`` reads the file, never runs it: not on a live host
over SSH (a venv owned by another user would run its code as the operator's login), not for
an inspected ``root:`` tree (it would run on the inspecting machine), not for a simulated one.
The values are those ``.`` would leave (tui.core.fixes.activate)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SSHEnv

from tui.core.fixes.activate import activated_env
from tui.core.fixes.plan import FixPlan
from tui.core.hosts import Host
from tui.core.run.fix_envread import read_envs
from tui.core.run.runner import Session

CUDA = "/usr/local/cuda-13.0"


def _venv(base: Path, marker: Path) -> Path:
    """A real venv (``python -m venv``) whose activate ends with a fix's block and a payload."""
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    activate = venv / "bin" / "activate"
    nvcc = base / "cuda" / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text("#!/bin/sh\n")
    nvcc.chmod(0o755)
    with activate.open("a") as f:
        f.write(
            f"touch {marker}; export EVIL=$(touch {marker}) SEEN=`id`\n"
            f"# >>> detective-tui use-installed-toolkit\nexport CUDA_HOME='{CUDA}'\n"
            f"export PATH='{nvcc.parent}':\"$PATH\"\n# <<< detective-tui\n"
        )
    return venv


def _plan(host: Host, activate: str) -> FixPlan:
    return FixPlan(
        fix_id="use-installed-toolkit",
        host=host,
        params={},
        steps=(),
        verify_gone=(),
        activate=activate,
        env_keys=("CUDA_HOME", "EVIL", "SEEN"),
    )


async def test_a_live_hosts_activate_is_read_over_ssh_not_sourced(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    marker = tmp_path / "ran"
    venv = _venv(tmp_path, marker)
    host = Host(name="live", ssh=ssh_env.alias)
    async with Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config) as s:
        reads = await read_envs(s, host, _plan(host, str(venv / "bin" / "activate")))
    assert not marker.exists()
    assert reads.activate is not None
    assert reads.activate.vars["CUDA_HOME"] == CUDA
    path = reads.activate.vars["PATH"].split(":")
    assert path[:2] == [str(tmp_path / "cuda" / "bin"), str(venv / "bin")]
    assert len(path) > 2  # the host shell's own PATH follows, as after `.`
    assert "EVIL" not in reads.activate.vars and "SEEN" not in reads.activate.vars
    assert reads.activate.which_nvcc[0] == str(tmp_path / "cuda" / "bin" / "nvcc")


@pytest.mark.parametrize("simulate", [None, "tree"])
async def test_a_trees_activate_is_read_inside_its_root_not_sourced(
    tmp_path: Path, simulate: str | None
) -> None:
    root = tmp_path / "image"
    (root / "venv" / "bin").mkdir(parents=True)
    marker = tmp_path / "ran"
    (root / "venv" / "bin" / "activate").write_text(
        f"touch {marker}\nexport CUDA_HOME={CUDA}\nPATH=/venv/bin:$PATH\n"
    )
    host = Host(name="image", local=True, root=str(root), simulate=simulate)
    async with Session() as session:
        reads = await read_envs(session, host, _plan(host, "/venv/bin/activate"))
    assert not marker.exists()
    assert reads.activate is not None
    assert reads.activate.vars["CUDA_HOME"] == CUDA
    assert reads.activate.vars["PATH"].startswith("/venv/bin:")


def test_only_what_dot_would_leave_set_is_read() -> None:
    text = """
deactivate () {
    PATH="${_OLD_VIRTUAL_PATH:-}"
    export PATH
}
if [ -n "${PYTHONHOME:-}" ] ; then
    unset PYTHONHOME
fi
case "$(uname)" in
    CYGWIN*|MSYS*|MINGW*)
        VIRTUAL_ENV=$(cygpath "/v")
        ;;
    *)
        VIRTUAL_ENV='/v'
        ;;
esac
export VIRTUAL_ENV
PATH="$VIRTUAL_ENV/bin:$PATH"; export PATH
CUDA_HOME=/tmp/x cmd
[ -d /c ] && export CUDA_HOME=/c
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/lib} TRITON_PTXAS_PATH="$CUDA_HOME/bin/ptxas"
unset GONE
"""
    env = activated_env(text, {"PATH": "/usr/bin", "PYTHONHOME": "/p", "GONE": "1"})
    assert env == {
        "PATH": "/v/bin:/usr/bin",
        "PYTHONHOME": "/p",
        "VIRTUAL_ENV": "/v",
        "LD_LIBRARY_PATH": "/lib",
        "TRITON_PTXAS_PATH": "/bin/ptxas",
    }


def test_quoted_values_with_spaces_are_one_word(tmp_path: Path) -> None:
    """A venv under a directory with a space (python -m venv quotes its path) and a fix's block
    that quotes the toolkit path: each quoted value is one word, as sh reads it."""
    venv = tmp_path / "throwaway venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    home = f"{venv}/lib/nvidia/cu13"
    text = (venv / "bin" / "activate").read_text() + (
        f"# >>> detective-tui cuda >>>\nexport CUDA_HOME='{home}'\n"
        f"export PATH='{home}/bin':\"$PATH\"  # the toolkit first\n"
        'NOTE="a; b | c" ; export NOTE\n# <<< detective-tui cuda <<<\n'
    )
    env = activated_env(text, {"PATH": "/usr/bin"})
    assert env["VIRTUAL_ENV"] == str(venv)
    assert env["CUDA_HOME"] == home
    assert env["PATH"] == f"{home}/bin:{venv}/bin:/usr/bin"
    assert env["NOTE"] == "a; b | c"
