"""``detective-tui explain``: error texts from public threads, matched against the signature
catalogue and judged on demo hosts shaped like the threads' hosts (the real probe on fake
trees); without a host every cause stays ``possible``; errors that are not version conflicts
are never blamed on versions; an unknown text is not recognised. The text also comes from the
host: a unit's journal (the fake host's journalctl), a log file (locally and over a real
sshd, with a hostile file name) — always redacted."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path

import pytest
from conftest import SSHEnv

from tui.cli import main as cli_main
from tui.core import exitcodes
from tui.core.findings.registry import FINDING_IDS
from tui.core.hosts import Host
from tui.core.judge.explain import NEEDS, explain
from tui.core.rules.symptoms import catalogue, match_text
from tui.core.run.runner import Session
from tui.core.run.service import probe_and_judge_many
from tui.core.run.symptom_source import read_log
from tui.demo.fleet import demo_fleet

# (text as the thread reported it, signature, the cause its maintainers found), each from
# the thread named
THREADS = {
    "pytorch#167244 RTX 5090, torch cu124": (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.",
        "no-kernel-image",
        "torch-lacks-gpu-arch",
    ),
    "flashinfer#3675 5090, CUDA 12.8": (
        '  File ".../flashinfer/jit/core.py", line 108, in check_cuda_arch\n'
        '    raise RuntimeError("FlashInfer requires GPUs with sm75 or higher")\n'
        "RuntimeError: FlashInfer requires GPUs with sm75 or higher",
        "flashinfer-arch-rejected",
        "flashinfer-arch-rejected",
    ),
    "triton#8539 DGX Spark": (
        "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n"
        "`ptxas` stderr:\nptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'",
        "ptxas-unknown-gpu",
        "triton-ptxas-too-old",
    ),
    "nunif#702 CUDA 13 on an old driver": (
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "driver-insufficient",
        "driver-too-old-for-torch",
    ),
    "flash-attention#1832 undefined c10 symbol": (
        "ImportError: /opt/lib/python3.12/site-packages/flash_attn_2_cuda.cpython-312-x86_64-"
        "linux-gnu.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_"
        "stringIcSt11char_traitsIcESaIcEEE",
        "cxx-symbol-missing",
        "extension-torch-abi-mismatch",
    ),
    "intel/llvm#17614 NVML mismatch": (
        "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.144",
        "nvml-version-mismatch",
        "no-nvidia-driver",
    ),
    "vllm#52300 libcudart.so.13": (
        "ImportError: libcudart.so.13: cannot open shared object file: No such file or directory",
        "cuda-library-missing",
        "extension-torch-abi-mismatch",
    ),
    "nvidia-docker#1671 NVML Unknown Error": (
        "root@098b49afe624:/# nvidia-smi\nFailed to initialize NVML: Unknown Error",
        "nvml-unknown-error",
        "container-lost-gpu-access",
    ),
    "pytorch#35710 error 802": (
        "RuntimeError: cuda runtime error (802) : system not yet initialized at "
        "/opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp:50",
        "system-not-ready",
        "fabric-manager-not-running",
    ),
    "numba#9732 stub libcuda": (
        "numba.cuda.cudadrv.driver.CudaAPIError: [34] Call to cuInit results in "
        "CUDA_ERROR_STUB_LIBRARY",
        "stub-library",
        "libcuda-stub-on-library-path",
    ),
    "MiniCPM-V#356 invalid device ordinal": (
        "RuntimeError: CUDA error: invalid device ordinal",
        "invalid-device-ordinal",
        "cuda-visible-devices-selects-no-gpu",
    ),
    "flashinfer#1658 compute_90a": (
        "nvcc fatal   : Unsupported gpu architecture 'compute_90a'",
        "nvcc-unsupported-arch",
        "nvcc-too-old-for-gpu",
    ),
    "pytorch#130181 MIG without a MIG device": (
        "RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED",
        "mig-device-count-assert",
        "mig-device-not-selected",
    ),
    "CoMoSVC#6 CUDA_VISIBLE_DEVICES=1": (
        "RuntimeError: No CUDA GPUs are available",
        "no-cuda-gpus-available",
        "cuda-visible-devices-selects-no-gpu",
    ),
    "PowerInfer#229 error 222": (
        "CUDA error 222 at /home/test/PowerInfer/ggml-cuda.cu:9635: the provided PTX was compiled "
        "with an unsupported toolchain.",
        "ptx-unsupported-toolchain",
        "driver-too-old-for-nvcc",
    ),
}

# not version conflicts: (text from the thread, signature)
NOT_VERSIONS = {
    "sglang#12496 OOM": (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a "
        "total capacity of 23.52 GiB of which 13.00 MiB is free.",
        "cuda-out-of-memory",
    ),
    "vllm#10439 KV cache": (
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine.",
        "kv-cache-too-small",
    ),
    "vllm#10517 max seq len": (
        "The model's max seq len (29000) is larger than the maximum number of tokens that can be "
        "stored in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing "
        "`max_model_len` when initializing the engine.",
        "kv-cache-too-small",
    ),
    "sglang#3784 NCCL": (
        "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168,"
        " NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
        "nccl-timeout",
    ),
    "llm2vec#130 gated": (
        "OSError: You are trying to access a gated repo.\n401 Client Error.\nCannot access gated "
        "repo for url https://huggingface.co/mistralai/Mistral-7B-Instruct-v0.2/resolve/main/"
        "config.json.",
        "gated-model",
    ),
}


def test_catalogue_names_only_contract_findings() -> None:
    sigs = catalogue()
    for sig in sigs:
        for cause in sig.causes:
            assert cause.finding in FINDING_IDS, (sig.id, cause)
            assert all(n in NEEDS or n == "deep" for n in cause.needs), (sig.id, cause)
        assert all(e.startswith("https://github.com/") for e in sig.examples), sig.id
    assert len(sigs) >= 20


@pytest.mark.parametrize(("text", "sig", "cause"), list(THREADS.values()), ids=list(THREADS))
def test_without_a_host_the_maintainers_cause_is_possible(text: str, sig: str, cause: str) -> None:
    result = explain(text, source="test")
    primary = [e for e in result.errors if e.match.primary]
    assert [e.match.signature.id for e in primary] == [sig]
    statuses = {c.finding: c.status for c in primary[0].causes}
    assert statuses[cause] == "possible"
    assert set(statuses.values()) == {"possible"} and result.explained_by == ()


@pytest.mark.parametrize(("text", "sig"), list(NOT_VERSIONS.values()), ids=list(NOT_VERSIONS))
def test_errors_that_are_not_version_conflicts(text: str, sig: str) -> None:
    (err,) = explain(text, source="test").errors
    assert err.match.signature.id == sig and err.match.primary
    assert err.causes == () and err.match.signature.kind == "not-a-version-conflict"
    assert "not a version conflict" in (err.match.signature.advice or "")


def test_the_first_cuda_error_is_primary_not_the_cascade() -> None:
    text = "\n".join(
        [
            "INFO 10-25 13:08:43 loading weights",
            THREADS["nunif#702 CUDA 13 on an old driver"][0],
            NOT_VERSIONS["sglang#3784 NCCL"][0],
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        ]
    )
    matches = match_text(text)
    assert [m.signature.id for m in matches] == [
        "driver-insufficient",
        "nccl-timeout",
        "no-kernel-image",
    ]
    assert [m.primary for m in matches] == [True, False, False]
    # the NCCL timeout after another rank's error is never primary; alone, it is
    (nccl,) = match_text("boot\n" + NOT_VERSIONS["sglang#3784 NCCL"][0])
    assert nccl.primary


def test_a_traceback_names_the_error_line_not_the_raise() -> None:
    (m,) = match_text(THREADS["flashinfer#3675 5090, CUDA 12.8"][0])
    assert m.line == "RuntimeError: FlashInfer requires GPUs with sm75 or higher"


def test_unknown_text_is_not_recognised(capsys: pytest.CaptureFixture[str]) -> None:
    text = "Traceback (most recent call last):\nKeyError: 'model.layers.0.mlp'\n"
    assert explain(text, source="test").recognised is False
    assert main(["explain", "--text", "-", "--json"], stdin=text) == exitcodes.CRITICAL


# (demo host shaped like the thread's host, thread) → the cause is confirmed there
ON_DEMO = {
    "rtx5090-cu124": "pytorch#167244 RTX 5090, torch cu124",
    "ct200": "flashinfer#3675 5090, CUDA 12.8",
    "spark-01": "triton#8539 DGX Spark",
    "b200-old-driver": "nunif#702 CUDA 13 on an old driver",
    "h100-torchvision": "flash-attention#1832 undefined c10 symbol",
    "pro6000-mig": "pytorch#130181 MIG without a MIG device",
}


def _explain_json(capsys: pytest.CaptureFixture[str], argv: list[str], text: str) -> tuple:
    code = main(["--demo", "explain", *argv, "--json"], stdin=text)
    return code, json.loads(capsys.readouterr().out)


def main(argv: list[str], stdin: str | None = None) -> int:
    """The CLI in process, ``stdin`` fed as its standard input."""
    if stdin is None:
        return cli_main(argv)
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        return cli_main(argv)
    finally:
        sys.stdin = saved


def test_threads_on_demo_hosts_shaped_like_theirs() -> None:
    async def judge_all() -> list:
        fleet = {h.name: h for h in demo_fleet()}
        async with Session() as s:
            return await probe_and_judge_many(s, [fleet[name] for name in ON_DEMO])

    for judged in asyncio.run(judge_all()):
        text, _sig, cause = THREADS[ON_DEMO[judged.host.name]]
        result = explain(text, judged, source="test")
        assert result.explained_by[:1] == (cause,), (judged.host.name, result.to_json())
        (primary,) = [e for e in result.errors if e.match.primary]
        assert {c.finding: c.status for c in primary.causes}[cause] == "confirmed"


def test_the_cli_confirms_on_the_host(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _explain_json(capsys, ["ct200", "--text", "-"], THREADS[ON_DEMO["ct200"]][0])
    assert code == exitcodes.OK and data["host"] == "ct200" and data["recognised"] is True
    assert data["explained_by"] == ["flashinfer-arch-rejected"]


def test_a_healthy_host_rules_causes_out(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _explain_json(capsys, ["h100-node", "--text", "-"], THREADS[ON_DEMO["ct200"]][0])
    assert code == exitcodes.CRITICAL and data["explained_by"] == []
    causes = {c["finding"]: c for c in data["errors"][0]["causes"]}
    assert causes["nvcc-too-old-for-gpu"]["status"] == "ruled-out"
    assert causes["flashinfer-arch-rejected"] == {
        "finding": "flashinfer-arch-rejected",
        "status": "ruled-out",
        "why": "FlashInfer's arch resolution, replayed for the installed version and toolkit, "
        "keeps a target for every visible GPU",
    }


def test_non_version_errors_are_never_blamed_on_versions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # ct200 has two version findings: an OOM there is still not blamed on them
    text = "\n".join(t for t, _sig in NOT_VERSIONS.values())
    code, data = _explain_json(capsys, ["ct200", "--text", "-"], text)
    assert code == exitcodes.CRITICAL and data["explained_by"] == []
    assert {e["signature"]: e["causes"] for e in data["errors"]} == {
        sig: [] for _t, sig in NOT_VERSIONS.values()
    }


def test_the_units_journal_on_the_demo_host(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--demo", "explain", "ct200", "--unit", "sglang.service"])
    out = capsys.readouterr().out
    assert code == exitcodes.OK
    assert "primary error [flashinfer-arch-rejected]" in out
    assert "✔ confirmed  flashinfer-arch-rejected" in out
    assert "explained by: flashinfer-arch-rejected" in out


def test_the_matched_line_is_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    text = "RuntimeError: CUDA error: invalid device ordinal (HF_TOKEN=hf_abcdefghijklmnopqrstu)"
    assert main(["explain", "--json"], stdin=text) == exitcodes.CRITICAL
    out = capsys.readouterr().out
    assert "hf_abcdefghijklmnopqrstu" not in out and "HF_TOKEN=***" in out


def test_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["explain", "--unit", "sglang.service"]) == exitcodes.USAGE
    assert "give TARGET" in capsys.readouterr().err
    assert main(["explain", "--text", str(tmp_path / "nope.log")]) == exitcodes.USAGE
    assert "nope.log" in capsys.readouterr().err
    assert main(["--demo", "explain", "h100-node", "--log", "relative.log"]) == exitcodes.USAGE
    assert "absolute path" in capsys.readouterr().err
    assert main(["--demo", "explain", "h100-node", "--log", "/var/log/nope"]) == exitcodes.USAGE
    assert "/var/log/nope: no such readable file" in capsys.readouterr().err
    assert main(["--demo", "explain", "h100-node", "--container", "vllm"]) == exitcodes.USAGE
    assert "not a running system" in capsys.readouterr().err


def test_an_unreachable_host_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    text = THREADS["nunif#702 CUDA 13 on an old driver"][0]
    code, data = _explain_json(capsys, ["gone-dark", "--text", "-"], text)
    assert code == exitcodes.UNREACHABLE and data["host_error"]
    assert {c["status"] for c in data["errors"][0]["causes"]} == {"possible"}


HOSTILE_NAME = "a b $(touch pwned) `id`; 'q'.log"


@pytest.mark.sshd
async def test_a_log_file_over_real_sshd(ssh_env: SSHEnv, tmp_path: Path) -> None:
    log = tmp_path / HOSTILE_NAME
    lines = [f"INFO line {i}" for i in range(400)]
    log.write_text("\n".join([THREADS["vllm#52300 libcudart.so.13"][0], *lines]) + "\n")
    host = Host(name="fake", ssh=ssh_env.alias)
    async with Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config) as s:
        got = await read_log(s, host, "log", str(log))
    assert got.error is None and got.source == f"log {log} on fake"
    assert got.text.splitlines() == lines[-300:]  # the tail only: the error was earlier
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()
    assert explain(got.text, source=got.source).recognised is False
    log.write_text(THREADS["vllm#52300 libcudart.so.13"][0] + "\n")
    async with Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config) as s:
        got = await read_log(s, host, "log", str(log))
    assert [e.match.signature.id for e in explain(got.text, source="x").errors] == [
        "cuda-library-missing"
    ]


def test_a_name_on_two_lines_is_refused() -> None:
    async def go() -> str | None:
        async with Session() as s:
            return (await read_log(s, Host(name="local", local=True), "unit", "a\nb")).error

    assert "one line" in (asyncio.run(go()) or "")
