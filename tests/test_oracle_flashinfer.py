"""Oracle: the replay against the real FlashInfer code, on generated cases.

Downloads flashinfer-python wheels of every era (``pip download --no-deps``) and a CPU torch
into ``~/.cache/detective-tui-tests/`` (outside the repo), fakes the GPUs inside torch, points
``CUDA_HOME``/``CUDA_PATH``/``PATH`` at fake nvcc scripts that print the real banners from the
shared fixtures, imports FlashInfer in a fresh process per case through
``probes/deep_flashinfer.py`` (the same ground-truth script ``diagnose --deep`` runs), and
compares ``get_cuda_path()``, ``get_cuda_version()``, ``TARGET_CUDA_ARCHS``,
``check_cuda_arch()``, the import error, the warnings and the workspace with the replay.

Importing torch takes seconds and FlashInfer one, so each case's process is forked from a
process that has imported torch only (``ZYGOTE``): the case's environment and working directory
are set in the fork, which then imports FlashInfer for the first time. A sample of cases also
runs in an interpreter started afresh with the case's environment (``HARNESS``), and both must
print the same.
"""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from shared_fixtures import shared_fixture

from tui.core.rules.flashinfer_replay import Nvcc, ReplayInput, run

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".cache" / "detective-tui-tests"
VERSIONS = ("0.5.3", "0.6.6", "0.6.7", "0.6.8", "0.7.0", "0.7.2.post1")
DEPS = ("apache-tvm-ffi<0.2,>=0.1.11", "packaging", "requests", "nvidia-ml-py", "tqdm", "numpy")
TOOLKITS = ("12.6", "12.8", "12.9", "13.0")
CASES_PER_VERSION = 21
SEED = 20261129

FAKE_GPUS = """
def fake_gpus(torch, spec):
    caps = [tuple(c) for c in spec["devices"]]
    torch.cuda.device_count = lambda: len(caps)
    torch.cuda.is_available = lambda: bool(caps)
    def capability(device=None):
        if device is None:
            return caps[0]
        return caps[device if isinstance(device, int) else (getattr(device, "index", 0) or 0)]
    torch.cuda.get_device_capability = capability
    torch.version.cuda = spec["torch_cuda"]
"""

# a fresh interpreter per case, started with the case's environment
HARNESS = (
    FAKE_GPUS
    + """
import json, sys
spec = json.loads(sys.argv[1])
sys.path.insert(0, spec["flashinfer_dir"])
import torch
fake_gpus(torch, spec)
sys.path.insert(0, spec["probes_dir"])
import deep_flashinfer
print(json.dumps(deep_flashinfer.collect()))
"""
)

# one interpreter that has imported torch (nothing else of the cases'); per stdin line (a case's
# spec) a fork takes the case's environment and cwd, imports FlashInfer and answers one line
ZYGOTE = (
    FAKE_GPUS
    + """
import json, os, signal, sys, traceback
import torch
for line in sys.stdin:
    spec = json.loads(line)
    r, w = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(2, 1)  # whatever the case prints goes to stderr, never into the answers
        signal.alarm(120)
        try:
            os.environ.clear()
            os.environ.update(spec["env"])
            os.chdir(spec["cwd"])
            sys.path.insert(0, spec["flashinfer_dir"])
            fake_gpus(torch, spec)
            sys.path.insert(0, spec["probes_dir"])
            import deep_flashinfer
            answer = {"ok": deep_flashinfer.collect()}
        except BaseException:
            answer = {"error": traceback.format_exc()}
        with os.fdopen(w, "w") as out:
            out.write(json.dumps(answer))
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as got:
        text = got.read()
    _, status = os.waitpid(pid, 0)
    print(text if text else json.dumps({"error": f"case process ended: wait status {status}"}))
"""
)


def _pip(*args: str, python: str = sys.executable) -> None:
    subprocess.run([python, "-m", "pip", "-q", *args], check=True, timeout=1800)


def ensure_oracle_python() -> str:
    """A cached venv with CPU torch and FlashInfer's minimal dependencies (no FlashInfer)."""
    venv = CACHE / "oracle-venv"
    python = venv / "bin" / "python"
    marker = venv / ".ready"
    if not marker.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        _pip("install", "torch==2.13.0", *DEPS, python=str(python))
        marker.write_text("ok\n")
    return str(python)


def ensure_flashinfer_dirs() -> dict[str, Path]:
    """version → a cached directory holding that wheel's ``flashinfer/`` Python files."""
    dirs = {}
    for version in VERSIONS:
        target = CACHE / "flashinfer-wheels" / version
        if not (target / "flashinfer" / "__init__.py").exists():
            target.mkdir(parents=True, exist_ok=True)
            _pip("download", "--no-deps", f"flashinfer-python=={version}", "-d", str(target))
            wheel = next(target.glob("flashinfer_python-*.whl"))
            with zipfile.ZipFile(wheel) as zf:
                members = [n for n in zf.namelist() if n.startswith("flashinfer/")]
                zf.extractall(target, [n for n in members if n.endswith((".py", ".txt"))])
        dirs[version] = target
    return dirs


@pytest.fixture(scope="session")
def oracle_python() -> str:
    return ensure_oracle_python()


@pytest.fixture(scope="session")
def flashinfer_dirs() -> dict[str, Path]:
    return ensure_flashinfer_dirs()


def _write(path: Path, text: str, mode: int = 0o755) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


@pytest.fixture(scope="session")
def fake_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Fake toolkits whose nvcc prints the real banners, plus broken ones."""
    root = tmp_path_factory.mktemp("oracle")
    for mm in TOOLKITS:
        banner = shared_fixture(f"nvcc/nvcc-{mm}.txt")
        _write(root / f"cuda-{mm}" / "bin" / "nvcc", f"#!/bin/sh\ncat '{banner}'\n")
    _write(root / "cuda-noexec" / "bin" / "nvcc", "#!/bin/sh\necho never\n", 0o644)
    _write(root / "cuda-garbage" / "bin" / "nvcc", "#!/bin/sh\necho garbage output\n")
    _write(root / "cuda-failing" / "bin" / "nvcc", "#!/bin/sh\necho broken >&2\nexit 1\n")
    (root / "cuda-empty").mkdir()
    (root / "home").mkdir()
    return root


@functools.cache  # the fake toolkits never change: each nvcc runs once per session
def _probe_nvcc(path: str) -> Nvcc:
    """What the real probe would record for one nvcc path, by running it."""
    if not os.path.exists(path):
        return Nvcc("missing")
    if not os.access(path, os.X_OK):
        return Nvcc("not-executable")
    proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        return Nvcc("failed")
    for word in proc.stdout.replace(",", " ").split():
        parts = word.split(".")
        if len(parts) == 2 and all(p.isdigit() for p in parts) and "release " + word in proc.stdout:
            return Nvcc("ok", word)
    return Nvcc("unparsable")


def _gen_cases(tree: Path) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    homes = [str(tree / f"cuda-{mm}") for mm in TOOLKITS]
    broken = [str(tree / n) for n in ("cuda-noexec", "cuda-garbage", "cuda-failing", "cuda-empty")]
    caps = [(12, 0), (12, 1), (9, 0), (10, 0), (10, 3), (8, 9), (8, 0), (7, 5), (7, 0)]
    lists = ["12.0a", "12.0f", "12.0", "9.0a 12.0a", "12.0+PTX", "", "9.0a;12.0a", "120",
             "8.9 9.0", "12.1", "9.0a  12.0a"]  # fmt: skip
    cases = []
    for version in VERSIONS:
        for _ in range(CASES_PER_VERSION):
            env: dict[str, str] = {}
            roll = rng.random()
            if roll < 0.55:
                env["CUDA_HOME"] = rng.choice(homes + broken[:2])
            elif roll < 0.65:
                env["CUDA_HOME"] = ""
            if rng.random() < 0.2:
                env["CUDA_PATH"] = rng.choice([*homes, ""])
            path_dirs = []
            if rng.random() < 0.5:
                path_dirs.append(rng.choice(homes + broken[:1]) + "/bin")
            env["PATH"] = ":".join([*path_dirs, "/usr/bin", "/bin"])
            if rng.random() < 0.25:
                env["FLASHINFER_CUDA_ARCH_LIST"] = rng.choice(lists)
            torch_cuda = rng.choice(["13.0", "13.0", "12.8", "12.9", None])
            devices = [] if torch_cuda is None else rng.sample(caps, rng.choice([1, 1, 1, 2, 3]))
            if rng.random() < 0.35 and torch_cuda is not None:
                devices = [(12, 0), *devices[:1]]
            cases.append(
                {"version": version, "env": env, "torch_cuda": torch_cuda, "devices": devices}
            )
    # the reference case and its known neighbours, always present
    ref = str(tree / "cuda-12.8")
    for version in VERSIONS:
        for devices in ([(12, 0)], [(9, 0), (12, 0)], [(12, 0), (9, 0)], [(12, 1)]):
            env = {"CUDA_HOME": ref, "PATH": "/usr/bin:/bin"}
            cases.append({"version": version, "env": env, "torch_cuda": "13.0", "devices": devices})
    return cases


def _replay(case: dict[str, Any], tree: Path) -> Any:
    env = dict(case["env"], HOME=str(tree / "home"))
    candidates = {str(tree / d.name / "bin" / "nvcc") for d in tree.iterdir() if d.is_dir()}
    candidates.add("/usr/local/cuda/bin/nvcc")
    which = shutil.which("nvcc", path=env["PATH"])
    if which:
        candidates.add(which)
    return run(
        ReplayInput(
            version=case["version"],
            env=env,
            which_nvcc=which,
            usr_local_cuda_exists=os.path.exists("/usr/local/cuda"),
            devices=tuple(tuple(d) for d in case["devices"]),
            torch_cuda=case["torch_cuda"],
            nvccs={p: _probe_nvcc(p) for p in candidates},
            python_version=".".join(map(str, sys.version_info[:3])),
            python="oracle",
        )
    )


def _spec(case: dict[str, Any], tree: Path, fi_dir: Path) -> dict[str, Any]:
    return {
        "flashinfer_dir": str(fi_dir),
        "devices": case["devices"],
        "torch_cuda": case["torch_cuda"],
        "probes_dir": str(REPO / "probes"),
        "env": dict(case["env"], HOME=str(tree / "home")),
        "cwd": str(tree / "home"),
    }


def _fresh(spec: dict[str, Any], python: str, harness: Path) -> dict:
    """One case in an interpreter started with the case's environment."""
    proc = subprocess.run(
        [python, str(harness), json.dumps(spec)],
        env=spec["env"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=spec["cwd"],
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _forked(specs: list[dict[str, Any]], python: str, zygote: Path, home: Path) -> list[dict]:
    """The cases in order, each in its own fork of one torch-importing interpreter."""
    proc = subprocess.run(
        [python, str(zygote)],
        input="".join(json.dumps(spec) + "\n" for spec in specs),
        env={"PATH": "/usr/bin:/bin", "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60 + 60 * len(specs),
        cwd=str(home),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(answers) == len(specs), proc.stderr[-3000:]
    for spec, answer in zip(specs, answers, strict=True):
        assert "ok" in answer, f"{json.dumps(spec)}\n{answer['error']}"
    return [answer["ok"] for answer in answers]


def _differences(replayed: Any, real: dict) -> list[str]:
    diffs = []

    def same(name: str, ours: Any, theirs: Any) -> None:
        if ours != theirs:
            diffs.append(f"{name}: replay {ours!r} != flashinfer {theirs!r}")

    same("import_error", replayed.import_error, real["import_error"])
    if real["import_error"] is not None:
        return diffs
    same("cuda_home", replayed.cuda_home, real["cuda_home"])
    same("cuda_version", replayed.jit_cuda, real["cuda_version"])
    same("target_cuda_archs", list(replayed.target_cuda_archs), real["target_cuda_archs"])
    same("check_cuda_arch", replayed.check_cuda_arch, real["check_cuda_arch"])
    same("check_message", replayed.check_message, real["check_message"])
    same("workspace", replayed.workspace, real["workspace"])
    flashinfer_warnings = [w for w in real["warnings"] if w.startswith("Failed to get device")]
    same("warnings", list(replayed.warnings), list(dict.fromkeys(flashinfer_warnings)))
    return diffs


def test_replay_agrees_with_real_flashinfer(
    oracle_python: str, flashinfer_dirs: dict[str, Path], fake_tree: Path
) -> None:
    zygote = fake_tree / "zygote.py"
    zygote.write_text(ZYGOTE)
    cases = _gen_cases(fake_tree)
    specs = [_spec(c, fake_tree, flashinfer_dirs[c["version"]]) for c in cases]
    home = fake_tree / "home"
    with ThreadPoolExecutor(max_workers=2) as pool:  # one zygote per core
        even = pool.submit(_forked, specs[0::2], oracle_python, zygote, home)
        odd = pool.submit(_forked, specs[1::2], oracle_python, zygote, home)
        reals: list[dict] = [{}] * len(cases)
        reals[0::2], reals[1::2] = even.result(), odd.result()
    failures = [
        f"{json.dumps(case)}\n    " + "\n    ".join(d)
        for case, real in zip(cases, reals, strict=True)
        if (d := _differences(_replay(case, fake_tree), real))
    ]
    assert not failures, f"{len(failures)}/{len(cases)} cases disagree:\n" + "\n".join(failures)


def test_a_forked_case_prints_what_a_fresh_interpreter_prints(
    oracle_python: str, flashinfer_dirs: dict[str, Path], fake_tree: Path
) -> None:
    """The fork shortcut hides nothing: FlashInfer decides the same in a fork of the zygote
    as in an interpreter started afresh with the case's environment, for four cases of four
    releases that read the environment differently (a broken ``CUDA_HOME``, nvcc from ``PATH``
    only, ``FLASHINFER_CUDA_ARCH_LIST``, no GPU and no CUDA torch)."""
    harness, zygote = fake_tree / "harness.py", fake_tree / "zygote.py"
    harness.write_text(HARNESS)
    zygote.write_text(ZYGOTE)
    broken = ("cuda-noexec", "cuda-garbage")
    kinds = [
        lambda c: c["env"].get("CUDA_HOME", "").endswith(broken),
        lambda c: "CUDA_HOME" not in c["env"] and c["env"]["PATH"].count(":") > 1,
        lambda c: bool(c["env"].get("FLASHINFER_CUDA_ARCH_LIST")),
        lambda c: not c["devices"],
    ]
    cases, sample = _gen_cases(fake_tree), []
    for kind in kinds:
        used = {c["version"] for c in sample}
        sample.append(next(c for c in cases if kind(c) and c["version"] not in used))
    specs = [_spec(c, fake_tree, flashinfer_dirs[c["version"]]) for c in sample]
    with ThreadPoolExecutor(max_workers=2) as pool:
        fresh = list(pool.map(_fresh, specs, [oracle_python] * len(specs), [harness] * len(specs)))
    forked = _forked(specs, oracle_python, zygote, fake_tree / "home")
    for spec, a, b in zip(specs, fresh, forked, strict=True):
        assert a == b, json.dumps(spec)
