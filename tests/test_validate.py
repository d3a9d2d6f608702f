"""``detective-tui validate``: the real validation script, run locally and over a real sshd.

There is no GPU here, so the kernels themselves never run in these tests (the statistics and
the sampling harness are covered by ``test_sampling_stats.py``). What runs here is every path
a host without a GPU, torch or FlashInfer takes — with real interpreters, real torch and the
real FlashInfer wheel when the test cache has them — and the plumbing around it: interpreter
choice, deadlines, unreachable hosts, the transcript, JSON, Markdown and exit codes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SSHEnv
from factsmaker import PY, SERVICE, make_facts
from shared_fixtures import shared_fixture
from torch_venv import validate_venv_python

from tui.cli import main
from tui.core.hosts import Host
from tui.core.records.transcript import Transcript, list_sessions, read_events
from tui.core.run.runner import Session
from tui.core.run.validate import choose_python, context_env, validate_host, validation_script
from tui.core.run.validate_markdown import validation_markdown
from tui.core.run.validate_records import parse_record, result_from_output
from tui.demo import fakehost

REPO = Path(__file__).resolve().parents[1]
PY38 = Path.home() / ".pyenv" / "versions" / "3.8.18" / "bin" / "python3"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_script(python: str, *, env: dict[str, str] | None = None) -> list[str]:
    proc = subprocess.run(
        [python, "-"],
        input=validation_script(),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


# -- the script on its own ---------------------------------------------------------------------


def test_script_without_flashinfer_says_so_in_records_only() -> None:
    lines = run_script(sys.executable)
    assert lines and all(parse_record(line) for line in lines)  # nothing but records on stdout
    result = result_from_output("here", sys.executable, lines)
    assert result.verdict == "skipped" and result.exit_code == 0
    assert (
        result.reason == f"cannot validate here: FlashInfer is not installed for {sys.executable}"
    )
    assert result.environment["flashinfer_installed"] is False


def test_script_runs_from_a_checkout_too() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "probes" / "validate_sampling.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = result_from_output("here", sys.executable, proc.stdout.splitlines())
    assert result.verdict == "skipped" and "FlashInfer is not installed" in result.reason


@pytest.mark.skipif(not PY38.exists(), reason="no Python 3.8 under ~/.pyenv")
def test_script_and_statistics_run_on_python_38() -> None:
    result = result_from_output("here", str(PY38), run_script(str(PY38)))
    assert result.verdict == "skipped" and result.environment["python_version"].startswith("3.8")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import sampling_stats as s\n"
        "c = s.CASES[5]; r = s.case_rows(c)[1]\n"
        "q = s.filtered_distribution(r, **s.row_filters(c, r))\n"
        "print(s.goodness_of_fit([round(x * 100000) for x in q], q).passed)"
    )
    out = subprocess.run(
        [str(PY38), "-c", code, str(REPO / "probes")], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "True"


@pytest.fixture(scope="session")
def flashinfer_python() -> str:
    return validate_venv_python()


@pytest.mark.slow
def test_real_flashinfer_on_cpu_torch_is_no_gpu_skipped(
    flashinfer_python: str, tmp_path: Path
) -> None:
    """The "no GPU" path with the real torch and FlashInfer: FlashInfer imports, reports the
    toolkit it resolved (here a fake CUDA 12.8 nvcc from the shared fixtures), and the run is
    skipped — never a traceback."""
    fake_home = tmp_path / "cuda-12.8"
    nvcc = fake_home / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True, exist_ok=True)
    banner = shared_fixture("nvcc/nvcc-12.8.93.txt").read_text()
    nvcc.write_text(f"#!/bin/sh\ncat <<'EOF'\n{banner}EOF\n")
    nvcc.chmod(0o755)
    workspace = tmp_path / "workspace"
    lines = run_script(
        flashinfer_python,
        env={"CUDA_HOME": str(fake_home), "FLASHINFER_WORKSPACE_BASE": str(workspace)},
    )
    result = result_from_output("here", flashinfer_python, lines)
    assert result.verdict == "skipped", result.reason
    assert result.reason.startswith("cannot validate here: no CUDA GPU visible to torch 2.13.0")
    assert result.environment["flashinfer_version"] == "0.7.2.post1"
    assert result.toolkit["cuda_home"] == str(fake_home)
    assert result.toolkit["cuda_version"] == "12.8"
    assert result.toolkit["target_cuda_archs"] == []
    assert "toolkit FlashInfer resolved" in validation_markdown(result)


# -- validate_host through the runner ------------------------------------------------------------


async def test_validate_host_locally_records_the_result_in_the_transcript() -> None:
    host = Host(name="here", local=True)
    with Transcript.open_session() as transcript:
        async with Session(transcript=transcript) as session:
            progress: list[str] = []
            result = await validate_host(
                session, host, python=sys.executable, on_line=progress.append
            )
    assert result.verdict == "skipped" and result.python == sys.executable
    assert progress[0] == "looking for torch and FlashInfer"
    assert progress[-1].startswith("verdict: skipped")
    events = read_events(list_sessions()[-1])
    (recorded,) = [e for e in events if e.get("kind") == "validation"]
    assert recorded["host"] == "here" and recorded["result"]["verdict"] == "skipped"
    (command,) = [e for e in events if e.get("kind") == "command"]
    # the interpreter reads the script from a here-document inside what sh -s reads (no
    # inventory env on the command line); the transcript names it
    assert command["command"].endswith(" sh -s")
    assert command["interpreter"] == f"{sys.executable} -"


async def test_without_facts_the_host_is_probed_to_choose_the_interpreter() -> None:
    async with Session() as session:
        result = await validate_host(session, Host(name="here", local=True), timing=False)
    assert result.verdict == "skipped" and result.python
    assert "cannot validate here" in result.reason


async def test_a_missing_interpreter_is_an_error_with_its_message() -> None:
    async with Session() as session:
        result = await validate_host(
            session, Host(name="here", local=True), python="/nonexistent/python3"
        )
    assert result.verdict == "error" and result.exit_code == 2
    assert "/nonexistent/python3 did not run (exit status 127)" in result.reason


async def test_the_deadline_stops_a_hung_interpreter(tmp_path: Path) -> None:
    hung = tmp_path / "python3"
    hung.write_text("#!/bin/sh\nsleep 60\n")
    hung.chmod(0o755)
    async with Session() as session:
        result = await validate_host(
            session, Host(name="here", local=True), python=str(hung), deadline_s=1
        )
    assert result.verdict == "error"
    assert result.reason.startswith("the validation hit its deadline")


@pytest.mark.sshd
async def test_over_ssh_a_fake_host_python_without_torch_or_flashinfer_is_skipped(
    ssh_env: SSHEnv, tmp_path: Path
) -> None:
    spec = dataclasses.replace(
        fakehost.healthy_h100(), venvs=(fakehost.VenvSpec(path="/opt/bare-venv"),)
    )
    fake = fakehost.build_fake_host(tmp_path / "tree", spec)
    python = f"{fake.root}/opt/bare-venv/bin/python3"
    host = Host(name="fakehost", ssh=ssh_env.alias, python=(python,))
    async with Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config) as session:
        result = await validate_host(session, host)
    assert result.verdict == "skipped", result.reason
    assert result.reason == f"cannot validate here: FlashInfer is not installed for {python}"
    assert result.environment["torch_installed"] is False


@pytest.mark.sshd
async def test_over_ssh_an_unknown_host_key_is_an_unreachable_error(
    ssh_env: SSHEnv, tmp_path: Path
) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    async with Session(known_hosts=empty, ssh_config=ssh_env.ssh_config) as session:
        result = await validate_host(
            session, Host(name="fakehost", ssh=ssh_env.alias), python="/usr/bin/python3"
        )
    assert result.verdict == "error" and result.reachable is False and result.exit_code == 2
    assert "SHA256:" in result.reason


# -- the CLI -------------------------------------------------------------------------------------


def test_cli_json_for_a_python_without_flashinfer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text(f"hosts:\n  - name: box\n    local: true\n    python: {sys.executable}\n")
    code, out, err = run_cli(capsys, "validate", "box", "--json", "--hosts", str(inv))
    assert code == 0
    data = json.loads(out)
    assert data["host"] == "box" and data["verdict"] == "skipped" and data["exit_code"] == 0
    assert data["python"] == sys.executable and data["kernels"] == []
    assert "box: looking for torch and FlashInfer" in err


def test_cli_demo_fleet_gives_a_clear_verdict_per_host(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--demo", "validate", "ct200")
    assert code == 0  # piped: the Markdown as it is, for a file or another tool
    assert out.startswith("### Sampling kernels on ct200: SKIPPED")
    assert "cannot validate here: ct200 is a filesystem tree inspected under" in out
    code, out, _ = run_cli(capsys, "--demo", "validate", "gone-dark", "--json")
    assert code == 2 and json.loads(out)["reachable"] is False
    # the same path as any host that cannot be reached
    assert json.loads(out)["reason"] == "could not probe the host: no answer (simulated demo host)"
    code, _, err = run_cli(capsys, "--demo", "validate", "nope")
    assert code == 3 and "'nope' is not a demo host" in err


def test_cli_unreachable_exit_2_and_bad_usage_exit_3(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "validate", "root@127.0.0.1:1", "--python", "python3")
    assert code == 2 and "ERROR" in out and "cannot connect" in out
    code, _, err = run_cli(capsys, "validate", "local", "--samples", "0")
    assert code == 3 and "must be positive" in err
    code, _, err = run_cli(capsys, "validate", "gpu1;reboot")
    assert code == 3 and "shell characters" in err


# -- interpreter choice, records and the report ----------------------------------------------


def test_the_serving_process_interpreter_and_its_environment_are_chosen() -> None:
    facts = make_facts(
        service_env={"CUDA_HOME": "/usr/local/cuda-12.8", "HF_TOKEN": "***", "LANG": "C"}
    )
    python, env = choose_python(Host(name="h", python=(PY,)), facts)
    assert python == PY and env is not None and env.context == SERVICE
    assert context_env(facts, env) == {"CUDA_HOME": "/usr/local/cuda-12.8"}
    no_fi = make_facts(flashinfer=None)
    assert choose_python(Host(name="h", python=("/other/python",)), no_fi)[0] == PY
    assert choose_python(Host(name="h", python=("/x/python",)), None) == ("/x/python", None)
    assert choose_python(Host(name="h"), None) == ("python3", None)


JIT_ERROR = "flashinfer/flashinfer-jit-sm75-error-rtx5090-cuda12.8-public.txt"


def record(kind: str, **data: object) -> str:
    return f"@@validate\t{kind}\t{json.dumps(data)}"


def test_a_jit_failure_is_a_failed_validation_with_the_compiler_message() -> None:
    error = shared_fixture(JIT_ERROR).read_text()
    lines = [
        "motd noise before the script",
        record("start", python="/venv/bin/python3", python_version="3.12.3"),
        record("env", torch="2.9.1+cu130", device_name="RTX 5090", capability="12.0"),
        record("toolkit", cuda_home="/usr/local/cuda-12.8", target_cuda_archs=[]),
        record("jit", ok=False, stage="build", seconds=0.4, error=error, log_tail=["WARNING x: y"]),
        record("end", verdict="fail", reason="the sampling module did not build or load: boom"),
    ]  # fmt: skip
    result = result_from_output("rtx", "/venv/bin/python3", lines)
    assert result.verdict == "fail" and result.exit_code == 1
    assert result.jit is not None and not result.jit.ok and result.compile_s == 0.4
    md = validation_markdown(result)
    assert "FAIL" in md and "FAILED at build" in md and error.strip().splitlines()[-1] in md
    assert "- target archs: `none`" in md and "WARNING x: y" in md
    assert result.to_json()["jit"]["error"] == error


def test_a_run_cut_short_keeps_what_arrived() -> None:
    step = "validating top_k_sampling_from_probs"
    lines = [record("start", python="p"), record("step", step=step)]
    result = result_from_output("h", "p", lines, exit_status=None, timed_out=True, duration_s=900)
    assert result.verdict == "error" and result.exit_code == 2
    assert result.reason == f"the validation hit its deadline after 900 s (last step: {step})"


def test_a_partial_run_exits_1_and_says_which_kernel_was_not_checked() -> None:
    reason = "5 of 6 kernel checks passed; not checked: min_p_sampling_from_probs"
    lines = [
        record("start", python="p"),
        record("kernel", name="sampling_from_probs", kernel="sampling_from_probs",
               verdict="pass", api_era="uniform-samples"),
        record("kernel", name="min_p_sampling_from_probs", kernel="min_p_sampling_from_probs",
               verdict="skipped", message="not in this FlashInfer version"),
        record("end", verdict="partial", reason=reason),
    ]  # fmt: skip
    result = result_from_output("h", "p", lines)
    assert result.verdict == "partial" and result.exit_code == 1 and result.reason == reason
    assert result.kernels[0].api_era == "uniform-samples"
    md = validation_markdown(result)
    assert md.startswith("### Sampling kernels on h: PARTIAL")
    assert "- sampling API era: `uniform-samples`" in md
    assert "- `min_p_sampling_from_probs`: not in this FlashInfer version" in md


def test_cli_renders_the_report_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run_cli(capsys, "--demo", "validate", "ct200")
    text = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert code == 0
    assert "Sampling kernels on ct200: SKIPPED" in text and "###" not in text
    assert "cannot validate here: ct200 is a filesystem tree inspected under" in text
