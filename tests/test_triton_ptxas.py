# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""triton-ptxas-too-old and use-toolkit-ptxas-for-triton: the release table, the rule on facts
(fires / near misses), the what-if, the exact plan, and the real probe on fake hosts (local and
over a real sshd)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from factsmaker import PY, SERVICE, make_facts
from plan_golden import shown

from probes import probe_env, probe_script
from tui.cli import main
from tui.core import exitcodes
from tui.core.facts import Facts, PtxasBinary
from tui.core.facts.build import facts_from_output
from tui.core.fixes import FixError, build_plan
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.judge.whatif import apply_fix
from tui.core.rules.evaluate import evaluate
from tui.core.tables.triton_ptxas import release_for
from tui.demo import fakehost

C128 = ("/usr/local/cuda-12.8", "12.8")
C129 = ("/usr/local/cuda-12.9", "12.9")
C130 = ("/usr/local/cuda-13.0", "13.0")
ID = "triton-ptxas-too-old"
FIX = "use-toolkit-ptxas-for-triton"
BIN = "/venv/lib/python3.12/site-packages/triton/backends/nvidia/bin"


def facts(
    gpus: tuple[str, ...],
    triton: str,
    *,
    toolkits: tuple[tuple[str, str], ...] = (C130,),
    env: dict[str, str] | None = None,
    service_env: dict[str, str] | None = None,
    packages: dict[str, str] | None = None,
    ptxas: tuple[PtxasBinary, ...] = (),
    bin_dir: str | None = None,
    driver: str = "580.95.05",
) -> Facts:
    f = make_facts(
        gpus=gpus,
        driver=driver,
        toolkits=toolkits,
        flashinfer=None,
        torch_cuda="13.0",
        packages={"triton": triton, "vllm": "0.11.0", **(packages or {})},
        env=env if env is not None else {"CUDA_HOME": toolkits[0][0]},
        service_env=service_env,
    )
    tks = tuple(dataclasses.replace(t, ptxas=f"{t.home}/bin/ptxas") for t in f.toolkits)
    pys = tuple(dataclasses.replace(p, triton_bin_dir=bin_dir) for p in f.pythons)
    return dataclasses.replace(f, toolkits=tks, pythons=pys, ptxas=ptxas)


def ids(f: Facts) -> dict[str, str]:
    return {x.id: x.severity for x in evaluate(f)[0]}


# --- the table ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "first", "newer"),
    [
        ("3.5.1", "3.5.0", False),
        ("3.3.1", "3.3.0", False),
        ("3.1.0", "3.0.0", False),
        ("3.5.0+git7416ffcb", "3.5.0", False),  # pytorch-triton of the nightly builds
        ("3.10.0", "3.9.0", True),
        ("2.3.1", None, False),
        ("not a version", None, False),
    ],
)
def test_release_lookup(version: str, first: str | None, newer: bool) -> None:
    match = release_for(version)
    assert (match.release.first if match else None) == first
    assert (match.newer_than_known if match else False) is newer


@pytest.mark.parametrize(
    ("version", "sm", "binary", "var", "target"),
    [
        ("3.2.0", 120, "ptxas", "TRITON_PTXAS_PATH", "120"),  # sm_90a was the only "a"
        ("3.2.0", 90, "ptxas", "TRITON_PTXAS_PATH", "90a"),
        ("3.3.1", 100, "ptxas-blackwell", "TRITON_PTXAS-BLACKWELL_PATH", "100a"),
        ("3.5.1", 121, "ptxas", "TRITON_PTXAS_PATH", "121a"),
        ("3.6.0", 90, "ptxas", "TRITON_PTXAS_PATH", "90a"),
        ("3.6.0", 121, "ptxas-blackwell", "TRITON_PTXAS_BLACKWELL_PATH", "121a"),
        ("3.9.0", 90, "ptxas-blackwell", "TRITON_PTXAS_BLACKWELL_PATH", "90a"),
        ("3.9.0", 80, "ptxas", "TRITON_PTXAS_PATH", "80"),
    ],
)
def test_binary_variable_and_target(
    version: str, sm: int, binary: str, var: str, target: str
) -> None:
    match = release_for(version)
    assert match is not None
    rel = match.release
    assert rel.binary_for(sm) == binary
    assert rel.override_var(binary) == var
    assert rel.target(sm) == target


@pytest.mark.parametrize(
    ("version", "cuda", "ok"),
    [
        ("3.2.0", "12.6", True),
        ("3.2.0", "12.8", False),  # ptx_get_version has no 12.7+ in 3.2
        ("3.4.0", "12.9", True),
        ("3.4.0", "13.0", False),
        ("3.5.1", "13.0", True),
        ("3.9.0", "9.2", False),
    ],
)
def test_which_ptxas_releases_a_triton_accepts(version: str, cuda: str, ok: bool) -> None:
    match = release_for(version)
    assert match is not None
    assert match.release.accepts_ptxas(cuda) is ok


# --- the rule -----------------------------------------------------------------------------

ROWS = {
    "GB10, triton 3.5.1 (bundled ptxas 12.8)": (facts(("12.1",), "3.5.1"), {ID: "critical"}),
    "GB10, triton 3.6.0 (ptxas-blackwell 12.9)": (facts(("12.1",), "3.6.0"), {}),
    "GB10, triton 3.5.1, TRITON_PTXAS_PATH → CUDA 13.0": (
        facts(
            ("12.1",),
            "3.5.1",
            env={"CUDA_HOME": C130[0], "TRITON_PTXAS_PATH": f"{C130[0]}/bin/ptxas"},
        ),
        {},
    ),
    "GB10, triton 3.5.1, override to a missing file (Triton falls back)": (
        facts(
            ("12.1",),
            "3.5.1",
            env={"CUDA_HOME": C130[0], "TRITON_PTXAS_PATH": "/opt/none/ptxas"},
            ptxas=(PtxasBinary(path="/opt/none/ptxas", exists=False),),
        ),
        {ID: "critical"},
    ),
    "GB10, triton 3.4.0, override to a CUDA 13.0 ptxas (3.4 rejects CUDA 13)": (
        facts(
            ("12.1",),
            "3.4.0",
            env={"CUDA_HOME": C130[0], "TRITON_PTXAS_PATH": f"{C130[0]}/bin/ptxas"},
        ),
        {ID: "critical"},
    ),
    "RTX PRO 6000 (SM 12.0), triton 3.5.1: 12.8 knows sm_120a": (facts(("12.0",), "3.5.1"), {}),
    "H100, triton 3.2.0": (facts(("9.0",), "3.2.0"), {}),
    "B300 (SM 10.3), triton 3.3.1 (ptxas-blackwell 12.8)": (
        facts(("10.3",), "3.3.1"),
        {ID: "critical"},
    ),
    "B300 (SM 10.3), triton 3.6.0 (ptxas-blackwell 12.9)": (facts(("10.3",), "3.6.0"), {}),
    "GB10, triton 3.5.1 without vLLM or SGLang": (
        dataclasses.replace(
            facts(("12.1",), "3.5.1"),
            pythons=tuple(
                dataclasses.replace(p, packages={"triton": "3.5.1"})
                for p in facts(("12.1",), "3.5.1").pythons
            ),
        ),
        {ID: "warning"},
    ),
    "no Triton": (
        dataclasses.replace(
            facts(("12.1",), "3.5.1"),
            pythons=tuple(
                dataclasses.replace(p, packages={}) for p in facts(("12.1",), "3.5.1").pythons
            ),
        ),
        {},
    ),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_rule_rows(name: str) -> None:
    f, expected = ROWS[name]
    assert {k: v for k, v in ids(f).items() if k == ID} == expected


def test_the_probed_ptxas_beats_the_table() -> None:
    """A bundled ptxas the probe ran is judged by what it printed, not by the wheel table."""
    ran = PtxasBinary(
        path=f"{BIN}/ptxas", version="12.9", full_version="12.9.86", version_source="run"
    )
    assert ids(facts(("12.1",), "3.5.1", bin_dir=BIN, ptxas=(ran,))) == {}
    read = dataclasses.replace(ran, version="12.8", full_version="12.8.93", version_source="file")
    (finding,) = evaluate(facts(("12.1",), "3.5.1", bin_dir=BIN, ptxas=(read,)))[0]
    assert f"{BIN}/ptxas: CUDA 12.8.93 (read from the binary)" in finding.evidence


def test_the_chain_names_the_binary_the_target_and_the_way_out() -> None:
    (finding,) = evaluate(facts(("12.1",), "3.5.1"))[0]
    assert finding.title == "Triton 3.5.1's ptxas 12.8 cannot build for NVIDIA GB10 (SM 12.1)"
    text = finding.explanation
    assert "--gpu-name=sm_121a" in text and "TRITON_PTXAS_PATH is not set" in text
    assert "ptxas 12.8 does not know sm_121a (first in CUDA 12.9)" in text
    assert "Value 'sm_121a' is not defined for option 'gpu-name'" in text
    assert "upgrade Triton to ≥ 3.6.0" in text
    assert "TRITON_PTXAS_PATH not set" in finding.evidence
    assert "target sm_121a" in finding.evidence


def test_a_serving_process_is_judged_in_its_own_environment() -> None:
    """The shell has the override, the server does not: the server's Triton fails."""
    f = facts(
        ("12.1",),
        "3.5.1",
        env={"CUDA_HOME": C130[0], "TRITON_PTXAS_PATH": f"{C130[0]}/bin/ptxas"},
        service_env={"CUDA_HOME": C130[0]},
    )
    (finding,) = evaluate(f)[0]
    assert finding.id == ID and SERVICE in finding.explanation


# --- the what-if ---------------------------------------------------------------------------


def test_the_fix_sets_the_variable_and_resolves_the_finding() -> None:
    f = facts(("12.1",), "3.5.1", toolkits=(C130, C128), service_env={"CUDA_HOME": C130[0]})
    (finding,) = diagnose(f).findings
    (fix,) = finding.fixes
    assert fix.id == FIX and dict(fix.params) == {"path": "/usr/local/cuda-13.0/bin/ptxas"}
    assert fix.resolves == (ID,)
    fixed = apply_fix(f, FIX, fix.params, PY)
    assert {c.vars.get("TRITON_PTXAS_PATH") for c in fixed.contexts} == {
        "/usr/local/cuda-13.0/bin/ptxas"
    }
    assert ID not in ids(fixed)


def test_the_blackwell_variable_is_set_for_the_gpus_that_use_it() -> None:
    f = facts(("9.0", "11.0"), "3.6.0", toolkits=(C130,))
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    (fix,) = finding.fixes
    fixed = apply_fix(f, FIX, fix.params, PY)
    assert fixed.contexts[0].vars["TRITON_PTXAS_BLACKWELL_PATH"] == "/usr/local/cuda-13.0/bin/ptxas"
    assert "TRITON_PTXAS_PATH" not in fixed.contexts[0].vars


def test_no_fix_when_no_toolkit_ptxas_can_build_the_target() -> None:
    findings = diagnose(facts(("12.1",), "3.5.1", toolkits=(C128,))).findings
    (finding,) = [x for x in findings if x.id == ID]
    assert finding.fixes == ()


def test_no_fix_for_a_ptxas_the_triton_release_rejects() -> None:
    """triton 3.4 has no PTX version for CUDA 13: the 13.0 toolkit's ptxas is not proposed."""
    f = facts(("12.1",), "3.4.0", toolkits=(C130, C129))
    (finding,) = diagnose(f).findings
    assert [dict(x.params) for x in finding.fixes] == [{"path": "/usr/local/cuda-12.9/bin/ptxas"}]


def test_triton_3_3s_blackwell_variable_cannot_be_set() -> None:
    f = facts(("10.3",), "3.3.1", toolkits=(C129,))
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    assert finding.fixes == ()
    assert "a name no shell or systemd unit can set" in finding.explanation
    with pytest.raises(FixError, match="TRITON_PTXAS-BLACKWELL_PATH"):
        build_plan(f, Host(name="h", ssh="h"), FIX, {"path": "/usr/local/cuda-12.9/bin/ptxas"})


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("bin/ptxas", "absolute path"),
        ("/opt/none/ptxas", "not a ptxas the probe ran"),
        ("/usr/local/cuda-12.8/bin/ptxas", "cannot build sm_121a"),
    ],
)
def test_bad_paths_are_refused(path: str, message: str) -> None:
    f = facts(("12.1",), "3.5.1", toolkits=(C130, C128))
    with pytest.raises(FixError, match=message):
        build_plan(f, Host(name="h", ssh="h"), FIX, {"path": path})


GOLDEN = r"""
set -e
dt_in_root() { … }
d="$(dt_in_root '/srv/fake hosts/spark' /etc/systemd/system/sglang.service.d)"
f="$d"/50-detective-tui-triton-ptxas.conf
c='# Written by detective-tui (fix use-toolkit-ptxas-for-triton). Delete this file to undo.
[Service]
Environment="TRITON_PTXAS_PATH=/usr/local/cuda-13.0/bin/ptxas"'
if [ -f "$f" ] && [ "$(cat "$f")" = "$c" ]; then
  echo '@@dt unchanged 50-detective-tui-triton-ptxas.conf already in place'
else
  if [ ! -d "$d" ]; then mkdir -p "$d"; : > "$d"/.detective-tui-20261129-120000.dir; fi
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  printf '%s\n' "$c" > "$t"
  mv -f "$t" "$f"
  echo '@@dt changed 50-detective-tui-triton-ptxas.conf written'
fi
echo '@@dt unchanged skipped systemctl daemon-reload: spark is a filesystem under /srv/fake hosts/spark, not a running system: run systemctl daemon-reload on the machine that runs it'
-----
set -e
dt_in_root() { … }
if [ -f "$(dt_in_root '/srv/fake hosts/spark' /venv/bin/activate)" ]; then
f="$(dt_in_root '/srv/fake hosts/spark' /venv/bin/activate)"
b='# >>> detective-tui triton-ptxas >>>
export TRITON_PTXAS_PATH=/usr/local/cuda-13.0/bin/ptxas
# <<< detective-tui triton-ptxas <<<'
if [ -f "$f" ] && grep -qxF '# >>> detective-tui triton-ptxas >>>' "$f" && ! grep -qxF '# <<< detective-tui triton-ptxas <<<' "$f"; then printf '%s %s\n' "$f" 'has a detective-tui triton-ptxas block without its end marker; fix it by hand' >&2; exit 1; fi
if [ -f "$f" ] && [ "$(sed -n '/^# >>> detective-tui triton-ptxas >>>$/,/^# <<< detective-tui triton-ptxas <<<$/p' "$f")" = "$b" ]; then
  echo '@@dt unchanged block triton-ptxas already in place'
else
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  if [ -f "$f" ]; then sed '/^# >>> detective-tui triton-ptxas >>>$/,/^# <<< detective-tui triton-ptxas <<<$/d' "$f" > "$t"; fi
  if [ -s "$t" ] && [ -n "$(tail -c 1 "$t")" ]; then echo >> "$t"; fi
  printf '%s\n' "$b" >> "$t"
  mv -f "$t" "$f"
  echo '@@dt changed block triton-ptxas written'
fi
else
  echo '@@dt unchanged no activate script at /venv/bin/activate'
fi
"""


def test_dry_run_commands() -> None:
    f = facts(("12.1",), "3.5.1", service_env={"CUDA_HOME": C130[0]})
    host = Host(name="spark", ssh="root@spark", root="/srv/fake hosts/spark")
    plan = build_plan(
        f, host, FIX, {"path": "/usr/local/cuda-13.0/bin/ptxas"}, stamp="20261129-120000"
    )
    assert shown(plan) == GOLDEN.strip("\n")
    assert plan.verify_gone == (ID,) and plan.units == ("sglang.service",)
    assert plan.env_keys == ("TRITON_PTXAS_PATH",)


# --- the real probe on fake hosts ----------------------------------------------------------


def probe(fake: fakehost.FakeHost) -> Facts:
    env = {"SHELL": "/bin/sh", "LANG": "C", **fake.env}
    env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True, step_timeout_s=5))
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return facts_from_output(out.stdout)


def test_probe_runs_the_bundled_ptxas_and_reads_the_override(tmp_path: Path) -> None:
    fake = fakehost.build_fake_host(tmp_path / "h", fakehost.gb10_triton_old_ptxas(override=True))
    f = probe(fake)
    (py,) = [p for p in f.pythons if p.source == "inventory"]
    assert py.triton_bin_dir and py.triton_bin_dir.endswith("triton/backends/nvidia/bin")
    by_path = {p.path: p for p in f.ptxas}
    bundled = by_path[f"{py.triton_bin_dir}/ptxas"]
    assert (bundled.full_version, bundled.version_source) == ("12.8.93", "run")
    override = by_path["/usr/local/cuda-13.0/bin/ptxas"]
    assert (override.full_version, override.version_source) == ("13.0.88", "run")
    (tk,) = [t for t in f.toolkits if t.home == "/usr/local/cuda-13.0"]
    assert tk.ptxas == "/usr/local/cuda-13.0/bin/ptxas"
    served = [c for c in f.contexts if c.kind == "process"]
    assert served[0].vars["TRITON_PTXAS_PATH"] == "/usr/local/cuda-13.0/bin/ptxas"
    assert ID not in ids(f)


def test_a_ptxas_that_cannot_run_is_read_from_its_file(tmp_path: Path) -> None:
    spec = fakehost.gb10_triton_old_ptxas()
    venv = dataclasses.replace(spec.venvs[0], triton_ptxas_runs=False)
    fake = fakehost.build_fake_host(tmp_path / "h", dataclasses.replace(spec, venvs=(venv,)))
    f = probe(fake)
    (bundled,) = [p for p in f.ptxas if p.path.endswith("/triton/backends/nvidia/bin/ptxas")]
    assert (bundled.full_version, bundled.version_source) == ("12.8.93", "file")
    assert bundled.error and "exited 126" in bundled.error
    assert ids(f) == {ID: "critical"}


def _entry(tmp_path: Path, name: str, spec: fakehost.FakeHostSpec, **extra: Any) -> dict:
    fake = fakehost.build_fake_host(tmp_path / f"{name} root", spec)
    entry = {
        "name": name,
        "root": str(fake.root),
        "simulate": "tree",
        "env": fake.env,
        "python": list(fake.pythons),
    }
    return {**entry, **extra} if extra else {**entry, "local": True}


def _diagnose(tmp_path: Path, capsys: pytest.CaptureFixture[str], *entries: dict) -> tuple:
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": list(entries)}))
    code = main(["--hosts", str(inv), "diagnose", "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_diagnose_locally_fires_and_the_near_misses_stay_silent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = _diagnose(
        tmp_path,
        capsys,
        _entry(tmp_path, "old", fakehost.gb10_triton_old_ptxas()),
        _entry(tmp_path, "new", fakehost.gb10_triton_old_ptxas(triton="3.6.0")),
        _entry(tmp_path, "override", fakehost.gb10_triton_old_ptxas(override=True)),
    )
    assert code == exitcodes.CRITICAL
    assert [[f["id"] for f in h["findings"]] for h in hosts] == [[ID], [], []]
    (finding,) = hosts[0]["findings"]
    assert finding["fixes"][0]["id"] == FIX
    assert "TRITON_PTXAS_PATH=/usr/local/cuda-13.0/bin/ptxas" in "\n".join(
        finding["fixes"][0]["commands"]
    )
    assert "vllm.entrypoints.openai.api_server" in finding["explanation"]


@pytest.mark.sshd
def test_diagnose_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = _diagnose(
        tmp_path,
        capsys,
        _entry(tmp_path, "old", fakehost.gb10_triton_old_ptxas(), ssh=ssh_env.alias),
        _entry(tmp_path, "new", fakehost.gb10_triton_old_ptxas(triton="3.6.0"), ssh=ssh_env.alias),
    )
    assert code == exitcodes.CRITICAL
    assert [h["reachable"] for h in hosts] == [True, True]
    assert {f["id"]: f["severity"] for f in hosts[0]["findings"]} == {ID: "critical"}
    assert hosts[1]["findings"] == []
