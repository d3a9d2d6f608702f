"""The trust rule (probes/README.md): nothing chosen by the inspected host runs with the
prober's privileges. Each hole of issue 18 is planted as payloads that record who ran them
(``<name>.<uid>`` in a marker dir): an unprivileged user's serving process naming its own
CUDA_HOME, PATH nvcc, venv python and TRITON_PTXAS_PATH, probed as root over the real sshd;
and a ``root:`` tree whose nvidia-smi, nvcc, ptxas, python and ldconfig are payloads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SSHEnv
from elf_nvcc import HAS_GCC, elf_nvcc

from probes import probe_env, probe_script
from tui.core.facts.build import facts_from_output
from tui.core.hosts import Host
from tui.core.rules.completeness import unseen
from tui.core.run.runner import Session
from tui.demo.fakehost import build_fake_host, reference_ct200

USER = 4242  # an unprivileged uid (no passwd entry needed)
NVCC_124 = "Cuda compilation tools, release 12.4, V12.4.131"
PTXAS_128 = "Cuda compilation tools, release 12.8, V12.8.93"

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="planting another user's files needs root"
)
# the serving process's real interpreter: one another uid can run (not under /root)
SYSTEM_PYTHON = os.path.realpath("/usr/bin/python3")


def payload(path: Path, marks: Path, name: str, comment: str = "", uid: int | None = None) -> None:
    """A program that only records the uid it ran as (and holds ``comment``, as a real binary
    holds its version string)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\n# {comment}\nid -u > "{marks}/{name}.$(id -u)"\n')
    path.chmod(0o755)
    if uid is not None:
        os.chown(path, uid, uid)


def ran(marks: Path) -> dict[str, str]:
    """Which payloads ran, as whom: name → uid."""
    return dict(p.name.rsplit(".", 1) for p in marks.iterdir())  # type: ignore[misc]


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another uid can reach (pytest's tmp dirs are root's, 0700)."""
    top = Path(tempfile.mkdtemp(prefix="dt-trust-"))
    top.chmod(0o755)
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def user_tree(top: Path) -> tuple[Path, Path]:
    """The user's own tree (everything owned by USER) and a marker dir both can write."""
    marks = top / "marks"
    marks.mkdir()
    marks.chmod(0o1777)
    home = top / f"u{USER}"
    cuda = home / "cuda"
    if HAS_GCC:  # an ELF nvcc: read, not run (its marker would name it)
        elf_nvcc(cuda / "bin" / "nvcc", marks / "cuda-nvcc.elf")
    else:
        payload(cuda / "bin" / "nvcc", marks, "cuda-nvcc")
    (cuda / "version.json").write_text('{"cuda_nvcc": {"name": "CUDA NVCC", "version": "12.8.93"}}')
    payload(home / "bin" / "nvcc", marks, "path-nvcc", NVCC_124)
    payload(home / "venv" / "bin" / "python3", marks, "venv-python")
    payload(home / "triton" / "ptxas", marks, "triton-ptxas", PTXAS_128)
    pkg = home / "pkg" / "vllm" / "entrypoints" / "openai"
    pkg.mkdir(parents=True)
    (pkg / "api_server.py").write_text("import time\ntime.sleep(1e5)\n")
    for d in (home, *home.rglob("*")):
        os.chown(d, USER, USER)
    return home, marks


@needs_root
@pytest.mark.skipif(not os.access(SYSTEM_PYTHON, os.X_OK), reason="no /usr/bin/python3")
@pytest.mark.sshd
@pytest.mark.parametrize("path", ["sh", "auto"])  # DT_PROBE_PATH: coreutils, or the host helper
async def test_a_users_serving_process_runs_nothing_as_root(
    shared_dir: Path, ssh_env: SSHEnv, path: str
) -> None:
    home, marks = user_tree(shared_dir)
    venv_python = str(home / "venv" / "bin" / "python3")
    server = subprocess.Popen(
        [venv_python, "-m", "vllm.entrypoints.openai.api_server", "--port", "1"],
        executable=SYSTEM_PYTHON,
        user=USER,
        group=USER,
        cwd=home,
        env={
            "CUDA_HOME": str(home / "cuda"),
            "PATH": f"{home}/bin:/usr/bin:/bin",
            "TRITON_PTXAS_PATH": str(home / "triton" / "ptxas"),
            "PYTHONPATH": str(home / "pkg"),
            "HOME": str(home),
        },
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        async with Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config) as s:
            host = Host(name="shared", ssh=ssh_env.alias, env={"DT_PROBE_PATH": path})
            result = await s.probe(host)
    finally:
        server.terminate()
        server.wait(10)
    assert result.facts is not None and result.facts.probe.complete, result.error
    facts = result.facts
    (ctx,) = [c for c in facts.contexts if c.kind == "process" and c.pid == server.pid]
    assert ctx.vars["CUDA_HOME"] == str(home / "cuda")
    # nothing of the user's ran as root; the interpreter ran as the process's owner
    assert ran(marks) == {"venv-python": str(USER)}
    (py,) = [p for p in facts.pythons if p.path == venv_python]
    assert py.exists
    # the versions come from the toolkit's version.json and the binaries' own strings
    cuda = facts.toolkit_at(str(home / "cuda"))
    assert cuda is not None and cuda.version == "12.8"
    assert cuda.version_source == ("binary" if HAS_GCC else "version.json")
    path_nvcc = facts.toolkit_at(str(home))
    assert (
        path_nvcc is not None and path_nvcc.version == "12.4" and path_nvcc.version_source == "file"
    )
    (ptxas,) = [p for p in facts.ptxas if p.path == str(home / "triton" / "ptxas")]
    assert ptxas.version == "12.8" and ptxas.version_source == "file"
    notes = [ln for ln in result.raw_lines if ln.startswith("@@DT1\tnote\ttrust\t")]
    assert any(f"is owned by uid {USER}" in ln for ln in notes)


def payload_tree(tmp_path: Path) -> tuple[Path, Path]:
    """The reference CT200 tree with every program it holds replaced by a payload."""
    marks = tmp_path / "marks"
    marks.mkdir()
    fake = build_fake_host(tmp_path / "tree", reference_ct200())
    root = fake.root
    python = root / "root/venv_sglang211/bin/python3"
    python.unlink()
    for path, name in (
        (root / "usr/bin/nvidia-smi", "nvidia-smi"),
        (root / "usr/local/cuda-12.8/bin/nvcc", "nvcc"),
        (root / "usr/local/cuda-12.8/bin/ptxas", "ptxas"),
        (python, "python"),
        (root / "sbin/ldconfig", "ldconfig"),
        (root / "bin/sh", "sh"),
        (root / "bin/bash", "bash"),
    ):
        payload(path, marks, name)
    return root, marks


def test_a_root_tree_runs_none_of_its_programs(tmp_path: Path) -> None:
    root, marks = payload_tree(tmp_path)
    env = {**os.environ, **probe_env(["/root/venv_sglang211/bin/python3"], root=str(root))}
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert ran(marks) == {}
    facts = facts_from_output(out.stdout)
    assert facts.driver.state == "not-run" and "root: tree" in (facts.driver.message or "")
    tk = facts.toolkit_at("/usr/local/cuda-12.8")
    assert tk is not None and tk.version == "12.8" and tk.version_source == "version.json"
    # its interpreter's files were read by this machine's own python3 instead
    py = next(p for p in facts.pythons if p.path == "/root/venv_sglang211/bin/python3")
    assert py.error is None and py.prefix == "/root/venv_sglang211"
    assert py.torch_version == "2.9.1+cu130" and py.flashinfer_version == "0.6.8"
    assert py.version == ".".join(map(str, sys.version_info[:3]))  # its pyvenv.cfg's version
    assert "\tread_by\t/usr/bin/python3" in out.stdout
    assert not [w for w in facts.probe.not_run if w.startswith("python")]


async def test_an_inventory_root_runs_nothing_from_it_but_a_fake_tree_does(tmp_path: Path) -> None:
    root, marks = payload_tree(tmp_path)
    async with Session() as s:
        image, fake = await s.probe_many(
            [
                Host(name="image", local=True, root=str(root)),
                Host(name="fake", local=True, root=str(root), simulate="tree"),
            ]
        )
    assert image.facts is not None and image.facts.driver.state == "not-run"
    assert any("nvidia-smi" in r and "not run" in r for r in unseen(image))
    # `simulate: tree` (a tree detective-tui built) runs its stand-ins, as the demo fleet does
    assert fake.facts is not None and fake.facts.driver.state != "not-run"
    assert set(ran(marks)) >= {"nvidia-smi", "nvcc"}
