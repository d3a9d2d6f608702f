"""nvidia-smi's output is capped inside the probe (issue 19): an nvidia-smi printing megabytes
gives the first SMI_CAP bytes, whole lines only, and a `cut` record with the exact count of the
rest, which the facts carry into `unseen`; the probe's own output stays bounded. The real probe
(sh) on a fake host whose nvidia-smi stand-in prints a table with thousands of process rows."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from probes import probe_env, probe_script
from tui.core.facts.build import facts_from_output
from tui.core.hosts import Host
from tui.core.rules.completeness import unseen
from tui.core.run.runner import ProbeResult
from tui.demo import fakehost

(CAP,) = map(int, re.findall(r"^SMI_CAP=(\d+)$", probe_script(), re.MULTILINE))
ROWS = 12_000  # 91-byte process rows: about 1.1 MB, four times the cap
EMPTY = "|  No running processes found" + " " * 61 + "|\n"


def row(i: int) -> str:
    line = f"|    {i % 8}   N/A  N/A          {100000 + i}      C   python3"
    return line.ljust(79) + f"{i % 1000:>4}MiB |\n"


def run_probe(tmp_path: Path, rows: int) -> tuple[str, str]:
    fake = fakehost.build_fake_host(tmp_path / "root", fakehost.reference_ct200(service=False))
    table = fake.root / "usr/share/detective-tui-fake/nvidia-smi/table.out"
    text = table.read_text()
    assert EMPTY in text
    table.write_text(text.replace(EMPTY, "".join(row(i) for i in range(rows))))
    env = {"SHELL": "/bin/sh", "LANG": "C", "PATH": os.environ["PATH"], **fake.env}
    env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True, step_timeout_s=20))
    proc = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return table.read_text(), proc.stdout


def test_a_megabyte_table_is_cut_at_the_cap_and_unseen_says_how_much(tmp_path: Path) -> None:
    table, out = run_probe(tmp_path, ROWS)
    assert len(table) > 4 * CAP
    kept = [ln.split("\t", 3)[3] for ln in out.splitlines() if ln.startswith("@@DT1\tsmi\ttable\t")]
    kept_bytes = sum(len(line) + 1 for line in kept)
    assert kept == table.splitlines()[: len(kept)]  # whole lines, in order, from the start
    assert CAP - 100 < kept_bytes <= CAP  # the partial last line is dropped with the rest
    (cut,) = re.findall(r"^@@DT1\tcut\t(.*)$", out, re.MULTILINE)
    assert cut == f"nvidia-smi table\t{len(table) - kept_bytes}\t{CAP}"
    assert len(out) < CAP + 64 * 1024  # the probe's output is bounded too

    facts = facts_from_output(out)
    assert facts.driver.state == "ok"  # the header is in the kept part
    assert 0 < len(facts.gpu_processes) < ROWS
    reason = (
        f"nvidia-smi table: {len(table) - kept_bytes} more bytes of output not kept "
        f"(over its {CAP}-byte cap)"
    )
    assert facts.probe.cut == (reason,)
    assert reason in unseen(ProbeResult(Host(name="ct200", local=True), facts))


def test_a_table_under_the_cap_is_whole_and_says_nothing(tmp_path: Path) -> None:
    table, out = run_probe(tmp_path, 40)
    kept = [ln.split("\t", 3)[3] for ln in out.splitlines() if ln.startswith("@@DT1\tsmi\ttable\t")]
    assert kept == [line for line in table.splitlines() if line]
    assert "\tcut\t" not in out
    facts = facts_from_output(out)
    assert len(facts.gpu_processes) == 40 and facts.probe.cut == ()
