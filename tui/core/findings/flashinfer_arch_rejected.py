"""FlashInfer's own arch resolution, replayed for the installed version and the toolkit it would
resolve, yields no usable target for a visible GPU — or `import flashinfer` itself fails
(a malformed `FLASHINFER_CUDA_ARCH_LIST`, or `12.0` with nvcc < 12.9 in 0.6.7 – 0.7.0.post1).

- `critical`: the check fails (empty `TARGET_CUDA_ARCHS`) or the import fails.
- `warning`: the check passes but some visible GPU gets no code (GPUs `[9.0, 12.0]` in
  0.6.8 → only `9.0a`).
- `info`: every GPU is below SM 7.5 (FlashInfer does not support it at all — not a version
  problem), or the engine already samples without FlashInfer.

Example — the reference host (8× RTX PRO 6000, only CUDA 12.8 in `CUDA_HOME`, torch cu130,
FlashInfer 0.6.8, `/usr/local/cuda-13.0` also installed):

```
[critical] FlashInfer 0.6.8 has no usable target for NVIDIA RTX PRO 6000 Blackwell Server Edition (SM 12.0)
FlashInfer 0.6.8 resolves its toolkit from CUDA_HOME=/usr/local/cuda-12.8 → nvcc 12.8 → SM 12.0 is
refused in FlashInfer 0.6.8 – 0.7.0.post1 ('SM 12.x requires CUDA >= 12.9') → that GPU and every GPU
enumerated after it is dropped → TARGET_CUDA_ARCHS is empty → the first JIT build (in SGLang/vLLM: the
first top-k/top-p sampling call) raises 'FlashInfer requires GPUs with sm75 or higher'. Upgrading
flashinfer-python to ≥ 0.7.1 alone would also fix this: from that release SM 12.0 builds as 12.0a
with CUDA 12.8 (flashinfer PR #3633). (Judged in the pid 4242 sglang.launch_server environment.)
evidence: FlashInfer 0.6.8 in /root/venv_sglang211/bin/python3 · CUDA_HOME=/usr/local/cuda-12.8 ·
          CUDA version 12.8 (from nvcc) · nvcc 12.8.93 at /usr/local/cuda-12.8/bin/nvcc ·
          GPU0-7 NVIDIA RTX PRO 6000 Blackwell Server Edition SM 12.0 · TARGET_CUDA_ARCHS = []
fixes:    use-installed-toolkit path=/usr/local/cuda-13.0  (resolves this and nvcc-torch-major-mismatch)
          set-flashinfer-arch-list value=12.0a  ·  sampling-backend-fallback engine=sglang
          install-cuda-toolkit-pip version=13.0.2  ·  install-cuda-toolkit-apt  ·  clear-flashinfer-jit-cache
```

The upgrade advice appears only when replaying FlashInfer 0.7.1 on the same facts really
passes (it does not for SM 12.1 with nvcc 12.8); there the fix `upgrade-flashinfer
version=0.7.1` is proposed too (a pip plan: `flashinfer-python`, and `flashinfer-cubin` when
installed, to that release; undo reinstalls the recorded one). The proposed arch list is one the resolved
nvcc can build: `12.0a` with nvcc 12.8, never `12.0f` (that needs 12.9).

**Outside the replay table.** FlashInfer before 0.2 had no JIT: each wheel
(`flashinfer-0.1.6+cu124torch2.4`) carries kernels compiled for the `TORCH_CUDA_ARCH_LIST` of
its release workflow — `8.0 8.9 9.0+PTX` for 0.1.0 – 0.1.5, `7.5 8.0 8.9 9.0+PTX` for 0.1.6
(flashinfer-ai/flashinfer `.github/workflows/release_wheel.yml` at each tag;
`tui/core/tables/flashinfer_pre02.py`). A visible GPU outside that list is
`flashinfer-arch-rejected` (`critical`; `info` below SM 7.5, which FlashInfer never ran on),
saying that no toolkit or environment change helps; the `flashinfer` entry lists the wheel's
arch list as `target_cuda_archs`. In the wild: sgl-project/sglang#1058 — a T4 (SM 7.5) with
`flashinfer-0.1.4+cu121torch2.4`: `CUDA Error: no kernel image is available for execution on
the device (209)`. A release newer than the newest one the replay was checked against
(0.7.2.post1) is `flashinfer-replay-unverified` (`info`), not this id. `import_error` is set only where the real import
raises — an unparsable version is reported as a replay warning, never as an import error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from packaging.version import Version

from tui.core.facts import Facts
from tui.core.findings import Finding, FlashInferReplay, Severity
from tui.core.findings.record import FindingRecord
from tui.core.rules.flashinfer_replay import ReplayTrace, trace
from tui.core.rules.rulekit import cc_text as _cc
from tui.core.rules.rulekit import finding as _finding
from tui.core.rules.rulekit import gpu_evidence as _gpu_evidence
from tui.core.rules.rulekit import gpu_names as _gpu_names
from tui.core.rules.rulekit import toolkit_evidence as _toolkit_evidence
from tui.core.rules.subject import Subject
from tui.core.tables import support_matrix
from tui.core.tables.flashinfer_eras import SM120_CUDA128_FIXED_IN
from tui.core.tables.flashinfer_pre02 import prebuilt_for

ID = "flashinfer-arch-rejected"
SAMPLER_OFF_ENV = ("VLLM_USE_FLASHINFER_SAMPLER", "0")  # vLLM samples without FlashInfer
SAMPLER_OFF = "=".join(SAMPLER_OFF_ENV)
SAMPLER_OFF_FLAGS = ("--sampling-backend pytorch", "--sampling-backend=pytorch")


def sampler_off(subject: Subject) -> bool:
    ctx = subject.context
    if ctx is None:
        return False
    name, value = SAMPLER_OFF_ENV
    words = ctx.words
    given = {" ".join(words[i : i + 2]) for i in range(len(words))} | set(words)
    return ctx.vars.get(name) == value or any(flag in given for flag in SAMPLER_OFF_FLAGS)


def upgrade_resolves(subject: Subject) -> bool:
    """Would FlashInfer ``SM120_CUDA128_FIXED_IN`` accept these GPUs where the installed
    release does not? Checked by replaying that version on the same facts."""
    tr, inp = subject.trace, subject.replay_in
    if tr is None or tr.era is None or inp is None:
        return False
    if Version(tr.era.first) >= Version(SM120_CUDA128_FIXED_IN):
        return False
    newer = trace(replace(inp, version=SM120_CUDA128_FIXED_IN)).replay
    return newer.check_cuda_arch == "pass" and not _uncovered(newer, subject.devices)


def _upgrade_advice(subject: Subject) -> str:
    """'FlashInfer ≥ 0.7.1 would accept this' — only where ``upgrade_resolves``."""
    if upgrade_resolves(subject):
        return (
            f" Upgrading flashinfer-python to ≥ {SM120_CUDA128_FIXED_IN} alone would also fix "
            "this: from that release SM 12.0 builds as 12.0a with CUDA 12.8 (flashinfer PR "
            "#3633)."
        )
    return ""


def _covers(target: str, cc: tuple[int, int]) -> bool:
    """Does a FlashInfer target tuple ("12.0a", "12.0f", "8.9") give code a GPU can run?"""
    major_s, _, minor = target.partition(".")
    digits = "".join(ch for ch in minor if ch.isdigit())
    suffix = minor[len(digits) :]
    if not major_s.isdigit() or not digits or int(major_s) != cc[0]:
        return False
    m = int(digits)
    if suffix == "a":
        return m == cc[1]
    if suffix in ("", "f"):
        return m <= cc[1]
    return False


def _uncovered(replayed: FlashInferReplay, devices: Sequence[tuple[int, int]]) -> tuple:
    return tuple(
        dict.fromkeys(
            cc for cc in devices if not any(_covers(t, cc) for t in replayed.target_cuda_archs)
        )
    )


def rule_flashinfer_arch(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        r, tr = s.replay, s.trace
        if r is None or tr is None or tr.era is None or not s.devices:
            continue  # (no era: prebuilt or unknown releases, rule_flashinfer_prebuilt below)
        if s.python is not None and s.python.torch_version is None and not s.python.torch_cuda:
            continue  # torch unread: which GPUs FlashInfer would see is unknown
        if r.import_error is None and r.check_cuda_arch == "pass" and not _uncovered(r, s.devices):
            continue
        evidence = [f"FlashInfer {r.version} in {s.python.path if s.python else '?'}", tr.origin]
        if r.jit_cuda:
            via = "nvcc" if r.jit_cuda_source == "nvcc" else "torch.version.cuda fallback"
            evidence.append(f"CUDA version {r.jit_cuda} (from {via})")
        evidence.append(_toolkit_evidence(s.jit_toolkit, s.jit_nvcc))
        listed = s.context.vars.get("FLASHINFER_CUDA_ARCH_LIST") if s.context else None
        if listed is not None:
            evidence.append(f"FLASHINFER_CUDA_ARCH_LIST={listed!r}")
        evidence += _gpu_evidence(facts, s.devices)
        evidence.append(f"TARGET_CUDA_ARCHS = {list(r.target_cuda_archs)}")
        chain = _arch_chain(s, r, tr)
        unsupported = [cc for cc in s.devices if not support_matrix.flashinfer_supports_cc(cc)]
        severity: Severity = "critical"
        title = f"FlashInfer {r.version} has no usable target for {_gpu_names(facts, s.devices)}"
        if r.import_error:
            title = f"`import flashinfer` fails ({r.version}): {r.import_error}"
        elif unsupported and len(unsupported) == len(s.devices):
            severity = "info"
            chain += (
                " This is not a version problem: FlashInfer's JIT supports SM 7.5 and newer "
                "only, so no toolkit or FlashInfer version changes it. Serve without FlashInfer "
                "kernels (e.g. --sampling-backend pytorch)."
            )
        elif r.check_cuda_arch == "pass":
            severity = "warning"
            missing = _uncovered(r, s.devices)
            title = f"FlashInfer {r.version} builds nothing for {_gpu_names(facts, missing)}"
        if sampler_off(s) and severity != "info":
            severity = "info"
            chain += (
                " The serving engine here samples without FlashInfer "
                f"({SAMPLER_OFF} or --sampling-backend pytorch), so sampling is "
                "not affected; other FlashInfer "
                "JIT kernels would still fail the same way."
            )
        yield _finding(
            ID,
            severity,
            title,
            chain + _upgrade_advice(s),
            evidence,
            s,
        )


def _arch_chain(s: Subject, r: FlashInferReplay, tr: ReplayTrace) -> str:
    era = tr.era.name if tr.era else r.version
    order_note = ""
    steps = [f"FlashInfer {r.version} resolves its toolkit from {tr.origin}"]
    if r.jit_cuda_source == "nvcc":
        steps.append(f"nvcc {r.jit_cuda}")
    elif r.jit_cuda_source == "torch":
        steps.append(
            f"no usable nvcc at {r.cuda_home}/bin/nvcc, so it takes torch.version.cuda {r.jit_cuda}"
        )
    if r.import_error:
        listed = s.context.vars.get("FLASHINFER_CUDA_ARCH_LIST") if s.context else None
        steps.append(f"FLASHINFER_CUDA_ARCH_LIST={listed!r} is parsed at import")
        steps.append(f"`import flashinfer` itself raises {r.import_error}")
        return " → ".join(steps) + "."
    if tr.drop_error:
        first = tr.dropped[0]
        later = " and every GPU enumerated after it" if len(tr.dropped) > 1 else ""
        if "requires CUDA" in tr.drop_error:
            why = f"SM {_cc(first)} is refused in FlashInfer {era} ('{tr.drop_error}')"
        else:
            why = f"choosing a target for SM {_cc(first)} fails ('{tr.drop_error}')"
        steps.append(f"{why} → that GPU{later} is dropped")
        order = s.context.vars.get("CUDA_DEVICE_ORDER") if s.context else None
        if len(set(s.devices)) > 1 and order != "PCI_BUS_ID":
            order_note = (
                " (Which GPUs come after it depends on CUDA's enumeration order, fastest first "
                "unless CUDA_DEVICE_ORDER=PCI_BUS_ID; nvidia-smi's order was assumed.)"
            )
    if s.replay_in is not None and not s.replay_in.devices and s.python is not None:
        steps.append(
            f"torch {s.python.torch_version} is a CPU build, so torch.cuda.device_count() is 0 "
            "and no GPU is looked at"
        )
    archs = list(r.target_cuda_archs)
    steps.append(f"TARGET_CUDA_ARCHS is {archs if archs else 'empty'}")
    if r.check_cuda_arch == "fail":
        message = (r.check_message or "").removeprefix("RuntimeError: ").rstrip(".")
        steps.append(
            f"the first JIT build (in SGLang/vLLM: the first top-k/top-p sampling call) raises "
            f"'{message}'"
        )
    else:
        missing = _uncovered(r, s.devices)
        steps.append(
            f"kernels are built only for {', '.join(archs)}, so SM "
            f"{', '.join(_cc(c) for c in missing)} gets none ('no kernel image is available')"
        )
    return " → ".join(steps) + "." + order_note


# FlashInfer before 0.2 had no JIT: its wheels carry kernels for a fixed arch list
# (``tui.core.tables.flashinfer_pre02``), so no toolkit or environment change helps
def rule_flashinfer_prebuilt(facts: Facts, subs: Sequence[Subject]) -> Iterable[Finding]:
    for s in subs:
        r, tr = s.replay, s.trace
        if r is None or tr is None:
            continue
        pre = prebuilt_for(r.version)
        if pre is not None and tr.dropped:
            missing = tr.dropped
            unsupported = all(not support_matrix.flashinfer_supports_cc(cc) for cc in missing)
            yield _finding(
                ID,
                "info" if unsupported else "critical",
                f"FlashInfer {r.version} has no kernels for {_gpu_names(facts, missing)}",
                f"FlashInfer {r.version} predates the JIT: its wheel carries kernels compiled for "
                f"{pre.arch_list} only (TORCH_CUDA_ARCH_LIST of its release workflow) → SM "
                f"{', '.join(f'{a}.{b}' for a, b in missing)} is not among them and no PTX "
                "in it can be compiled for that GPU → every FlashInfer kernel fails there with "
                "'no kernel image is available for execution on the device'. "
                + (
                    "This is not a version problem: FlashInfer supports SM 7.5 and newer only; "
                    "serve without FlashInfer kernels."
                    if unsupported
                    else "No toolkit or environment change helps: install a FlashInfer release "
                    "with a JIT (≥ 0.2) or serve without FlashInfer kernels."
                ),
                [
                    f"FlashInfer {r.version} in {s.python.path if s.python else '?'}",
                    f"prebuilt for {pre.arch_list} ({pre.source})",
                    *_gpu_evidence(facts, missing),
                ],
                s,
            )


FINDING = FindingRecord(
    id=ID,
    title="FlashInfer finds no usable target for a visible GPU",
    severities=("critical", "warning", "info"),
    reads=(
        "pythons.flashinfer_version",
        "contexts.vars",
        "contexts.which_nvcc",
        "toolkits.version",
        "gpus.compute_cap",
        "pythons.torch_cuda",
    ),
    rules=(rule_flashinfer_arch,),
    late_rules=(rule_flashinfer_prebuilt,),
    fixes=(
        "use-installed-toolkit",
        "set-flashinfer-arch-list",
        "sampling-backend-fallback",
        "install-cuda-toolkit-pip",
        "install-cuda-toolkit-apt",
        "upgrade-flashinfer",
    ),
    follow_ups=("clear-flashinfer-jit-cache",),
    cause="SM {sm} + nvcc {jit}",
    consequence="FlashInfer drops the GPU",
    implicates=("jit",),
    fires_when=(
        "FlashInfer's own arch resolution, replayed for the installed version and the toolkit it "
        "resolves, leaves a visible GPU without a target"
    ),
    example=(
        "reference host: FlashInfer 0.6.8, `CUDA_HOME=/usr/local/cuda-12.8` → nvcc 12.8 → SM 12.0 "
        "refused (`SM 12.x requires CUDA >= 12.9`) → `TARGET_CUDA_ARCHS` empty → first sampling call "
        "raises *FlashInfer requires GPUs with sm75 or higher*"
    ),
    doc=__doc__ or "",
    examples=("sgl-project/sglang#1058",),
)
