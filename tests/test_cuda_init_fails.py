"""``cuda-init-fails`` (``--deep``): ``probes/deep_cuinit.py`` calls cuInit through ctypes on the
``libcuda.so.1`` the loader finds in the judged environment. No machine here has a GPU, so the
library is a real shared object built for the test (``cc``) that answers cuInit with a chosen
CUresult and names it as the driver does; the real loader, ctypes, script and ``diagnose --deep``
run on a fake H100 unit whose ``LD_LIBRARY_PATH`` leads to it. The code → cause table is data."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakehost_runs import diagnose_json, entry

from tui.core.findings.cuda_init_fails import CUINIT_ERRORS, ID, cuinit_findings
from tui.core.findings.registry import FINDING_IDS
from tui.core.hosts import Host
from tui.core.judge.diagnosis import Diagnosis, diagnose, with_findings
from tui.core.judge.explain import explain
from tui.core.judge.judged import Judged
from tui.core.run.deep import CUINIT_SENTINEL, cuinit_runs, deep_script, parse_deep
from tui.core.run.runner import ProbeResult
from tui.demo import fakehost
from tui.demo.neighbours import stub_on_library_path

REPO = Path(__file__).resolve().parents[1]
NAMES = {0: "CUDA_SUCCESS", 802: "CUDA_ERROR_SYSTEM_NOT_READY", 999: "CUDA_ERROR_UNKNOWN"}
FAKE_LIBCUDA = """
int cuInit(unsigned int flags) { (void)flags; return CODE; }
int cuDriverGetVersion(int *v) { *v = 12080; return 0; }
int cuDeviceGetCount(int *n) { *n = COUNT; return 0; }
int cuGetErrorName(int e, const char **s) { (void)e; *s = "NAME"; return 0; }
"""


def _libcuda(tmp_path: Path, code: int, count: int = 4) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the test's libcuda.so.1")
    d = tmp_path / f"driver-{code}-{count}"
    d.mkdir()
    src = d / "fake.c"
    src.write_text(
        FAKE_LIBCUDA.replace("CODE", str(code))
        .replace("COUNT", str(count))
        .replace("NAME", NAMES[code])
    )
    subprocess.run(
        [cc, "-shared", "-fPIC", "-o", str(d / "libcuda.so.1"), str(src)], check=True, timeout=60
    )
    return d


def _run_script(env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-"],
        input=deep_script("deep_cuinit.py"),
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    parsed = parse_deep(done.stdout, CUINIT_SENTINEL)
    assert parsed is not None, done.stderr
    return parsed


def test_the_script_reads_the_loaded_library(tmp_path: Path) -> None:
    bad = _libcuda(tmp_path, 999)
    got = _run_script({"LD_LIBRARY_PATH": str(bad)})
    assert got["cuinit"] == 999 and got["error_name"] == "CUDA_ERROR_UNKNOWN"
    assert got["library"] == str(bad / "libcuda.so.1")  # from /proc/self/maps
    assert got["driver_version"] == 12080 and got["device_count"] is None
    good = _run_script({"LD_LIBRARY_PATH": str(_libcuda(tmp_path, 0))})
    assert good["cuinit"] == 0 and good["device_count"] == 4 and good["error_name"] is None


def test_the_script_is_python38_stdlib() -> None:
    source = (REPO / "probes" / "deep_cuinit.py").read_text()
    ast.parse(source, feature_version=(3, 8))
    imports = {ln.split()[1] for ln in source.splitlines() if ln.startswith("import ")}
    assert imports <= {"ctypes", "json", "sys"}


def test_the_table() -> None:
    # CUDA's initialisation errors of the issue, each with its named finding registered
    assert {34, 100, 101, 802, 803, 804, 999} <= set(CUINIT_ERRORS)
    for row in CUINIT_ERRORS.values():
        assert row.name.startswith("CUDA_ERROR_") and row.meaning and row.cause
        assert set(row.findings) <= set(FINDING_IDS)


def test_findings_from_results() -> None:
    base = {"python": "/opt/venv/bin/python3", "library": "/usr/lib/libcuda.so.1"}
    results = [
        ("unit vllm.service", {**base, "cuinit": 802, "error_name": "CUDA_ERROR_SYSTEM_NOT_READY"}),
        ("SSH session", {**base, "cuinit": 0, "device_count": 0}),
        ("login", {**base, "cuinit": 12345, "error_name": None}),
        ("t", {"error": "exit status 1"}),  # the run itself failed: no finding
        ("u", {"python": "/usr/bin/python3", "load_error": "libcuda.so.1: cannot open shared"}),
    ]
    got = cuinit_findings(results, fired=["fabric-manager-not-running"])
    assert [(f.severity, f.title) for f in got] == [
        (
            "critical",
            "CUDA fails to initialise: cuInit returned 802 (CUDA_ERROR_SYSTEM_NOT_READY)",
        ),
        ("warning", "CUDA initialises but sees no device"),
        (
            "critical",
            "CUDA fails to initialise: cuInit returned 12345 (an error the table does not list)",
        ),
        ("critical", "CUDA fails to initialise: libcuda.so.1 cannot be loaded"),
    ]
    assert "explained by fabric-manager-not-running" in got[0].explanation
    assert "(judged in the unit vllm.service environment)" in got[0].explanation
    alone = cuinit_findings(results[:1], fired=[])
    assert "Usual cause: on an NVSwitch system the fabric manager" in alone[0].explanation


def _diagnose_deep(tmp_path: Path, capsys: pytest.CaptureFixture[str], lib: Path) -> dict:
    spec = stub_on_library_path(str(lib))
    _code, (host,) = diagnose_json(
        tmp_path / lib.name, capsys, entry(tmp_path / lib.name, "h100", spec), args=("--deep",)
    )
    return host


@pytest.mark.slow  # two diagnose --deep runs with the deep FlashInfer check (~16 s here)
def test_diagnose_deep_on_a_fake_unit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = _diagnose_deep(tmp_path, capsys, _libcuda(tmp_path, 999))
    found = [f for f in host["findings"] if f["id"] == ID]
    assert [f["title"] for f in found] == [
        "CUDA fails to initialise: cuInit returned 999 (CUDA_ERROR_UNKNOWN)"
    ]
    assert (
        "(judged in the pid 5151 vllm.entrypoints.openai.api_server environment)"
        in (found[0]["explanation"])
    )
    assert any(e.startswith("library: ") and "driver-999" in e for e in found[0]["evidence"])
    good = _diagnose_deep(tmp_path, capsys, _libcuda(tmp_path, 0))
    assert ID not in {f["id"] for f in good["findings"]}


def test_runs_once_per_interpreter_and_environment(tmp_path: Path) -> None:
    from probes import probe_env, probe_script
    from tui.core.facts.build import facts_from_output

    fake = fakehost.build_fake_host(tmp_path / "h", stub_on_library_path("/opt/driver"))
    env = {**fake.env, **probe_env(fake.pythons, root=str(fake.root), tree_exec=True)}
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), env=env, capture_output=True, text=True, timeout=60
    ).stdout
    facts = facts_from_output(out)
    runs = cuinit_runs(facts)
    # the venv's interpreter once per environment: the SSH session's and the server's (its
    # process and unit share one: the first label is kept)
    assert [(label, env) for label, path, env in runs if path == "/opt/venv/bin/python3"] == [
        ("ssh session", {}),
        ("pid 5151 vllm.entrypoints.openai.api_server", {"LD_LIBRARY_PATH": "/opt/driver"}),
    ]
    # explain: the unknown-error text is confirmed by the deep run's finding, ruled out by a
    # deep run that initialised, and possible without one
    host = Host(name="h", local=True, root=str(fake.root), simulate="tree")
    plain = diagnose(facts, host)
    failed = (("unit vllm.service", {"cuinit": 999, "error_name": "CUDA_ERROR_UNKNOWN"}),)
    worked = (("unit vllm.service", {"cuinit": 0, "device_count": 4}),)
    text = "RuntimeError: CUDA error: unknown error"

    def status(diagnosis: Diagnosis, cuinit: tuple) -> str:
        judged = Judged(ProbeResult(host, facts), diagnosis, cuinit=cuinit)
        causes = explain(text, judged, source="t").errors[0].causes
        return {c.finding: c.status for c in causes}[ID]

    assert status(with_findings(plain, cuinit_findings(failed, [])), failed) == "confirmed"
    assert status(plain, worked) == "ruled-out"
    assert status(plain, ()) == "possible"
