"""Stand-ins for the engines an ``exec:`` template runs (``kubectl``, ``srun``) and what the
``exec`` transport tests share. Each stand-in records its arguments as one JSON line, then runs
the command it was given the way the real one does — as its own argv, no shell in between — in
a new session, so killing the stand-in does not stop it (``kubectl exec`` leaves the command
running in the pod; a Slurm step belongs to ``slurmstepd`` on the node, not to ``srun``)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from conftest import SSHEnv
from sshd import processes_with

from tui.core.facts import Facts
from tui.core.hosts import Host
from tui.core.run.runner import Session
from tui.demo.fakehost import FakeHost

_RECORD = """import json, os, subprocess, sys
with open(os.environ["ENGINE_SHIM_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
"""
_RUN = """status = subprocess.run(command, start_new_session=True).returncode
sys.exit(status if status >= 0 else 128 - status)
"""

# kubectl exec [-i] [-n NS] POD -- COMMAND…; a pod named "missing" is not found
KUBECTL = f"""#!{sys.executable}
{_RECORD}cut = sys.argv.index("--")
if sys.argv[cut - 1] == "missing":
    print('Error from server (NotFound): pods "missing" not found', file=sys.stderr)
    sys.exit(1)
command = sys.argv[cut + 1 :]
{_RUN}"""

# srun [OPTIONS] COMMAND…: options end at the first word that is not one (srun reads them with
# getopt_long "+"); -w/-N/-n/-p/-t/-J and their long forms take a value, in the next word
# unless attached (-N1, --jobid=123). A node named "missing" is refused as srun refuses it.
SRUN = f"""#!{sys.executable}
{_RECORD}TAKES_VALUE = {{"-w", "-N", "-n", "-p", "-t", "-J", "--jobid", "--nodelist", "--nodes",
    "--ntasks", "--partition", "--time", "--job-name"}}
args, nodes = sys.argv[1:], []
while args and args[0].startswith("-"):
    word = args.pop(0)
    if word in TAKES_VALUE:
        value = args.pop(0)
    elif word.startswith("--") and "=" in word:
        word, value = word.split("=", 1)
    elif word[:2] in TAKES_VALUE:
        word, value = word[:2], word[2:]
    else:
        continue
    if word in ("-w", "--nodelist"):
        nodes.append(value)
if "missing" in nodes:
    print("srun: error: Unable to create step for job 123: Invalid node name specified",
          file=sys.stderr)
    sys.exit(1)
command = args
{_RUN}"""


def install_shim(tmp_path: Path, name: str, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path/bin/NAME`` running ``text``; its calls go to ``tmp_path/NAME.log``."""
    shim = tmp_path / "bin" / name
    shim.parent.mkdir(exist_ok=True)
    shim.write_text(text)
    shim.chmod(0o755)
    monkeypatch.setenv("ENGINE_SHIM_LOG", str(tmp_path / f"{name}.log"))
    return shim


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def comparable(facts: Facts | None) -> dict:
    assert facts is not None
    data = facts.to_json()
    data["probe"].pop("duration_s")
    return data


def tree_host(tree: FakeHost, base: Host) -> Host:
    return Host(
        name=base.name,
        exec=base.exec,
        root=str(tree.root),
        simulate="tree",
        env=tree.env,
        python=tree.pythons,
    )


def ssh_client_config(ssh_env: SSHEnv) -> Path:
    """The sshd's client config, strict about its host key and never prompting."""
    config = ssh_env.ssh_config
    config.write_text(
        config.read_text()
        + f"Host *\n  UserKnownHostsFile {ssh_env.known_hosts}\n  StrictHostKeyChecking yes\n"
        "  BatchMode yes\n"
    )
    return config


async def cancel_after_start(s: Session, host: Host, n: str) -> None:
    """Start two ``sleep n`` on the host, cancel once both run (the test then checks that the
    remote group is gone)."""
    task = asyncio.create_task(s.run_script(host, f"sleep {n} & sleep {n}; wait", deadline_s=600))
    loop = asyncio.get_running_loop()
    end = loop.time() + 20
    while len(processes_with("sleep", n)) < 2 and loop.time() < end:
        await asyncio.sleep(0.05)
    assert processes_with("sleep", n), "the remote command never started"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
