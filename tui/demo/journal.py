"""A fake host's ``usr/bin/journalctl``: prints the tail of a unit's journal kept as a text
file in the tree (``JOURNAL_DIR/<unit>``, written from ``FakeHostSpec.files``), as
``journalctl -u UNIT -n N --no-pager`` prints it; a unit without one has no entries."""

from __future__ import annotations

# one file per unit, as journalctl -o short-iso prints it
JOURNAL_DIR = "/var/log/detective-tui-fake/journal"
JOURNALCTL_SHIM = """#!/bin/sh
# detective-tui fake journalctl: -u UNIT [-n N] [--no-pager] from the journal files beside it.
root=$(cd "${0%/*}/../.." && pwd) || exit 1
unit= n=10
while [ $# -gt 0 ]; do
  case "$1" in
    -u) unit=$2; shift ;;
    -n) n=$2; shift ;;
    -o) shift ;;  # the file is already in journalctl's short-iso format
    --no-pager) ;;
    *) echo "fake journalctl: unsupported argument $1" >&2; exit 1 ;;
  esac
  shift
done
case "$unit" in */* | "") echo "fake journalctl: -u UNIT" >&2; exit 1 ;; esac
f="$root@DIR@/$unit"
if [ -f "$f" ]; then tail -n "$n" "$f"; else echo "-- No entries --"; fi
""".replace("@DIR@", JOURNAL_DIR)


def journal_path(unit: str) -> str:
    """The host path of ``unit``'s journal file (a key for ``FakeHostSpec.files``)."""
    return f"{JOURNAL_DIR}/{unit}"


def sglang_flashinfer_rejected(hostname: str, python: str, pid: int) -> str:
    """SGLang's journal when FlashInfer's sampling JIT rejects the GPU: the traceback's frames
    and message are those of https://github.com/flashinfer-ai/flashinfer/issues/3675 (the
    paths are this host's; the server-args line shows a secret the redaction must mask)."""
    site = f"{python.rsplit('/bin/', 1)[0]}/lib/python3.12/site-packages/flashinfer"
    head = f"2026-12-01T14:01:52+0000 {hostname}"
    proc = f"{head} python3[{pid}]:"
    lines = [
        f"{head} systemd[1]: Started sglang.service - SGLang server.",
        f"{proc} [2026-12-01 14:01:58] server_args=ServerArgs(model_path='/models/Kimi-K2.6', "
        "tp_size=8, port=30000, api_key='sk-demo-secret-value')",
        f"{proc} [2026-12-01 14:02:09 TP0] Load weight end. avail mem=21.40 GB",
        f"{proc} Traceback (most recent call last):",
        f'{proc}   File "{site}/sampling.py", line 1820, in top_k_mask_logits',
        f"{proc}     return get_sampling_module().top_k_mask_logits(",
        f'{proc}   File "{site}/sampling.py", line 68, in get_sampling_module',
        f"{proc}     module = gen_sampling_module().build_and_load()",
        f'{proc}   File "{site}/jit/sampling.py", line 22, in gen_sampling_module',
        f"{proc}     return gen_jit_spec(",
        f'{proc}   File "{site}/jit/core.py", line 413, in gen_jit_spec',
        f"{proc}     check_cuda_arch()",
        f'{proc}   File "{site}/jit/core.py", line 108, in check_cuda_arch',
        f'{proc}     raise RuntimeError("FlashInfer requires GPUs with sm75 or higher")',
        f"{proc} RuntimeError: FlashInfer requires GPUs with sm75 or higher",
        f"{head} systemd[1]: sglang.service: Main process exited, code=exited, status=1/FAILURE",
        f"{head} systemd[1]: sglang.service: Failed with result 'exit-code'.",
    ]
    return "\n".join(lines) + "\n"


def vllm_mig_device_assert(hostname: str, python: str, pid: int) -> str:
    """vLLM's journal on a MIG GPU without a MIG device in CUDA_VISIBLE_DEVICES: the frames and
    message of torch's device query in https://github.com/vllm-project/vllm/issues/6551 (the
    paths are this host's)."""
    site = f"{python.rsplit('/bin/', 1)[0]}/lib/python3.12/site-packages/torch/cuda/__init__.py"
    head = f"2026-12-01T09:12:30+0000 {hostname}"
    proc = f"{head} python3[{pid}]:"
    lines = [
        f"{head} systemd[1]: Started vllm.service - vllm.entrypoints.openai.api_server.",
        f"{proc} Traceback (most recent call last):",
        f'{proc}   File "{site}", line 306, in _lazy_init',
        f"{proc}     queued_call()",
        f'{proc}   File "{site}", line 174, in _check_capability',
        f"{proc}     capability = get_device_capability(d)",
        f'{proc}   File "{site}", line 448, in get_device_properties',
        f"{proc}     return _get_device_properties(device)  # type: ignore[name-defined]",
        f"{proc} RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED",
        f"{head} systemd[1]: vllm.service: Main process exited, code=exited, status=1/FAILURE",
    ]
    return "\n".join(lines) + "\n"


def vllm_system_not_ready(hostname: str, pid: int) -> str:
    """vLLM's journal on an NVSwitch node whose GPUs the fabric manager has not registered:
    torch's warning with the text of haotian-liu/LLaVA#683 ("Error 802: system not yet
    initialized"), then the engine's failure to find a GPU."""
    head = f"2026-12-01T07:40:12+0000 {hostname}"
    proc = f"{head} python3[{pid}]:"
    lines = [
        f"{head} systemd[1]: Started vllm.service - vllm.entrypoints.openai.api_server.",
        f"{proc} UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). "
        "Did you run some cuda functions before calling NumCudaDevices() that might have "
        "already set an error? Error 802: system not yet initialized",
        f"{proc} RuntimeError: Failed to infer device type",
        f"{head} systemd[1]: vllm.service: Main process exited, code=exited, status=1/FAILURE",
    ]
    return "\n".join(lines) + "\n"


def _vllm_failed(hostname: str, pid: int, at: str, middle: list[str]) -> str:
    head = f"{at} {hostname}"
    lines = [
        f"{head} systemd[1]: Started vllm.service - vllm.entrypoints.openai.api_server.",
        *(f"{head} python3[{pid}]: {line}" for line in middle),
        f"{head} systemd[1]: vllm.service: Main process exited, code=exited, status=1/FAILURE",
    ]
    return "\n".join(lines) + "\n"


def vllm_no_gpus_available(hostname: str, pid: int) -> str:
    """vLLM's journal when its unit's CUDA_VISIBLE_DEVICES selects no GPU: torch's message of
    Grace9994/CoMoSVC#6 and KeYang8/WITT#34 ("No CUDA GPUs are available")."""
    return _vllm_failed(
        hostname,
        pid,
        "2026-12-01T08:15:03+0000",
        ["RuntimeError: No CUDA GPUs are available"],
    )


def vllm_stub_library(hostname: str, pid: int) -> str:
    """vLLM's journal when the toolkit's stub libcuda is loaded first: torch's warning in the
    form of haotian-liu/LLaVA#683 with CUDA error 34's text (``CUDA driver is a stub library``,
    NVIDIA/warp#219), then the engine's failure to find a GPU."""
    return _vllm_failed(
        hostname,
        pid,
        "2026-12-01T08:20:41+0000",
        [
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did "
            "you run some cuda functions before calling NumCudaDevices() that might have already "
            "set an error? Error 34: CUDA driver is a stub library",
            "RuntimeError: Failed to infer device type",
        ],
    )


def container_nvml_unknown_error() -> str:
    """A vLLM container's own log file (``> /var/log/vllm.log 2>&1``) after its device cgroup
    lost the GPUs: the entrypoint's ``nvidia-smi`` prints NVIDIA/nvidia-docker#1671's "Failed to
    initialize NVML: Unknown Error", then vLLM finds no platform."""
    return (
        "+ nvidia-smi -L\n"
        "Failed to initialize NVML: Unknown Error\n"
        "RuntimeError: Failed to infer device type\n"
    )
