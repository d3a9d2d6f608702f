"""Validate FlashInfer's sampling kernels on this host, with the host's own Python.

detective-tui sends this file (with ``sampling_stats.py`` and ``sampling_eras.py`` registered as
modules before it) to ``<python> -`` over SSH; it also runs as ``python
probes/validate_sampling.py`` from a checkout. It needs the standard library, torch and
FlashInfer (Python >= 3.8), never raises past ``main()``, and prints only sentinel records on
stdout, one JSON object each::

    @@validate<TAB>KIND<TAB>{...}

KIND is ``start``, ``step`` (progress), ``env`` (torch, GPU), ``toolkit`` (what FlashInfer
resolved), ``jit`` (building/loading the sampling module), ``kernel`` (one validated call),
``speed`` (one timing against torch) and ``end`` (verdict ``pass``, ``partial`` — some kernel
could not be checked, ``fail``, ``skipped`` or ``error`` and a reason). A run killed by its
deadline simply has no ``end`` record. How each FlashInfer release is called is in
``sampling_eras.py``.

Environment: ``DT_VALIDATE_SAMPLES`` (samples per distribution row, default
``sampling_stats.SAMPLES_PER_ROW``), ``DT_VALIDATE_SEED`` (default 0), ``DT_VALIDATE_SPEED``
(``0`` skips the timing).
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import logging
import os
import sys
import time
import traceback
import warnings

import sampling_eras as eras
import sampling_stats as stats

SENTINEL = "@@validate"
SCRIPT_VERSION = "2"
LOG_TAIL = 40
ERROR_TAIL = 60
SPEED_BATCH = 64
SPEED_VOCAB = 128256  # Llama 3's vocabulary
SPEED_REPEATS = 20
MAX_INVALID_SHARE = 1e-3  # samples a kernel may flag invalid (rejection rounds exhausted)


def emit(kind, **data):
    line = json.dumps(data, sort_keys=True, default=str)
    sys.stdout.write(f"{SENTINEL}\t{kind}\t{line}\n")
    sys.stdout.flush()


def tail(text, lines):
    return "\n".join(str(text).rstrip().splitlines()[-lines:])


def describe(exc):
    return f"{type(exc).__name__}: {exc}"


class LogCapture(logging.Handler):
    """Keeps FlashInfer's log records and Python warnings for the report."""

    def __init__(self):
        logging.Handler.__init__(self, level=logging.DEBUG)
        self.records = []
        self.attached = []

    def emit(self, record):
        try:
            message = record.getMessage()
        except Exception as exc:  # a record whose arguments do not format
            message = f"{record.msg} (unformattable: {exc})"
        self.records.append(f"{record.levelname} {record.name}: {message}")

    def attach(self, logger):
        if logger not in self.attached and self not in logger.handlers:
            logger.addHandler(self)
            self.attached.append(logger)

    def attach_module_loggers(self):
        """FlashInfer's JIT logger is built outside the logging tree; find it in the modules."""
        for name, module in list(sys.modules.items()):
            if name.startswith("flashinfer") and module is not None:
                logger = getattr(module, "logger", None)
                if isinstance(logger, logging.Logger):
                    self.attach(logger)

    def add_warnings(self, caught):
        for w in caught:
            self.records.append(f"WARNING {w.category.__name__}: {w.message}")

    def tail(self):
        return self.records[-LOG_TAIL:]


def dist_version(name):
    try:
        from importlib import metadata
    except ImportError:
        return None
    try:
        return metadata.version(name)
    except Exception:
        return None


def torch_reference(torch, probs, filters):
    """The filtered, renormalised distribution of each row, computed in torch (float64)."""
    p = probs.double()
    p = p / p.sum(dim=-1, keepdim=True)
    sorted_p, order = torch.sort(p, dim=-1, descending=True)
    keep = torch.ones_like(sorted_p, dtype=torch.bool)
    k = filters.get("top_k")
    if k is not None and 0 < k < p.shape[-1]:
        keep[:, k:] = False
    top_p = filters.get("top_p")
    if top_p is not None:
        basis = sorted_p * keep
        if filters.get("order", "top_k_first") == "top_k_first":
            basis = basis / basis.sum(dim=-1, keepdim=True)
        else:
            basis = sorted_p
        above = torch.cumsum(basis, dim=-1) - basis
        limit = torch.as_tensor(top_p, dtype=torch.float64, device=p.device).reshape(-1, 1)
        keep &= above < limit
    min_p = filters.get("min_p")
    if min_p is not None:
        cut = torch.as_tensor(min_p, dtype=torch.float64, device=p.device).reshape(-1, 1)
        keep &= sorted_p >= cut * sorted_p[:, :1]
    kept = torch.where(keep, sorted_p, torch.zeros_like(sorted_p))
    kept = kept / kept.sum(dim=-1, keepdim=True)
    return torch.zeros_like(p).scatter(-1, order, kept)


def check_case(torch, case, sample, device, samples_per_row, chunk_elements=1 << 26):
    """Validate one case: draw ``samples_per_row`` samples for each of its rows with
    ``sample(probs, per_row) -> (samples, valid or None)`` and judge them (samples the kernel
    flags invalid are left out of the histograms and counted). Returns the record."""
    rows = stats.case_rows(case)
    probs32 = torch.tensor(rows, dtype=torch.float32)
    exact = [list(map(float, r)) for r in probs32.double().tolist()]
    filters = [stats.row_filters(case, r) for r in exact]
    references = [stats.filtered_distribution(exact[i], **filters[i]) for i in range(len(rows))]
    stacked = {
        key: [f[key] for f in filters] if filters[0].get(key) is not None else None
        for key in ("top_p", "min_p")
    }
    stacked["top_k"] = filters[0].get("top_k")
    stacked["order"] = filters[0].get("order")
    ref_torch = torch_reference(torch, probs32, stacked)
    disagreement = (ref_torch - torch.tensor(references, dtype=torch.float64)).abs().max().item()
    record = {
        "kernel": case.kernel,
        "name": case.name,
        "vocab": case.vocab,
        "params": dict(case.params),
        "samples_per_row": samples_per_row,
        "reference_disagreement": disagreement,
        "rows": [],
    }
    if disagreement > 1e-9:
        record.update(
            verdict="error", message=f"torch and stdlib references disagree by {disagreement:g}"
        )
        return record
    copies = max(1, min(samples_per_row, chunk_elements // (len(rows) * case.vocab)))
    batch = probs32.to(device).repeat(copies, 1)
    per_row = filters * copies
    counts = torch.zeros(len(rows), case.vocab, dtype=torch.int64, device=device)
    drawn = invalid = 0
    while drawn < samples_per_row:
        take = min(copies, samples_per_row - drawn)
        out, valid = sample(batch[: take * len(rows)], per_row[: take * len(rows)])
        ids = out.reshape(take, len(rows)).long()
        weight = torch.ones_like(ids) if valid is None else valid.reshape(take, len(rows)).long()
        invalid += int((weight == 0).sum().item())
        if bool((((ids < 0) | (ids >= case.vocab)) & (weight > 0)).any()):
            record.update(verdict="fail", message="sampled token ids outside the vocabulary")
            return record
        ids = ids.clamp(0, case.vocab - 1)
        counts.scatter_add_(1, ids.t().contiguous(), weight.t().contiguous())
        drawn += take
    verdict = "pass"
    histograms = counts.tolist()
    for i, spec in enumerate(case.rows):
        fit = stats.goodness_of_fit(histograms[i], references[i])
        row = fit.to_dict()
        row.update(row=spec.name, filters={k: v for k, v in filters[i].items() if v is not None})
        record["rows"].append(row)
        if not fit.passed:
            verdict = "fail"
    record["invalid"] = invalid
    if invalid > MAX_INVALID_SHARE * samples_per_row * len(rows):
        verdict = "fail"
    record["verdict"] = verdict
    if verdict == "fail" and all(r["passed"] for r in record["rows"]):
        record["message"] = f"{invalid} samples flagged invalid by the kernel"
    elif verdict == "fail":
        failed = [r for r in record["rows"] if not r["passed"]]
        first = failed[0]
        record["message"] = (
            f"{len(failed)} of {len(record['rows'])} rows failed; "
            f"{first['row']}: {'; '.join(first['reasons'])}"
        )
    return record


# -- timing ---------------------------------------------------------------------------------


def gpu_time_ms(torch, fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(SPEED_REPEATS):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def torch_top_k_top_p(torch, probs, k, p):
    sorted_p, order = torch.sort(probs, dim=-1, descending=True)
    sorted_p[:, k:] = 0
    above = torch.cumsum(sorted_p, dim=-1) - sorted_p
    sorted_p[above >= p] = 0
    picked = torch.multinomial(sorted_p, 1)
    return torch.gather(order, 1, picked)


def run_speed(torch, sampling, device):
    gen = torch.Generator(device=device).manual_seed(1234)
    logits = torch.randn(SPEED_BATCH, SPEED_VOCAB, device=device, generator=gen) * 3.0
    probs = torch.softmax(logits, dim=-1)
    pairs = []
    plain = eras.sampler_for(torch, "sampling_from_probs", sampling.sampling_from_probs, gen)
    if plain is not None:
        rows = [{"order": "top_k_first"}] * SPEED_BATCH
        pairs.append(
            (
                "sampling_from_probs",
                "torch.multinomial",
                lambda: plain(probs, rows),
                lambda: torch.multinomial(probs, 1),
            )
        )
    name = "top_k_top_p_sampling_from_probs"
    joint = eras.sampler_for(torch, name, getattr(sampling, name, None), gen)
    if joint is not None:
        filt = [{"top_k": 50, "top_p": 0.9, "order": "joint"}] * SPEED_BATCH
        pairs.append(
            (
                "top_k_top_p_sampling_from_probs[joint]",
                "torch sort+cumsum+multinomial",
                lambda: joint(probs, filt),
                lambda: torch_top_k_top_p(torch, probs.clone(), 50, 0.9),
            )
        )
    for kernel, baseline, fi_call, torch_call in pairs:
        try:
            fi_ms = gpu_time_ms(torch, fi_call)
            torch_ms = gpu_time_ms(torch, torch_call)
        except Exception as exc:
            emit("speed", kernel=kernel, baseline=baseline, error=describe(exc))
            continue
        emit(
            "speed",
            kernel=kernel,
            baseline=baseline,
            batch=SPEED_BATCH,
            vocab=SPEED_VOCAB,
            flashinfer_ms=fi_ms,
            torch_ms=torch_ms,
            ratio=torch_ms / fi_ms if fi_ms > 0 else None,
        )


# -- the run --------------------------------------------------------------------------------


def report_toolkit(capture):
    """What FlashInfer resolved: toolkit, CUDA version, target archs, JIT workspace."""
    info = {}
    probes = (
        ("cuda_home", "flashinfer.jit.cpp_ext", "get_cuda_path"),
        ("cuda_version", "flashinfer.jit.cpp_ext", "get_cuda_version"),
    )
    for key, module_name, attr in probes:
        try:
            module = importlib.import_module(module_name)
            info[key] = str(getattr(module, attr)())
        except Exception as exc:
            info[key] = None
            info[key + "_error"] = describe(exc)
    try:
        from flashinfer.jit import core

        archs = core.current_compilation_context.TARGET_CUDA_ARCHS
        info["target_cuda_archs"] = sorted(f"{m}.{n}" for m, n in archs)
    except Exception as exc:
        info["target_cuda_archs"] = None
        info["target_cuda_archs_error"] = describe(exc)
    try:
        from flashinfer.jit import env as jit_env

        info["jit_dir"] = str(jit_env.FLASHINFER_JIT_DIR)
        info["sampling_so_cached"] = os.path.exists(
            os.path.join(str(jit_env.FLASHINFER_JIT_DIR), "sampling", "sampling.so")
        )
    except Exception as exc:
        info["jit_dir"] = None
        info["jit_dir_error"] = describe(exc)
    info["jit_cache_package"] = dist_version("flashinfer-jit-cache")
    capture.attach_module_loggers()
    emit("toolkit", **info)


def build_sampling_module(sampling, torch, device):
    """Build or load the sampling module, as the first sampling call of a server would."""
    getter = getattr(sampling, "get_sampling_module", None)
    if getter is not None and not any(
        p.default is inspect.Parameter.empty for p in inspect.signature(getter).parameters.values()
    ):
        return getter()
    probs = torch.full((1, 8), 0.125, device=device)
    gen = torch.Generator(device=device).manual_seed(0)
    name = "sampling_from_probs"
    sampler = eras.sampler_for(torch, name, sampling.sampling_from_probs, gen)
    if sampler is None:
        raise RuntimeError(f"no adapter for {name}{signature(sampling.sampling_from_probs)}")
    return sampler(probs, [{}])


def run(capture, samples_per_row, seed, with_speed):
    emit("step", step="looking for torch and FlashInfer")
    has_torch = importlib.util.find_spec("torch") is not None
    has_flashinfer = importlib.util.find_spec("flashinfer") is not None
    emit(
        "env",
        torch_installed=has_torch,
        flashinfer_installed=has_flashinfer,
        flashinfer_version=dist_version("flashinfer-python") or dist_version("flashinfer"),
        torch_version=dist_version("torch"),
        cuda_home_env=os.environ.get("CUDA_HOME"),
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
    )
    if not has_flashinfer:
        return (
            "skipped",
            f"cannot validate here: FlashInfer is not installed for {sys.executable}",
        )
    if not has_torch:
        return "skipped", f"cannot validate here: torch is not installed for {sys.executable}"
    emit("step", step="importing torch")
    try:
        import torch
    except Exception as exc:
        return "error", f"import torch failed: {describe(exc)}"
    if not hasattr(torch, "cuda") or not hasattr(torch, "__version__"):
        return "error", "{} is not a usable torch (it has no torch.cuda)".format(
            getattr(torch, "__file__", "torch")
        )
    gpu = torch.cuda.is_available() and torch.cuda.device_count() > 0
    device_info = {
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
        "device_count": torch.cuda.device_count(),
    }
    if gpu:
        major, minor = torch.cuda.get_device_capability(0)
        device_info.update(device_name=torch.cuda.get_device_name(0), capability=f"{major}.{minor}")
    emit("env", **device_info)
    emit("step", step="importing flashinfer")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            import flashinfer  # noqa: F401  (the import itself is under test)
            from flashinfer import sampling
        except Exception as exc:
            capture.add_warnings(caught)
            if not gpu:
                return (
                    "skipped",
                    "cannot validate here: no CUDA GPU visible to torch"
                    f" (and import flashinfer failed: {describe(exc)})",
                )
            emit(
                "jit",
                ok=False,
                stage="import",
                error=tail(describe(exc), ERROR_TAIL),
                log_tail=capture.tail(),
            )
            return "fail", f"import flashinfer failed: {describe(exc)}"
        capture.add_warnings(caught)
    report_toolkit(capture)
    if not gpu:
        reason = (
            f"cannot validate here: no CUDA GPU visible to torch {torch.__version__}"
            f" (torch.version.cuda={torch.version.cuda},"
            f" device_count={torch.cuda.device_count()})"
        )
        return "skipped", reason
    device = torch.device("cuda", 0)
    emit("step", step="building the sampling module (JIT)")
    start = time.time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            build_sampling_module(sampling, torch, device)
            torch.cuda.synchronize()
        except Exception as exc:
            capture.add_warnings(caught)
            capture.attach_module_loggers()
            emit(
                "jit",
                ok=False,
                stage="build",
                seconds=time.time() - start,
                error=tail(describe(exc), ERROR_TAIL),
                log_tail=capture.tail(),
            )
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            return "fail", f"the sampling module did not build or load: {first_line}"
        capture.add_warnings(caught)
    capture.attach_module_loggers()
    emit("jit", ok=True, stage="build", seconds=time.time() - start, log_tail=capture.tail())
    gen = torch.Generator(device=device).manual_seed(seed)
    records = validate_kernels(torch, sampling, device, gen, samples_per_row)
    if with_speed:
        emit("step", step="timing against torch")
        run_speed(torch, sampling, device)
    return final_verdict(records)


def signature(fn):
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return repr(fn)


def validate_case(torch, sampling, case, device, gen, samples_per_row):
    """The ``kernel`` record of one case: checked, or skipped with the reason."""
    skipped = {"name": case.name, "kernel": case.kernel, "verdict": "skipped"}
    fn = getattr(sampling, case.kernel, None)
    if fn is None:
        return dict(skipped, message="not in this FlashInfer version")
    sampler = eras.sampler_for(torch, case.kernel, fn, gen)
    if sampler is None:
        message = "no adapter for this signature (not one of the known FlashInfer API eras)"
        return dict(skipped, message=message, signature=signature(fn))
    missing = sampler.missing(case.targets)
    if missing:
        message = "this version's signature has no {}".format(", ".join(missing))
        return dict(skipped, message=message, signature=signature(fn), api_era=sampler.era)
    try:
        record = check_case(torch, case, sampler, device, samples_per_row)
    except Exception as exc:
        record = {
            "name": case.name,
            "kernel": case.kernel,
            "verdict": "fail",
            "message": describe(exc),
            "error": tail(traceback.format_exc(), ERROR_TAIL),
        }
    record.update(signature=signature(fn), api_era=sampler.era)
    return record


def validate_kernels(torch, sampling, device, gen, samples_per_row, cases=stats.CASES):
    """Validate each case (every fixed case by default) with the installed ``sampling``
    module; emits and returns the ``kernel`` records."""
    records = []
    for case in cases:
        emit("step", step=f"validating {case.name}")
        record = validate_case(torch, sampling, case, device, gen, samples_per_row)
        emit("kernel", **record)
        records.append(record)
    return records


def final_verdict(records):
    """``fail`` if any kernel failed, else ``partial`` if any was skipped, else ``pass``."""
    failed = [r["name"] for r in records if r["verdict"] in ("fail", "error")]
    skipped = [r["name"] for r in records if r["verdict"] == "skipped"]
    if failed:
        return "fail", f"{len(failed)} kernel check(s) failed: {', '.join(failed)}"
    if skipped or not records:
        return "partial", (
            f"{len(records) - len(skipped)} of {len(records)} kernel checks passed; "
            f"not checked: {', '.join(skipped)}"
        )
    return "pass", "all sampling kernels match their reference distributions"


def main():
    capture = LogCapture()
    capture.attach(logging.getLogger("flashinfer"))
    emit(
        "start",
        script_version=SCRIPT_VERSION,
        python=sys.executable,
        python_version=sys.version.split()[0],
        pid=os.getpid(),
    )
    try:
        samples = int(os.environ.get("DT_VALIDATE_SAMPLES") or stats.SAMPLES_PER_ROW)
        seed = int(os.environ.get("DT_VALIDATE_SEED") or 0)
        with_speed = os.environ.get("DT_VALIDATE_SPEED", "1") != "0"
        verdict, reason = run(capture, samples, seed, with_speed)
    except BaseException as exc:  # the report must arrive whatever happened
        emit(
            "end",
            verdict="error",
            reason=describe(exc),
            error=tail(traceback.format_exc(), ERROR_TAIL),
        )
        return 0
    emit("end", verdict=verdict, reason=reason, log_tail=capture.tail())
    return 0


if __name__ == "__main__":
    sys.exit(main())
