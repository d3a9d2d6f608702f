"""Summarise a ``probes/validate_sampling.py`` run for a person: compile time, each kernel's
verdict, the speed against torch, the verdict.

    python bench/gpu_sampling_summary.py RECORDS_FILE

RECORDS_FILE holds the script's stdout (``@@validate`` records; other lines are ignored).
Standard library only (it runs with any Python >= 3.8, beside ``gpu_sampling_check.sh``).
Exit 0 only for ``pass``; 1 for ``partial``, ``fail`` or ``skipped`` (this is a GPU check: a run
that could not validate is not a success); 2 when the run ended without a verdict.
"""

from __future__ import annotations

import json
import sys

SENTINEL = "@@validate"
EXIT = {"pass": 0, "partial": 1, "fail": 1, "skipped": 1}


def records(lines):
    for line in lines:
        parts = line.rstrip("\r\n").split("\t", 2)
        if len(parts) == 3 and parts[0] == SENTINEL:
            try:
                data = json.loads(parts[2])
            except ValueError:
                continue
            if isinstance(data, dict):
                yield parts[1], data


def summary(lines):
    """``(text, exit code)`` for the records in ``lines``."""
    env, toolkit, jit, kernels, speed, end = {}, {}, None, [], [], None
    for kind, data in records(lines):
        if kind in ("start", "env"):
            env.update(data)
        elif kind == "toolkit":
            toolkit.update(data)
        elif kind == "jit":
            jit = data
        elif kind == "kernel":
            kernels.append(data)
        elif kind == "speed":
            speed.append(data)
        elif kind == "end":
            end = data
    out = [
        "FlashInfer {} | torch {} (CUDA {}) | {} (SM {}) | Python {}".format(
            env.get("flashinfer_version"),
            env.get("torch") or env.get("torch_version"),
            env.get("torch_cuda"),
            env.get("device_name", "no GPU"),
            env.get("capability"),
            env.get("python_version"),
        )
    ]
    if toolkit:
        out.append(
            "toolkit FlashInfer resolved: {} (CUDA {}), targets {}".format(
                toolkit.get("cuda_home"),
                toolkit.get("cuda_version"),
                ", ".join(toolkit.get("target_cuda_archs") or []) or "none",
            )
        )
    if jit is not None:
        seconds = jit.get("seconds")
        took = f"{seconds:.1f} s" if isinstance(seconds, (int, float)) else "?"
        if jit.get("ok"):
            cached = (
                " (a sampling.so was already built)" if toolkit.get("sampling_so_cached") else ""
            )
            out.append(f"compile time: {took} to build and load the sampling module{cached}")
        else:
            out.append(f"compile FAILED at {jit.get('stage')} after {took}:")
            out.extend("  " + line for line in str(jit.get("error") or "").splitlines()[-15:])
    if kernels:
        out.append("")
        out.append("{:<48} {:<16} {:<8} {}".format("kernel", "API era", "verdict", "note"))
        for k in kernels:
            note = k.get("message") or ""
            if k.get("invalid"):
                note = (note + f"; {k['invalid']} samples flagged invalid").lstrip("; ")
            out.append(
                "{:<48} {:<16} {:<8} {}".format(
                    k.get("name", "?"), k.get("api_era") or "-", k.get("verdict", "?"), note
                )
            )
    for s in speed:
        if s.get("error"):
            out.append(f"speed {s.get('kernel')}: error {s['error']}")
            continue
        out.append(
            "speed (batch {}, vocab {}): {} {:.4f} ms vs {} {:.4f} ms -> {:.2f}x".format(
                s.get("batch"),
                s.get("vocab"),
                s.get("kernel"),
                s.get("flashinfer_ms") or 0.0,
                s.get("baseline"),
                s.get("torch_ms") or 0.0,
                s.get("ratio") or 0.0,
            )
        )
    out.append("")
    if end is None:
        out.append("verdict: none (the run ended without an end record)")
        return "\n".join(out), 2
    out.append(f"verdict: {end.get('verdict')} - {end.get('reason')}")
    return "\n".join(out), EXIT.get(str(end.get("verdict")), 2)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8", errors="replace") as fh:
        text, code = summary(fh)
    print(text)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
