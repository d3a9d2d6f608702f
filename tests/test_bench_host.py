"""Issue 18, item 5: the benchmark host (``tests/bench_host.py``) really runs what a server runs.
Through the real probe over its loopback sshd: the login shell reads its profile (the
``.bashrc``'s counter line, the venv it activates, the ``CUDA_HOME`` its sourced file sets), the
``nvidia-smi`` stand-in runs (its counter, CT200's eight GPUs) and the serving process is
found — and nothing was refused by the trust rule, on the probe's sh path and on its Python
path. So ``bench/bench_probe.py`` cannot silently measure a host that skips them. The same
host with a group-writable stand-in gets a ``notrun`` and no nvidia-smi run: the rule, not
luck, is what lets it run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from bench_host import CUDA, VENV, BenchHost, bench_host_problem, build_bench_host
from sshd import SSHD, sshd_available

from tui.core.hosts import Host
from tui.core.run.runner import ProbeResult, Session

pytestmark = pytest.mark.skipif(
    (problem := sshd_available() or bench_host_problem()) is not None, reason=str(problem)
)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[BenchHost, SSHD]:
    host = build_bench_host(tmp_path_factory.mktemp("bench-host"), smi_delay_s=0.01)
    server = host.start_sshd(tmp_path_factory.mktemp("bench-sshd"))
    yield host, server
    server.stop()


def probe(server: SSHD, tmp_path: Path, host: BenchHost, path: str = "auto") -> ProbeResult:
    config, known = server.write_client_files(tmp_path / "client")
    target = Host(name="server", ssh="fakehost", python=(host.python,), env={"DT_PROBE_PATH": path})

    async def run() -> ProbeResult:
        async with Session(known_hosts=known, ssh_config=config) as session:
            return await session.probe(target)

    return asyncio.run(run())


@pytest.mark.parametrize("path", ["sh", "py"])  # the two paths bench_probe.py measures
def test_the_probe_runs_the_login_profile_and_nvidia_smi(bench, tmp_path: Path, path: str) -> None:
    host, server = bench
    before = host.runs("login"), host.runs("nvidia-smi")
    result = probe(server, tmp_path, host, path)
    facts = result.facts
    assert result.ok and facts is not None, result.error
    assert facts.probe.complete and facts.probe.not_run == () and facts.probe.errors == ()
    assert host.runs("login") == before[0] + 1  # the .bashrc ran, once
    assert host.runs("nvidia-smi") > before[1]
    # its temp dir is the host's own: this machine's /tmp is never swept from the namespace
    assert any(ln.startswith(f"@@detective-tui-tmpdir {host.tmp}/") for ln in result.raw_lines)
    login = next(c for c in facts.contexts if c.kind == "login")
    assert login.vars["VIRTUAL_ENV"] == f"{host.root}{VENV}"  # activated by the .bashrc
    assert login.vars["CUDA_HOME"] == f"{host.root}{CUDA}"  # from the file it sources
    assert login.vars["PATH"].startswith(f"{host.root}{VENV}/bin:{host.root}{CUDA}/bin:")
    assert facts.driver.state == "ok" and len(facts.gpus) == 8
    assert {g.name for g in facts.gpus} == {"NVIDIA RTX PRO 6000 Blackwell Server Edition"}
    serving = [c for c in facts.contexts if c.kind == "process"]
    assert len(serving) == 1, serving  # its own PID namespace: no other process of the machine
    assert serving[0].vars["CUDA_HOME"] == f"{host.root}{CUDA}"


def test_a_stand_in_others_may_write_is_not_run(bench, tmp_path: Path) -> None:
    host, server = bench
    smi = host.root / "usr/local/nvidia/bin/nvidia-smi"
    smi.chmod(0o775)
    try:
        before = host.runs("nvidia-smi")
        result = probe(server, tmp_path, host)
    finally:
        smi.chmod(0o755)
    facts = result.facts
    assert result.ok and facts is not None, result.error
    assert host.runs("nvidia-smi") == before
    assert facts.driver.state == "not-run" and facts.gpus == ()
    assert any("nvidia-smi" in what for what in facts.probe.not_run), facts.probe.not_run
