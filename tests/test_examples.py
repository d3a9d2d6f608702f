"""examples/: the Slurm batch script is valid POSIX sh (no Slurm here to run it; the Ansible
playbook runs for real in tests/test_engines_slow.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_slurm_batch_script_parses_with_sh_and_asks_one_task_per_node() -> None:
    script = EXAMPLES / "slurm" / "probe.sbatch"
    subprocess.run(["sh", "-n", str(script)], check=True, timeout=30)
    text = script.read_text()
    assert "#SBATCH --ntasks-per-node=1" in text and '--output="out/%N"' in text


def test_playbook_is_yaml_with_the_probe_task() -> None:
    (play,) = yaml.safe_load((EXAMPLES / "ansible" / "probe.yml").read_text())
    modules = [next(k for k in t if k.startswith("ansible.builtin.")) for t in play["tasks"]]
    assert modules == ["ansible.builtin.file", "ansible.builtin.script", "ansible.builtin.copy"]
