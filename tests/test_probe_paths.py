"""The probe's two paths give the same records: the sh path (DT_PROBE_PATH=sh: coreutils,
`timeout` per command) and the host helper (auto/py: probes/hosthelper.py answering in-process
and running the programs itself). Both run the real probe on the suite's fake hosts, the demo
fleet's and this machine; the facts are compared field by field and the raw records line by line.
Tool wrappers on PATH log what each path starts: the helper path starts none of them past its
own start-up check."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from awkward_host import awkward_spec
from test_cudnn_sublibs import ld_host
from test_symptoms_container import CID, container_server

from probes import SENTINEL, probe_env, probe_script
from tui.core.facts.build import facts_from_output
from tui.demo import fakehost
from tui.demo.container_logs import NAMES_PATH
from tui.demo.fleet import DEMO_HOSTS

# the helper runs on this machine's own python3 (never a tree's), owned by root
HOST_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3")
pytestmark = pytest.mark.skipif(
    not any(os.path.isfile(p) and os.stat(p).st_uid == 0 for p in HOST_PYTHONS),
    reason="no root-owned python3 in /usr/bin, /usr/local/bin or /bin for the host helper",
)

# the tools the sh path starts per probe that the helper answers for in-process
TOOLS = ("readlink", "ls", "od", "tr", "grep", "head", "wc", "stat", "tail", "cat", "uname",
         "id", "getent", "env", "mktemp", "rm", "timeout", "setsid", "setpriv")  # fmt: skip
# what the helper path may still start: the trust check of the python3 it runs (one ls -ldn
# under timeout: this machine's python3 is a link to the python3.N beside it, which that one
# listing follows)
BOOT = {"ls": 1, "timeout": 1}
# the probe's own shell (sh -s) and its subshells, the helper, and timeout for the sh path
# (a login shell is bash here; a fake host's stand-ins have their own names)
CALLERS = ("sh", "dash", "python3", "timeout")
FAST = ("ct200", "rtxpro-04", "pro6000-mig")


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PATH head of wrappers that log their name (and the caller's) then run the real tool."""
    bin_dir = tmp_path_factory.mktemp("tools")
    for name in TOOLS:
        real = shutil.which(name)
        if real is None:
            continue
        (bin_dir / name).write_text(
            f"#!/bin/sh\nread -r c </proc/$PPID/comm\n"
            f'echo "{name} $c" >>"$DT_TOOL_LOG"\nexec {real} "$@"\n'
        )
        (bin_dir / name).chmod(0o755)
    return bin_dir


def probe(
    fake: fakehost.FakeHost | None, path: str, tools: Path, log: Path, only: str = ""
) -> tuple[str, dict]:
    """The probe's stdout and the tools it started ({name: count}), its own only (not those
    of the fake host's stand-ins, which a real host's binaries do not have)."""
    log.write_text("")
    env = {
        "SHELL": "/bin/sh",
        "LANG": "C",
        "HOME": os.environ.get("HOME", "/root"),
        "PATH": f"{tools}:{os.environ['PATH']}",
        "DT_TOOL_LOG": str(log),
    }
    if fake is None:
        env.update(probe_env(("/usr/bin/python3",), step_timeout_s=20))
    else:
        env.update(fake.env)
        env["PATH"] = f"{tools}:{fake.env.get('PATH', os.environ['PATH'])}"
        env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True, step_timeout_s=20))
    env["DT_PROBE_PATH"] = path
    env["DT_ONLY"] = only
    done = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    started: dict[str, int] = {}
    for line in log.read_text().splitlines():
        name, caller = line.split(" ", 1)
        if caller in CALLERS:
            started[name] = started.get(name, 0) + 1
    return done.stdout, started


def records(out: str) -> list[str]:
    # the end record carries the elapsed time; the rest is deterministic
    return [ln for ln in out.splitlines() if ln.startswith(f"{SENTINEL}\t") and "\tend\t" not in ln]


def assert_same(sh_out: str, py_out: str) -> None:
    sh_facts, py_facts = facts_from_output(sh_out), facts_from_output(py_out)
    for field in dataclasses.fields(sh_facts):
        if field.name == "probe":
            a = dataclasses.replace(sh_facts.probe, duration_s=None)
            b = dataclasses.replace(py_facts.probe, duration_s=None)
        else:
            a, b = getattr(sh_facts, field.name), getattr(py_facts, field.name)
        assert a == b, f"facts.{field.name} differ between the sh and the helper path"
    assert records(sh_out) == records(py_out)


def fake_hosts() -> dict[str, fakehost.FakeHostSpec]:
    hosts = {h.name: h.spec() for h in DEMO_HOSTS if h.spec is not None}
    hosts["awkward"] = awkward_spec()
    named = container_server()  # docker logs of a containerised server, docker ps its name
    hosts["container"] = dataclasses.replace(
        named, files={**named.files, NAMES_PATH: f"{CID} sglang-kimi\n"}
    )
    hosts["kube"] = container_server("crictl")  # crictl logs of a Kubernetes pod's server
    hosts["cudnn-ld"] = ld_host("9.1.0")  # cuDNN 9 sub-libraries on LD_LIBRARY_PATH
    spec = fakehost.reference_ct200()
    hosts["forged"] = dataclasses.replace(
        spec,
        jit_cache_dirs=("/root/.cache/flashinfer/1\n@@DT1\tctx\t42\tprocess\tforged/x",),
        env={**spec.env, "HF_TOKEN": "hf_parity_secret", "CUDA_HOME": "/usr/local/cuda\t@@DT1"},
    )
    return hosts


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, fakehost.FakeHost]:
    base = tmp_path_factory.mktemp("paths")
    return {
        name: fakehost.build_fake_host(base / name, spec) for name, spec in fake_hosts().items()
    }


def check(fake: fakehost.FakeHost | None, tools: Path, tmp_path: Path) -> None:
    sh_out, sh_tools = probe(fake, "sh", tools, tmp_path / "sh.log")
    py_out, py_tools = probe(fake, "py", tools, tmp_path / "py.log")
    assert_same(sh_out, py_out)
    extra = {k: v for k, v in py_tools.items() if v > BOOT.get(k, 0)}
    assert extra == {}, f"the helper path started {extra}"
    # the wrappers see the sh path's tools (so the count above can fail)
    assert sh_tools.get("timeout", 0) + sh_tools.get("readlink", 0) > sum(BOOT.values())


@pytest.mark.parametrize("name", FAST)
def test_same_records_on_the_reference_hosts(
    name: str, built: dict, tools: Path, tmp_path: Path
) -> None:
    check(built[name], tools, tmp_path)


def test_same_records_on_a_host_with_forged_names_and_secrets(
    built: dict, tools: Path, tmp_path: Path
) -> None:
    check(built["forged"], tools, tmp_path)
    out = probe(built["forged"], "py", tools, tmp_path / "f.log")[0]
    assert "hf_parity_secret" not in out
    assert facts_from_output(out).contexts[0].kind == "ssh"


@pytest.mark.parametrize("name", ["ct200", "pro6000-mig"])
def test_gpus_now_goes_through_the_helper(
    name: str, built: dict, tools: Path, tmp_path: Path
) -> None:
    """DT_ONLY=gpus (the TUI's refresh of GPUs now): the same records on both paths, and the
    helper path starts no tool past its start-up check — its id and nvidia-smi's trust check
    answered in-process, the two nvidia-smi calls started by it, together (cap2)."""
    sh_out, sh_tools = probe(built[name], "sh", tools, tmp_path / "sh.log", only="gpus")
    py_out, py_tools = probe(built[name], "py", tools, tmp_path / "py.log", only="gpus")
    assert "\tsmirc\ttable\t0" in py_out and "\tsmirc\tstate\t0" in py_out
    assert records(sh_out) == records(py_out)
    assert {k: v for k, v in py_tools.items() if v > BOOT.get(k, 0)} == {}
    assert sh_tools.get("id") == 1 and sh_tools.get("timeout", 0) > sum(BOOT.values())


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in fake_hosts() if n not in FAST])
def test_same_records_on_every_fake_host(
    name: str, built: dict, tools: Path, tmp_path: Path
) -> None:
    check(built[name], tools, tmp_path)


# records of this machine that do not depend on its processes: kind → first field ("" any)
STABLE = {"host": "", "osr": "", "ulc": "", "ctr": "", "ldconf": "", "libcuda": "", "ldcache": "",
          "smipath": "", "py": "1", "pydist": "1", "pymeta": "1", "pyfile": "1", "pyext": "1",
          "pyrc": "1"}  # fmt: skip
CTX_KINDS = ("ctx", "ctxkv", "env", "which", "ldsrc", "ldlib", "jit")  # of contexts 0 and 1


@pytest.mark.slow  # two probes of this machine with its root's login shell: ~7 s
def test_same_records_on_this_machine(tools: Path, tmp_path: Path) -> None:
    """No root prefix: the login shell, the passwd database, the trust checks and this
    machine's python3 through the helper; other engineers' processes come and go between the
    two runs, so the records of process contexts are left out (inventory interpreter: py 1)."""
    sh_out, _ = probe(None, "sh", tools, tmp_path / "sh.log")
    py_out, py_tools = probe(None, "py", tools, tmp_path / "py.log")

    def stable(out: str) -> list[str]:
        keep = []
        for ln in records(out):
            fields = [*ln.split("\t"), ""]
            if STABLE.get(fields[1], "-") in ("", fields[2]) or (
                fields[1] in CTX_KINDS and fields[2] in ("0", "1")
            ):
                keep.append(ln)
        return keep

    assert stable(sh_out) == stable(py_out)
    assert any("\tctx\t1\tlogin\t" in ln for ln in stable(py_out))
    assert {k: v for k, v in py_tools.items() if v > BOOT.get(k, 0)} == {}


def test_an_unknown_path_is_an_error(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "DT_PROBE_PATH": "perl", **probe_env(())}
    done = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 3
    assert "DT_PROBE_PATH=perl: use auto, py or sh" in done.stdout


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="hiding this machine's python3 takes a mount namespace (root, unshare)",
)
@pytest.mark.parametrize(("path", "code"), [("py", 3), ("auto", 0)])
def test_without_a_python_py_fails_and_auto_takes_the_sh_path(
    built: dict, path: str, code: int
) -> None:
    """This machine's python3 hidden (/dev/null bound over each one) in a mount namespace of
    the probe's own: py stops with an error record, auto runs the sh path."""
    fake = built["ct200"]
    hide = "".join(f"mount --bind /dev/null {p} && " for p in HOST_PYTHONS if os.path.exists(p))
    env = {"SHELL": "/bin/sh", "LANG": "C", "HOME": os.environ.get("HOME", "/root"), **fake.env}
    env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True))
    env["DT_PROBE_PATH"] = path

    def run(argv: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, input=probe_script(), capture_output=True, text=True, env={**env, **extra},
            timeout=120,
        )  # fmt: skip

    done = run(["unshare", "-m", "sh", "-c", f"{hide}exec sh -s"])
    assert done.returncode == code, done.stderr
    errors = facts_from_output(done.stdout).probe.errors
    if path == "py":
        assert any("DT_PROBE_PATH=py: no python3 >= 3.8" in e for e in errors), errors
    else:
        assert facts_from_output(done.stdout).probe.complete and not errors
        assert records(done.stdout) == records(run(["sh", "-s"], DT_PROBE_PATH="sh").stdout)


def test_a_helper_killed_mid_probe_leaves_the_probe_to_the_sh_path(tmp_path: Path) -> None:
    """SIGKILL to the helper while nvidia-smi hangs under it: its guardian ends the hung
    program at once and answers the job waiting on the FIFO, and the probe completes by the
    sh path long before the 30 s step deadline (instead of waiting on the FIFO for ever)."""
    spec = fakehost.reference_ct200()
    spec = dataclasses.replace(spec, driver=dataclasses.replace(spec.driver, hang=True))
    fake = fakehost.build_fake_host(tmp_path / "hung", spec)
    env = {"SHELL": "/bin/sh", "LANG": "C", "HOME": os.environ.get("HOME", "/root"), **fake.env}
    env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True, step_timeout_s=30))
    env["DT_PROBE_PATH"] = "py"
    started = time.monotonic()
    with subprocess.Popen(
        ["sh", "-s"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(probe_script())
        proc.stdin.close()
        helper = hung = None
        while hung is None and time.monotonic() - started < 20:
            for p in Path("/proc").glob("[0-9]*"):
                up = parent(p)  # the stand-in hangs as `exec sleep`, under the helper
                mine = cmdline(Path(f"/proc/{up}"))[-2:] == [str(proc.pid), "30"]
                if cmdline(p) == ["sleep", "100000"] and mine:
                    helper, hung = up, p
        assert helper is not None and hung is not None, "the hung nvidia-smi never started"
        os.kill(helper, signal.SIGKILL)
        out = proc.stdout.read()
        assert proc.wait(30) == 0
    assert time.monotonic() - started < 20
    facts = facts_from_output(out)
    assert facts.probe.complete and facts.host.hostname == "ct200"
    # the steps after it came by the sh path (nvcc ran; the step that was in flight, if any, is
    # lost with the helper)
    toolkit = facts.toolkit_at("/usr/local/cuda-12.8")
    assert toolkit is not None and toolkit.version == "12.8"
    assert not (hung / "stat").exists() or "Z" in (hung / "stat").read_text().split()[2]


def cmdline(proc: Path) -> list[str]:
    try:
        return proc.joinpath("cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def parent(proc: Path) -> int | None:
    try:
        return int(proc.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None
