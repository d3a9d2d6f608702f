"""The pip fixes for real: each plan and its undo run by the real pip, over the real loopback
sshd, on a fake host whose venv is a real venv (``python -m venv``; ``tests/pip_venv.py`` copies
ensurepip's pip in), against a local package index built here from small stand-in wheels with
the real names and versions (``tests/pip_standins.py``). The plans reach PyTorch's per-variant
indexes through ``$DETECTIVE_TUI_TORCH_INDEX`` and PyPI through the host's ``PIP_INDEX_URL``
(the inventory's ``env:``), as a mirror or an air-gapped fleet would. After the fix the re-probe
reads what pip installed (dist-info, ``torch/version.py``, the pip toolkit's nvcc and headers)
and the finding is gone; after the undo ``pip freeze --all`` and every file of the venv are as
before.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pip_standins as si
import pytest
import yaml
from pip_venv import SITE_REL, make_venv
from sshd import SSHD

from tui.cli import main
from tui.core import exitcodes
from tui.core.fixes.pipplan import WAIT
from tui.core.fixes.steplock import LOCK_TEMPLATE
from tui.core.tables.torch_index import INDEX_ENV
from tui.demo import fakehost
from tui.demo.neighbours import cpu_torch_on_gpus, extension_for_other_torch

pytestmark = [pytest.mark.sshd, pytest.mark.slow]  # 11–19 s each on an idle machine

VENV = "/opt/venv"
STATE_DIR = ".detective-tui"  # the pip plans' freeze records, beside the venv's own files
H100_FLAGS = fakehost.pypi_torch_arch_flags("2.8.0+cu128")  # the 2.9.0+cu128 capture is equal
CU130_FLAGS = fakehost.pypi_torch_arch_flags("2.11.0+cu130")


# -- the host -------------------------------------------------------------------------------------


class Box:
    """A fake host tree with a real venv at ``/opt/venv``, the local index, and an inventory
    entry reaching it over the loopback sshd."""

    def __init__(self, tmp: Path, spec: fakehost.FakeHostSpec, index: si.LocalIndex) -> None:
        self.tmp, self.index = tmp, index
        spec = replace(spec, venvs=(), inventory_pythons=(f"{VENV}/bin/python3",))
        self.fake = fakehost.build_fake_host(tmp / "host root", spec)
        self.venv = self.fake.root / VENV.lstrip("/")
        self.python = str(self.venv / "bin" / "python3")
        make_venv(self.venv)
        self.pip_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp / "home"),
            # never this machine's pip.conf (its mirrors, constraints, find-links)
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_INDEX_URL": index.url("pypi"),
            "PIP_CACHE_DIR": str(tmp / "pip-cache"),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            # and nothing beyond the local index: a URL elsewhere fails at once
            "PIP_PROXY": "http://127.0.0.1:9",
            "PIP_RETRIES": "0",
        }

    def pip(self, *args: str) -> str:
        out = subprocess.run(
            [self.python, "-m", "pip", *args],
            env=self.pip_env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    def install(
        self,
        *reqs: str,
        extra_index: Sequence[str] = (),
        no_deps: bool = False,
        constraints: Sequence[str] = (),
    ) -> None:
        args = ["install", "-q", *(f"--extra-index-url={self.index.url(i)}" for i in extra_index)]
        if constraints:
            (self.tmp / "constraints.txt").write_text("".join(f"{c}\n" for c in constraints))
            args += ["-c", str(self.tmp / "constraints.txt")]
        self.pip(*args, *(["--no-deps"] if no_deps else []), *reqs)

    def freeze(self) -> list[str]:
        return self.pip("freeze", "--all").splitlines()

    def tree(self) -> dict[str, str]:
        """Every path of the venv (its pip records aside) → its mode and content. Byte
        code embeds its source's mtime, so ``.pyc`` files and RECORD lines of them count by
        name only."""
        out: dict[str, str] = {}
        for p in sorted(self.venv.rglob("*")):
            rel = str(p.relative_to(self.venv))
            if rel == STATE_DIR or rel.startswith(STATE_DIR + "/"):
                continue
            if p.is_symlink():
                out[rel] = "-> " + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            elif p.suffix == ".pyc":
                out[rel] = "pyc"
            elif p.name == "RECORD":  # bytes as they are, line endings included
                lines = [
                    ln.split(b",")[0] if b"__pycache__" in ln else ln
                    for ln in p.read_bytes().splitlines(keepends=True)
                ]
                out[rel] = repr(sorted(lines))
            else:
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
                out[rel] = f"{p.stat().st_mode:o} {digest}"
        return out

    def inventory(self, alias: str) -> str:
        env = {k: v for k, v in self.pip_env.items() if k.startswith("PIP_")}
        host = {
            "name": "box",
            "ssh": alias,
            "root": str(self.fake.root),
            "simulate": "tree",
            "env": {**self.fake.env, **env},
            "python": list(self.fake.pythons),
        }
        path = self.tmp / "hosts.yaml"
        path.write_text(yaml.safe_dump({"hosts": [host]}))
        return str(path)


def _cli(capsys: pytest.CaptureFixture[str], inv: str, *argv: str) -> tuple[int, Any]:
    code = main(["--hosts", inv, *argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def _diagnose(capsys: pytest.CaptureFixture[str], inv: str) -> dict[str, Any]:
    _code, (host,) = _cli(capsys, inv, "diagnose")
    return host


def _fixes(host: dict[str, Any], finding: str) -> list[tuple[str, dict[str, str]]]:
    (f,) = [f for f in host["findings"] if f["id"] == finding]
    return [(x["id"], x["params"]) for x in f["fixes"]]


def _apply_and_undo(
    capsys: pytest.CaptureFixture[str],
    box: Box,
    inv: str,
    fix: str,
    params: dict[str, str],
    finding: str,
    again: bool = False,
) -> list[str]:
    """Run the fix and its undo; return ``pip freeze --all`` between them. ``again``: a second
    run of the fix finds the work done (its guard) and changes nothing."""
    freeze, tree = box.freeze(), box.tree()
    argv = ["fix", "box", fix, *(f"{k}={v}" for k, v in params.items()), "--yes"]
    code, (outcome,) = _cli(capsys, inv, *argv)
    assert code == exitcodes.OK, outcome
    assert [s["status"] for s in outcome["steps"]] == ["changed"], outcome
    assert outcome["resolved"] == [finding] and not outcome["introduced"], outcome
    fixed = box.freeze()
    assert fixed != freeze
    if again:
        code, (rerun,) = _cli(capsys, inv, *argv)
        assert code == exitcodes.OK, rerun
        assert [s["status"] for s in rerun["steps"]] == ["unchanged"], rerun
        assert rerun["undo_record"] is None and box.freeze() == fixed

    code, undone = _cli(capsys, inv, "fix", "box", "--undo", "last", "--yes")
    assert code == exitcodes.OK, undone
    assert undone["original_verdict_restored"], undone
    assert box.freeze() == freeze
    assert box.tree() == tree
    return fixed


# -- the index ------------------------------------------------------------------------------------


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> si.LocalIndex:
    idx = si.LocalIndex(tmp_path / "index")
    monkeypatch.setenv(INDEX_ENV, idx.url("torch") + "/{variant}")
    return idx


def test_install_cuda_torch(
    ssh_env: Any, tmp_path: Path, index: si.LocalIndex, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime = "nvidia-cuda-runtime-cu12==12.8.90"  # torch 2.8/2.9's pin (requires-dist fixture)
    index.add("torch/cpu", si.torch("2.9.1+cpu", cuda=None))
    index.add(
        "torch/cu128",
        si.torch("2.9.1+cu128", cuda="12.8", arch_flags=H100_FLAGS, requires=[runtime]),
    )
    index.add("pypi", si.package("vllm", "0.10.1"), si.cuda_runtime_cu12("12.8.90"))
    box = Box(tmp_path, cpu_torch_on_gpus(), index)
    box.install("torch==2.9.1+cpu", "vllm==0.10.1", extra_index=["torch/cpu"])
    inv = box.inventory(ssh_env.alias)
    host = _diagnose(capsys, inv)
    assert _fixes(host, "torch-cpu-build") == [("install-cuda-torch", {"cuda": "12.8"})]

    fixed = _apply_and_undo(
        capsys, box, inv, "install-cuda-torch", {"cuda": "12.8"}, "torch-cpu-build"
    )
    assert "torch==2.9.1+cu128" in fixed and runtime in fixed


@pytest.mark.parametrize("source", ["index", "file"])
def test_match_extension_to_torch(
    ssh_env: Any,
    tmp_path: Path,
    index: si.LocalIndex,
    capsys: pytest.CaptureFixture[str],
    source: str,
) -> None:
    """torchvision 0.24.1 (for torch 2.9.1) beside torch 2.8.0+cu128 — installed from PyPI,
    or from a wheel file someone downloaded. The fix picks torchvision 0.23.0+cu128 from the
    cu128 index; the undo puts back exactly the build that was there (PyPI's 0.24.1, not the
    cu128 index's 0.24.1+cu128, which ``==0.24.1`` also matches; the file's)."""
    runtime = "nvidia-cuda-runtime-cu12==12.8.90"
    vision_241 = si.package("torchvision", "0.24.1", requires=["torch (==2.9.1)"])
    index.add(
        "torch/cu128",
        si.torch("2.8.0+cu128", cuda="12.8", arch_flags=H100_FLAGS, requires=[runtime]),
        si.torch("2.9.1+cu128", cuda="12.8", arch_flags=H100_FLAGS, requires=[runtime]),
        si.package("torchvision", "0.23.0+cu128", requires=["torch (==2.8.0)"]),
        si.package("torchvision", "0.24.1+cu128", requires=["torch (==2.9.1)"]),
    )
    index.add(
        "pypi",
        vision_241,
        si.package("vllm", "0.10.1"),
        si.package("triton", "3.4.0"),
        si.flashinfer("0.6.8"),
        si.cuda_runtime_cu12("12.8.90"),
    )
    box = Box(tmp_path, extension_for_other_torch(), index)
    box.install(
        "torch==2.8.0+cu128",
        "vllm==0.10.1",
        "triton==3.4.0",
        "flashinfer-python==0.6.8",
        extra_index=["torch/cu128"],
    )
    if source == "file":
        box.install(str(si.build_wheel(tmp_path / "downloads", vision_241)), no_deps=True)
    else:
        box.install("torchvision==0.24.1", no_deps=True)
    inv = box.inventory(ssh_env.alias)
    host = _diagnose(capsys, inv)
    finding = "extension-torch-abi-mismatch"
    assert _fixes(host, finding) == [("match-extension-to-torch", {"package": "torchvision"})]

    fixed = _apply_and_undo(
        capsys, box, inv, "match-extension-to-torch", {"package": "torchvision"}, finding
    )
    assert "torchvision==0.23.0+cu128" in fixed and "torch==2.8.0+cu128" in fixed


def test_align_cuda_wheels(
    ssh_env: Any, tmp_path: Path, index: si.LocalIndex, capsys: pytest.CaptureFixture[str]
) -> None:
    """The flashinfer#3493 venv: torch 2.11.0 (cu130, pinning cuda-toolkit[cudart]==13.0.2)
    and nvcc, crt, nvvm 13.3 from pip over the 13.0 runtime headers. The fix pins them with
    ``cuda-toolkit[nvcc,crt,nvvm,cccl]==13.0.2``; the re-probe runs the pip toolkit's nvcc."""
    index.add(
        "pypi",
        si.torch(
            "2.11.0+cu130",
            cuda="13.0",
            arch_flags=CU130_FLAGS,
            requires=["cuda-toolkit[cudart]==13.0.2"],
            pypi=True,
        ),
        si.flashinfer("0.6.8"),
        si.cuda_toolkit("13.0.2", si.CUDA_TOOLKIT_1302),
        si.cu13_runtime("13.0.96", fakehost.CUDART_130_HEADER),
        si.cu13_nvcc("13.0.88", "nvcc/nvcc-13.0.88.txt"),
        si.cu13_nvcc("13.3.73", "nvcc/nvcc-13.3.73.txt"),
        *(
            si.cu13_part(name, version, rel)
            for version in ("13.0.88", "13.3.73")
            for name, rel in (
                ("nvidia-cuda-crt", "include/crt/host_config.h"),
                ("nvidia-nvvm", "nvvm/include/nvvm.h"),
            )
        ),
        si.cu13_part("nvidia-cuda-cccl", "13.0.85", "include/cccl/cuda/std/version"),
    )
    box = Box(tmp_path, fakehost.pip_toolkit_mixed(), index)
    box.install("torch==2.11.0", "flashinfer-python==0.6.8")
    # `pip install -U nvidia-cuda-nvcc` as a guide says: crt and nvvm come as its dependencies
    box.install(
        "nvidia-cuda-nvcc==13.3.73",
        constraints=["nvidia-cuda-crt==13.3.73", "nvidia-nvvm==13.3.73"],
    )
    inv = box.inventory(ssh_env.alias)
    host = _diagnose(capsys, inv)
    finding = "toolkit-headers-mismatch"
    assert _fixes(host, finding) == [("align-cuda-wheels", {"version": "13.0.2"})]

    fixed = _apply_and_undo(
        capsys, box, inv, "align-cuda-wheels", {"version": "13.0.2"}, finding, again=True
    )
    for pin in ("nvidia-cuda-nvcc==13.0.88", "nvidia-nvvm==13.0.88", "nvidia-cuda-cccl==13.0.85"):
        assert pin in fixed


def test_upgrade_flashinfer(
    ssh_env: Any, tmp_path: Path, index: si.LocalIndex, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seed case ct200 (8× RTX PRO 6000, only CUDA 12.8, torch 2.9.1+cu130): FlashInfer
    0.6.8 rejects SM 12.0 with CUDA 12.8 and 0.7.1 builds it (``12.0a``). The fix's pip command
    upgrades the stand-in flashinfer-python 0.6.8 → 0.7.1 from the host's index; the re-probe
    reads 0.7.1's ``_build_meta.py`` and the replay passes; a re-run changes nothing; the undo
    puts 0.6.8 back, file for file."""
    index.add(
        "pypi",
        si.torch("2.9.1+cu130", cuda="13.0", arch_flags=CU130_FLAGS, pypi=True),
        si.flashinfer("0.6.8"),
        si.flashinfer("0.7.1"),
    )
    box = Box(tmp_path, fakehost.reference_ct200(service=False), index)
    box.install("torch==2.9.1", "flashinfer-python==0.6.8")
    inv = box.inventory(ssh_env.alias)
    host = _diagnose(capsys, inv)
    finding = "flashinfer-arch-rejected"
    assert ("upgrade-flashinfer", {"version": "0.7.1"}) in _fixes(host, finding)

    fixed = _apply_and_undo(
        capsys, box, inv, "upgrade-flashinfer", {"version": "0.7.1"}, finding, again=True
    )
    assert "flashinfer-python==0.7.1" in fixed and "torch==2.9.1" in fixed


def _pip_pid(python: str, requirement: str) -> int | None:
    """The process id of ``<python> -m pip install … requirement`` (the remote pip)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [w.decode(errors="replace") for w in argv]
        if words[:4] == [python, "-m", "pip", "install"] and requirement in words:
            return int(proc.name)
    return None


CLI = "import sys; from tui.cli import main; sys.exit(main(sys.argv[1:]))"


class BigTorchBox:
    """install-cuda-torch on the H100 node's vLLM venv with torch 2.9.1+cpu, where the CUDA
    torch's wheel writes a 1 GiB file first, and the client running the fix in a process of
    its own."""

    def __init__(self, tmp_path: Path, index: si.LocalIndex, alias: str) -> None:
        runtime = "nvidia-cuda-runtime-cu12==12.8.90"
        index.add("torch/cpu", si.torch("2.9.1+cpu", cuda=None))
        big = si.torch(
            "2.9.1+cu128", cuda="12.8", arch_flags=H100_FLAGS, requires=[runtime], padding=1 << 30
        )
        index.add("torch/cu128", big)
        index.add("pypi", si.package("vllm", "0.10.1"), si.cuda_runtime_cu12("12.8.90"))
        self.box = box = Box(tmp_path, cpu_torch_on_gpus(), index)
        box.install("torch==2.9.1+cpu", "vllm==0.10.1", extra_index=["torch/cpu"])
        self.inv = box.inventory(alias)
        self.freeze, self.tree = box.freeze(), box.tree()
        self.padding = box.venv / SITE_REL / si.padding_path(big)

    def start(self, *argv: str) -> subprocess.Popen[bytes]:
        command = [sys.executable, "-c", CLI, "--hosts", self.inv, *argv, "--json"]
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def pip_mid_wheel(self, client: subprocess.Popen[bytes]) -> int:
        """The remote pip's pid once it writes the big file (the CPU torch already stashed)."""
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and client.poll() is None:
            pid = _pip_pid(self.box.python, "torch==2.9.1+cu128")
            if pid is not None and self.padding.exists():
                return pid
            time.sleep(0.005)
        raise AssertionError(f"pip never wrote {self.padding}: {client.communicate()}")


def test_install_cut_mid_wheel_is_undone_by_the_next_run(
    ssh_env: Any, tmp_path: Path, index: si.LocalIndex, capsys: pytest.CaptureFixture[str]
) -> None:
    """The remote pip is killed while it writes the CUDA torch: pip has moved the CPU torch
    aside (its ``~orch`` stash) and the new one is half there. The journal keeps the step as
    ``unknown``; the next run's undo brings back the CPU torch and moves aside everything of
    the half-installed one."""
    big = BigTorchBox(tmp_path, index, ssh_env.alias)
    box = big.box
    client = big.start("fix", "box", "install-cuda-torch", "cuda=12.8", "--yes")
    os.kill(big.pip_mid_wheel(client), signal.SIGKILL)
    out, _err = client.communicate(timeout=240)
    (outcome,) = json.loads(out)
    (step,) = outcome["steps"]
    assert (step["status"], step["journal_status"], step["may_have_changed"]) == (
        "failed",
        "unknown",
        True,
    ), outcome
    assert not outcome["applied"] and outcome["undo_record"], outcome
    cut = set(box.tree()) - set(big.tree)
    assert f"{SITE_REL}/~orch" in cut and f"{SITE_REL}/torch/lib/padding.bin" in cut, cut
    assert "torch==2.9.1+cpu" not in box.freeze()  # pip had moved it aside when it died

    _code, (record,) = _cli(capsys, big.inv, "fix", "box", "--history")
    assert (record["state"], record["state_text"]) == ("failed", "FAILED at step 1 of 1")
    assert [s["status"] for s in record["journal"]] == ["unknown"], record

    code, undone = _cli(capsys, big.inv, "fix", "box", "--undo", "last", "--yes")
    assert code == exitcodes.OK, undone
    assert undone["original_verdict_restored"], undone
    assert box.freeze() == big.freeze
    assert box.tree() == big.tree
    (aside,) = (box.venv / STATE_DIR).glob("pip-leftovers-*")  # moved aside, not deleted
    kept = {str(p.relative_to(aside)) for p in aside.rglob("*") if p.is_file()}
    assert f"{SITE_REL}/torch/lib/padding.bin" in kept, kept
    assert f"{SITE_REL}/~orch/version.py" in kept, kept


def _descendants(pid: int) -> list[list[str]]:
    """The argv of every process below ``pid``."""
    parents: dict[int, int] = {}
    argvs: dict[int, list[str]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parents[int(proc.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        argvs[int(proc.name)] = [w.decode(errors="replace") for w in argv if w]
    below, found = {pid}, []
    grew = True
    while grew:  # a child's pid may be lower than its parent's: sweep until nothing is added
        grew = False
        for child, parent in parents.items():
            if parent in below and child not in below:
                below.add(child)
                found.append(argvs[child])
                grew = True
    return found


def _undo_waits(sshd: SSHD, python: str) -> bool:
    """Is an undo's session on this sshd blocked behind the step still running? Either in the
    host tree's step lock (its ``sleep 1`` loop) or in pip's own lock (``python -I -c WAIT``).
    The killed client's step shell is no session of the sshd any more (init adopted it)."""
    for argv in _descendants(sshd.proc.pid):
        if argv == ["sleep", "1"] or argv[:4] == [python, "-I", "-c", WAIT]:
            return True
    return False


def test_a_pip_that_outlives_its_client_is_waited_for_by_the_undo(
    ssh_env: Any, tmp_path: Path, index: si.LocalIndex, capsys: pytest.CaptureFixture[str]
) -> None:
    """``kill -9`` of detective-tui while pip writes the CUDA torch: the connection drops, but
    the remote pip runs on (sshd signals no session without a terminal). The record says
    INTERRUPTED; an undo started at once must not run beside that pip — it waits for it (the
    pip is held stopped until the undo is seen waiting, so the order is certain), then
    restores the venv exactly."""
    assert "\n  sleep 1\n" in LOCK_TEMPLATE  # the step lock's wait, as _undo_waits knows it
    big = BigTorchBox(tmp_path, index, ssh_env.alias)
    client = big.start("fix", "box", "install-cuda-torch", "cuda=12.8", "--yes")
    pip = big.pip_mid_wheel(client)
    try:
        os.kill(pip, signal.SIGSTOP)
        os.kill(client.pid, signal.SIGKILL)
        client.communicate(timeout=60)
        _code, (record,) = _cli(capsys, big.inv, "fix", "box", "--history")
        assert record["state_text"] == "INTERRUPTED at step 1 of 1", record
        assert _pip_pid(big.box.python, "torch==2.9.1+cu128") == pip  # it outlived the client

        undo = big.start("fix", "box", "--undo", "last", "--yes")
        deadline = time.monotonic() + 120
        waited = False
        while not waited and time.monotonic() < deadline and undo.poll() is None:
            waited = _undo_waits(ssh_env.sshd, big.box.python)
            time.sleep(0.05)
        assert waited, "the undo never waited for the pip of the killed client's step"
    finally:
        os.kill(pip, signal.SIGCONT)
    out, err = undo.communicate(timeout=300)
    deadline = time.monotonic() + 120
    while _pip_pid(big.box.python, "torch==2.9.1+cu128") == pip and time.monotonic() < deadline:
        time.sleep(0.1)  # judge the venv once that pip has ended too
    assert undo.returncode == exitcodes.OK, out + err
    assert json.loads(out)["original_verdict_restored"], out
    assert big.box.freeze() == big.freeze
    assert big.box.tree() == big.tree
