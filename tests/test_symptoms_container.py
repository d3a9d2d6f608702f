"""Symptoms from containers: a serving process whose cgroup names a docker or podman container
gets that container's log tail (`docker logs --tail N ID`, under the step deadline, only with an
engine binary the trust rule lets run), filtered and masked like the journal tail: source
``container ID12``. The real probe on fake hosts whose ``usr/bin/docker`` (``podman``) stand-in
prints the container's log, locally and over the real sshd; a stalled engine ends by its
deadline."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakehost_runs import diagnose_json, entry, probe_tree

from tui.cli import main
from tui.core import exitcodes
from tui.core.facts.build import facts_from_output
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.records.report import host_json
from tui.core.run.runner import ProbeResult
from tui.demo import fakehost
from tui.demo.container_logs import NAMES_PATH, log_path
from tui.demo.journal import journal_path

CID = "3f9c1e0b7a5d42c8e6f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"
SHORT = CID[:12]


def container_server(engine: str = "docker") -> fakehost.FakeHostSpec:
    """The reference host's SGLang run in a container (``docker run … python3 -m
    sglang.launch_server``): no unit, its cgroup the container's scope, and the container's log
    the journal's lines as the server printed them (without journald's prefix)."""
    spec = fakehost.reference_ct200()
    journal = spec.files[journal_path("sglang.service")]
    printed = [ln.split("]: ", 1)[1] for ln in journal.splitlines() if "python3[" in ln]
    processes = tuple(replace(p, unit=None, container=f"{engine} {CID}") for p in spec.processes)
    files = {k: v for k, v in spec.files.items() if k != journal_path("sglang.service")}
    files[log_path(CID)] = "".join(f"{ln}\n" for ln in printed)
    return replace(spec, processes=processes, files=files)


def _probe(root: Path, step_timeout_s: float = 20) -> tuple[str, dict]:
    out = probe_tree(root, step_timeout_s)
    facts = facts_from_output(out)
    host = Host(name="ct200", local=True, root=str(root), simulate="tree")
    return out, host_json(ProbeResult(host, facts), diagnose(facts, host))


@pytest.mark.parametrize("engine", ["docker", "podman", "crictl"])
def test_the_containers_log_is_its_symptom(tmp_path: Path, engine: str) -> None:
    fake = fakehost.build_fake_host(tmp_path / "h", container_server(engine))
    out, data = _probe(fake.root)
    server = next(c for c in data["facts"]["contexts"] if c["kind"] == "process")
    assert server["container"] == f"{engine} {CID}"
    (symptom,) = data["symptoms"]
    assert symptom["source"] == f"container {SHORT}"
    assert symptom["line"] == "RuntimeError: FlashInfer requires GPUs with sm75 or higher"
    assert symptom["signature"] == "flashinfer-arch-rejected"
    assert symptom["explained_by"] == ["flashinfer-arch-rejected"]
    assert "sk-demo-secret-value" not in out  # masked on the host


@pytest.mark.parametrize(
    ("cgroup", "read"),
    [
        (f"12:memory:/docker/{CID}\n0::/\n", True),  # cgroup v1, the cgroupfs driver
        (f"0::/system.slice/docker-{CID[:-1]}.scope\n", False),  # not a container id
        ("0::/system.slice/docker-../../etc.scope\n", False),
        (f"0::/machine.slice/libpod-conmon-{CID}.scope\n", False),  # podman's monitor
    ],
)
def test_only_a_container_id_is_read(tmp_path: Path, cgroup: str, read: bool) -> None:
    fake = fakehost.build_fake_host(tmp_path / "h", container_server())
    (fake.root / "proc" / "4242" / "cgroup").write_text(cgroup)
    out, data = _probe(fake.root)
    assert ("\tsymptom\tcontainer\t" in out) is read
    assert ("symptoms" in data) is read


POD = "kubepods-burstable-pod0125ec2f_b64a_4868_8f5b_94b56cbab864.slice"


@pytest.mark.parametrize(
    ("cgroup", "read"),
    [  # the shapes of public /proc/PID/cgroup captures (probe.sh cites them)
        (f"0::/kubepods.slice/kubepods-burstable.slice/{POD}/cri-containerd-{CID}.scope\n", True),
        (f"0::/kubepods.slice/{POD}/crio-{CID}.scope\n", True),
        (f"1:name=systemd:/system.slice/containerd.service/{POD}:cri-containerd:{CID}\n", True),
        (f"12:memory:/kubepods/burstable/pod1ff47ee6-9685-4726-ac6f-0ff070c452d6/{CID}\n", True),
        (f"4:pids:/kubepods/pod1ff47ee6-9685-4726-ac6f-0ff070c452d6/{CID}\n", True),
        (f"0::/kubepods/burstable/{CID}\n", False),  # no pod level above it
        (f"0::/system.slice/docker.service/{POD}:cri-containerd:{CID}\n", True),
        (f"0::/kubepods.slice/{POD}/crio-conmon-{CID}.scope\n", False),  # CRI-O's monitor
    ],
)
def test_kubernetes_containers_are_read_with_crictl(
    tmp_path: Path, cgroup: str, read: bool
) -> None:
    fake = fakehost.build_fake_host(tmp_path / "h", container_server("crictl"))
    (fake.root / "proc" / "4242" / "cgroup").write_text(cgroup)
    _out, data = _probe(fake.root)
    server = next(c for c in data["facts"]["contexts"] if c["kind"] == "process")
    assert server.get("container") == (f"crictl {CID}" if read else None)
    assert server.get("unit") is None  # containerd.service is not the server's unit
    assert [s["source"] for s in data.get("symptoms", [])] == (
        [f"container {SHORT}"] if read else []
    )


OTHER = "9" * 64  # another container of the host, not a server's


@pytest.mark.parametrize(
    ("names", "source"),
    [
        (f"{OTHER} redis\n{CID} sglang-kimi\n", f"container sglang-kimi ({SHORT})"),
        (f"{CID} sglang,kimi_tp8\n", f"container sglang,kimi_tp8 ({SHORT})"),
        (f"{CID} $(touch /tmp/x)\n", f"container {SHORT}"),  # not a name: the id
        (f"{OTHER} redis\n", f"container {SHORT}"),  # not listed
        (f"{CID} hf_{'a' * 34}\n", f"container *** ({SHORT})"),  # a token-like name masked
        (None, f"container {SHORT}"),  # ps refused (the daemon's socket): the id
    ],
)
@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_the_source_names_the_container(
    tmp_path: Path, engine: str, names: str | None, source: str
) -> None:
    """One `ps --no-trunc --format '{{.ID}} {{.Names}}'` per engine names the container."""
    spec = container_server(engine)
    if names is not None:
        spec = replace(spec, files={**spec.files, NAMES_PATH: names})
    fake = fakehost.build_fake_host(tmp_path / "h", spec)
    out, data = _probe(fake.root)
    assert [s["source"] for s in data["symptoms"]] == [source]
    assert "touch /tmp/x" not in out and "hf_aaaa" not in json.dumps(data)


def test_a_container_a_unit_started_keeps_its_unit(tmp_path: Path) -> None:
    """podman run under a unit of its own (libpod-ID.scope below sglang.service): the process
    stays that unit's (its fixes are the unit's), and the container's log is read too."""
    fake = fakehost.build_fake_host(tmp_path / "h", container_server("podman"))
    cgroup = f"0::/system.slice/sglang.service/libpod-{CID}.scope\n"
    (fake.root / "proc" / "4242" / "cgroup").write_text(cgroup)
    _out, data = _probe(fake.root)
    server = next(c for c in data["facts"]["contexts"] if c["kind"] == "process")
    assert (server["unit"], server["container"]) == ("sglang.service", f"podman {CID}")
    assert f"container {SHORT}" in [s["source"] for s in data["symptoms"]]


def test_a_stalled_engine_ends_by_its_deadline(tmp_path: Path) -> None:
    """`docker logs` that never answers (blocked opening a FIFO no one writes): the step
    deadline ends it, the probe finishes and says which step timed out."""
    fake = fakehost.build_fake_host(tmp_path / "h", container_server())
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    (fake.root / "usr" / "bin" / "docker").write_text(f"#!/bin/sh\nexec cat {fifo}\n")
    started = time.monotonic()
    _out, data = _probe(fake.root, step_timeout_s=2)
    took = time.monotonic() - started
    assert "docker logs" in data["facts"]["probe"]["timed_out"]
    assert "symptoms" not in data
    assert data["facts"]["probe"]["complete"] is True
    assert took < 30, took


@pytest.mark.sshd
def test_over_real_sshd(ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _code, (host,) = diagnose_json(
        tmp_path, capsys, entry(tmp_path, "ct200", container_server(), ssh=ssh_env.alias)
    )
    assert [(s["source"], s["signature"]) for s in host["symptoms"]] == [
        (f"container {SHORT}", "flashinfer-arch-rejected")
    ]


@pytest.mark.parametrize("engine", ["docker", "crictl"])
def test_explain_reads_the_container_on_a_fake_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    inv = tmp_path / "hosts.yaml"
    spec = container_server(engine)
    inv.write_text(yaml.safe_dump({"hosts": [entry(tmp_path, "ct200", spec)]}))
    code = main(["--hosts", str(inv), "explain", "ct200", "--container", CID, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == exitcodes.OK
    assert data["explained_by"] == ["flashinfer-arch-rejected"]
    assert data["source"] == f"container {CID} on ct200"
