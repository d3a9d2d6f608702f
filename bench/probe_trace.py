"""The strace side of ``bench/bench_probe.py``: which programs one probe starts (successful
execve per program, split into the probe's own, its login profile's and its stand-ins'), and how
long ``nvidia-smi`` ran during it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from probes import probe_script

# strace -ttt lines: "SECONDS.MICROS call(…) = result"; the time is read apart (smi_wait)
_TIME = re.compile(r"^(\d+\.\d+) ")
_FORK = re.compile(r"^(?:\d+\.\d+ )?(?:clone3?|v?fork)\(.*\) += (\d+)$")
_EXEC = re.compile(r'^(?:\d+\.\d+ )?execve\("([^"]*)",.*\) += 0$')
# the probe's login shell: `bash -ilc …` / `sh -lc …` (ctx_login in probes/probe.sh)
_LOGIN = re.compile(
    r'^(?:\d+\.\d+ )?execve\("[^"]*/(?:bash|zsh|sh|dash|ksh)", \["[^"]*", "-i?lc", .*\) += 0$'
)


def execve_counts(logs: dict[str, str], tree_root: Path) -> dict[str, dict[str, int]]:
    """Successful execve per program name in ``strace -ff`` logs (pid → its log), in three
    parts: ``own`` — the probe's (its login shell and the stand-ins themselves included);
    ``login`` — what the login shell's profile files start; ``standins`` — what the fake
    host's stand-ins (programs under ``tree_root``, such as its ``nvidia-smi`` script) start
    in turn, which a real host's binaries do not."""
    parent = {
        child.group(1): pid
        for pid, log in logs.items()
        for child in map(_FORK.match, log.splitlines())
        if child
    }

    def pids_where(test: Callable[[str], bool]) -> set[str]:
        return {pid for pid, log in logs.items() if any(map(test, log.splitlines()))}

    standins = pids_where(
        lambda ln: bool((m := _EXEC.match(ln)) and m.group(1).startswith(f"{tree_root}/"))
    )
    logins = pids_where(lambda ln: bool(_LOGIN.match(ln)))
    counts: dict[str, dict[str, int]] = {"own": {}, "login": {}, "standins": {}}
    for pid, log in logs.items():
        up, part = parent.get(pid), "own"
        while up is not None and part == "own":
            part = "standins" if up in standins else "login" if up in logins else "own"
            up = parent.get(up)
        for run in map(_EXEC.match, log.splitlines()):
            if run:
                name = run.group(1).rsplit("/", 1)[-1]
                counts[part][name] = counts[part].get(name, 0) + 1
    return counts


SMI = "/nvidia-smi"


def smi_wait(logs: dict[str, str]) -> float:
    """How long at least one ``nvidia-smi`` ran during the probe, in seconds: the union of each
    such process's lifetime (its execve to its exit_group, ``strace -ttt``). Calls started together
    wait once; calls one after the other add up."""
    spans = []
    for log in logs.values():
        times = [(m.group(1), ln) for ln in log.splitlines() if (m := _TIME.match(ln))]
        smi = [t for t, ln in times if (e := _EXEC.match(ln)) and e.group(1).endswith(SMI)]
        if smi:
            spans.append((float(smi[0]), float(times[-1][0])))
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        total += max(0.0, end - max(start, reach))
        reach = max(reach, end)
    return total


STRACE = ("strace", "-ff", "-qq", "-ttt", "-e", "trace=execve,clone,clone3,fork,vfork,exit_group",
          "-o")  # fmt: skip


def top(names: dict[str, int]) -> str:
    ranked = sorted(names.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{n} ×{c}" for n, c in ranked[:8]) or "none"


def traced_logs(run: Callable[[Path], object]) -> dict[str, str]:
    """``run(log)`` starts the probe under ``strace -ff -o log``; the logs, pid → text."""
    with tempfile.TemporaryDirectory(prefix="dt-strace-") as tmp:
        os.chmod(tmp, 0o755)
        run(Path(tmp) / "execve")
        return {f.suffix[1:]: f.read_text() for f in Path(tmp).glob("execve.*")}


def process_count(tree_root: Path, env: dict[str, str]) -> str:
    """The processes one probe of the reference tree starts (``strace -ff``, successful
    execve), most frequent first, apart from those its stand-ins start; the target is ≤ 15."""
    if shutil.which("strace") is None:
        return "| processes per probe: skipped, strace is not installed | | | | |"

    def run(log: Path) -> None:
        subprocess.run(
            [*STRACE, str(log), "sh", "-s"], input=probe_script(), text=True,
            capture_output=True, check=False, env={**os.environ, "SHELL": "/bin/sh", **env},
        )  # fmt: skip

    counts = execve_counts(traced_logs(run), tree_root)
    own, theirs = counts["own"], counts["standins"]
    label = (
        f"processes per probe of {tree_root.name} (strace -ff): **{sum(own.values())}** — "
        f"{top(own)}; its stand-ins start {sum(theirs.values())} more ({top(theirs)})"
    )
    return f"| {label} | | | | ≤15 |"
