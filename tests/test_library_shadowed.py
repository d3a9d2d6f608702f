# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""cuda-library-shadowed and drop-shadowing-library-path: library names and versions, the rule
on facts (loaded beats installed, LD_LIBRARY_PATH as the loader reads it, torch's own preloads),
the what-if, the exact plan, and the real probe on fake hosts, locally and over a real sshd."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from factsmaker import PY, make_facts
from fakehost_runs import diagnose_json, entry, probed
from plan_golden import shown as plan_shown

from tui.core import exitcodes
from tui.core.facts import EnvContext, Facts, LibFile
from tui.core.findings.cuda_library_shadowed import lib_of
from tui.core.fixes import FixError, build_plan
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.judge.whatif import apply_fix
from tui.core.rules.evaluate import evaluate
from tui.core.tables import torch_libs
from tui.demo import fakehost

ID = "cuda-library-shadowed"
FIX = "drop-shadowing-library-path"
SITE = "/venv/lib/python3.12/site-packages"
OLD121 = "/usr/local/cuda-12.1/lib64"
OLD124 = "/usr/local/cuda-12.4/lib64"
SERVICE = "pid 4242 vllm"


def facts(
    torch: str,
    gpus: tuple[str, ...] = ("9.0",),
    *,
    ld: str = OLD121,
    ld_libs: tuple[tuple[str, str], ...] = (),
    mapped: tuple[str, ...] = (),
    wheel: dict[str, str] | None = None,
) -> Facts:
    major_minor = torch.split("+cu")[1]
    cuda = f"{major_minor[:-1]}.{major_minor[-1]}"
    wheel = wheel or {
        "nvidia/nvjitlink/lib/libnvJitLink.so.12": "nvidia-nvjitlink-cu12",
        "nvidia/cuda_nvrtc/lib/libnvrtc.so.12": "nvidia-cuda-nvrtc-cu12",
        "nvidia/cuda_runtime/lib/libcudart.so.12": "nvidia-cuda-runtime-cu12",
    }
    full = {"12.4": "12.4.127", "12.8": "12.8.93", "13.0": "13.0.96"}[cuda]
    f = make_facts(
        gpus=gpus,
        driver="580.95.05",
        torch_cuda=cuda,
        torch_version=torch,
        flashinfer=None,
        toolkits=(("/usr/local/cuda-12.8", "12.8"),) if cuda.startswith("12") else (),
        env={"CUDA_HOME": "/usr/local/cuda-12.8", "LD_LIBRARY_PATH": ld} if ld else {},
        packages=dict.fromkeys(wheel.values(), full),
    )
    ssh = dataclasses.replace(
        f.contexts[0],
        ld_libs=tuple(LibFile(p, t) for p, t in ld_libs),
        ld_path_files=("/root/.bashrc",) if ld else (),
    )
    contexts: tuple[EnvContext, ...] = (ssh,)
    pythons = tuple(
        dataclasses.replace(p, cuda_libs=tuple(f"{SITE}/{w}" for w in wheel)) for p in f.pythons
    )
    if mapped:
        server = EnvContext(
            kind="process",
            label=SERVICE,
            vars=dict(ssh.vars),
            pid=4242,
            exe=PY,
            cmdline=f"{PY} -m vllm.entrypoints.openai.api_server",
            ld_libs=ssh.ld_libs,
            mapped_libs=mapped,
        )
        contexts = (ssh, server)
        pythons = (*pythons, dataclasses.replace(pythons[0], source="process", context=SERVICE))
    return dataclasses.replace(f, contexts=contexts, pythons=pythons)


def nvjitlink(version: str, ld: str = OLD121) -> tuple[tuple[str, str], ...]:
    return ((f"{ld}/libnvJitLink.so.12", f"{ld}/libnvJitLink.so.{version}"),)


def ids(f: Facts) -> dict[str, str]:
    return {x.id: x.severity for x in evaluate(f)[0] if x.id == ID}


@pytest.mark.parametrize(
    ("path", "target", "expected"),
    [
        (
            f"{OLD121}/libnvJitLink.so.12",
            f"{OLD121}/libnvJitLink.so.12.1.105",
            ("libnvJitLink", 12, "12.1"),
        ),
        (
            "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libnvrtc.so.12.4.127",
            None,
            ("libnvrtc", 12, "12.4"),
        ),
        ("/opt/cuda-12.6/lib64/libcublasLt.so.12", None, ("libcublasLt", 12, "12.6")),
        ("/usr/lib/x86_64-linux-gnu/libcudart.so.11.0", None, ("libcudart", 11, None)),
        ("/usr/lib/x86_64-linux-gnu/libcudnn.so.9", None, ("libcudnn", 9, None)),
        ("/usr/lib/libfoo.so.1", None, None),
    ],
)
def test_library_names_and_versions(path: str, target: str | None, expected: tuple | None) -> None:
    lib = lib_of(path, target)
    assert (lib and (lib.stem, lib.soname_major, lib.version)) == expected


ROWS = {
    "torch 2.5.1: LD_LIBRARY_PATH gives nvJitLink 12.1 (pytorch#140797)": (
        facts("2.5.1+cu124", ld_libs=nvjitlink("12.1.105")),
        {ID: "critical"},
    ),
    "torch 2.6.0 loads the wheel's nvJitLink itself": (
        facts("2.6.0+cu124", ld_libs=nvjitlink("12.1.105")),
        {},
    ),
    "torch 2.5.1, nvJitLink 12.6 in LD_LIBRARY_PATH (newer is fine)": (
        facts("2.5.1+cu124", ld_libs=nvjitlink("12.6.85")),
        {},
    ),
    "torch 2.5.1, the old toolkit installed but not on LD_LIBRARY_PATH": (
        facts("2.5.1+cu124", ld="", ld_libs=nvjitlink("12.1.105")),
        {},
    ),
    "server has NVRTC 12.4 mapped on SM 12.0": (
        facts(
            "2.8.0+cu128",
            ("12.0",),
            ld=OLD124,
            mapped=("/usr/local/cuda-12.4/targets/x86_64-linux/lib/libnvrtc.so.12.4.127",),
        ),
        {ID: "critical"},
    ),
    "server has NVRTC 12.4 mapped on SM 9.0 (it can compile for it)": (
        facts(
            "2.8.0+cu128",
            ("9.0",),
            ld=OLD124,
            mapped=("/usr/local/cuda-12.4/targets/x86_64-linux/lib/libnvrtc.so.12.4.127",),
        ),
        {},
    ),
    "server has only the wheels' own libraries mapped": (
        facts("2.8.0+cu128", ("12.0",), mapped=(f"{SITE}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",)),
        {},
    ),
    "a CUDA 12 runtime mapped into a cu130 torch process": (
        facts(
            "2.11.0+cu130",
            ("12.0",),
            ld="",
            mapped=("/usr/local/cuda-12.8/targets/x86_64-linux/lib/libcudart.so.12.8.90",),
            wheel={"nvidia/cu13/lib/libcudart.so.13": "nvidia-cuda-runtime"},
        ),
        {ID: "critical"},
    ),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_rule_rows(name: str) -> None:
    f, expected = ROWS[name]
    assert ids(f) == expected


def test_the_chain_and_evidence_name_the_entry_and_the_file_that_set_it() -> None:
    (finding,) = [x for x in evaluate(facts("2.5.1+cu124", ld_libs=nvjitlink("12.1.105")))[0]]
    assert finding.title == (
        "torch 2.5.1+cu124 loads libnvJitLink 12.1 from /usr/local/cuda-12.1/lib64, not its own"
    )
    assert "undefined symbol: … version libnvJitLink.so.12" in finding.explanation
    assert f"LD_LIBRARY_PATH={OLD121} (set in /root/.bashrc)" in finding.evidence
    assert (
        f"wheel copy {SITE}/nvidia/nvjitlink/lib/libnvJitLink.so.12: CUDA 12.4" in finding.evidence
    )


def test_loaded_beats_installed() -> None:
    """The server maps the wheel's nvJitLink: what LD_LIBRARY_PATH offers does not matter."""
    f = facts(
        "2.5.1+cu124",
        ld_libs=nvjitlink("12.1.105"),
        mapped=(f"{SITE}/nvidia/nvjitlink/lib/libnvJitLink.so.12",),
    )
    assert ids(f) == {}


def test_the_fix_drops_the_entry_and_resolves() -> None:
    f = facts("2.5.1+cu124", ld=f"{OLD121}:/opt/other", ld_libs=nvjitlink("12.1.105"))
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    (fix,) = finding.fixes
    assert (fix.id, dict(fix.params), fix.resolves) == (FIX, {"entry": OLD121}, (ID,))
    after = apply_fix(f, FIX, fix.params, PY)
    assert after.contexts[0].vars["LD_LIBRARY_PATH"] == "/opt/other"
    assert ids(after) == {}


def test_a_restarted_server_has_loaded_nothing_yet() -> None:
    f = facts(
        "2.8.0+cu128",
        ("12.0",),
        ld=OLD124,
        mapped=("/usr/local/cuda-12.4/targets/x86_64-linux/lib/libnvrtc.so.12.4.127",),
    )
    after = apply_fix(f, FIX, {"entry": OLD124}, PY)
    server = after.context(SERVICE)
    assert server is not None and server.mapped_libs == () and not server.vars["LD_LIBRARY_PATH"]
    assert ids(after) == {}


GOLDEN = r"""
set -e
dt_in_root() { … }
if [ -f "$(dt_in_root '/srv/fake hosts/h' /venv/bin/activate)" ]; then
f="$(dt_in_root '/srv/fake hosts/h' /venv/bin/activate)"
b='# >>> detective-tui ld-path >>>
export LD_LIBRARY_PATH=/opt/other
# <<< detective-tui ld-path <<<'
if [ -f "$f" ] && grep -qxF '# >>> detective-tui ld-path >>>' "$f" && ! grep -qxF '# <<< detective-tui ld-path <<<' "$f"; then printf '%s %s\n' "$f" 'has a detective-tui ld-path block without its end marker; fix it by hand' >&2; exit 1; fi
if [ -f "$f" ] && [ "$(sed -n '/^# >>> detective-tui ld-path >>>$/,/^# <<< detective-tui ld-path <<<$/p' "$f")" = "$b" ]; then
  echo '@@dt unchanged block ld-path already in place'
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
  if [ -f "$f" ]; then sed '/^# >>> detective-tui ld-path >>>$/,/^# <<< detective-tui ld-path <<<$/d' "$f" > "$t"; fi
  if [ -s "$t" ] && [ -n "$(tail -c 1 "$t")" ]; then echo >> "$t"; fi
  printf '%s\n' "$b" >> "$t"
  mv -f "$t" "$f"
  echo '@@dt changed block ld-path written'
fi
else
  echo '@@dt unchanged no activate script at /venv/bin/activate'
fi
"""


def test_dry_run_commands() -> None:
    f = facts("2.5.1+cu124", ld=f"{OLD121}:/opt/other", ld_libs=nvjitlink("12.1.105"))
    host = Host(name="h", ssh="root@h", root="/srv/fake hosts/h")
    plan = build_plan(f, host, FIX, {"entry": OLD121}, stamp="20261129-120000")
    shown = plan_shown(plan)
    assert shown == GOLDEN.strip("\n")
    assert plan.verify_gone == (ID,) and plan.env_keys == ("LD_LIBRARY_PATH",)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"entry": "lib64"}, "absolute directories"),
        ({"entry": "/opt/nowhere"}, "is in no LD_LIBRARY_PATH"),
    ],
)
def test_bad_entries_are_refused(params: dict, message: str) -> None:
    f = facts("2.5.1+cu124", ld_libs=nvjitlink("12.1.105"))
    with pytest.raises(FixError, match=message):
        build_plan(f, Host(name="h", ssh="h"), FIX, params)


def test_torch_versions_before_the_table_are_not_guessed() -> None:
    assert torch_libs.unpinned("2.4.1+cu124") == ()
    assert torch_libs.unpinned("2.5.1+cu124") == ("libnvJitLink", "libcublasLt", "libnvrtc")
    assert torch_libs.unpinned("2.6.0+cu124") == ("libcublasLt",)
    assert torch_libs.unpinned("2.10.0+cu128") == ()


# --- the real probe on fake hosts ----------------------------------------------------------


def test_probe_reads_maps_ld_library_path_the_unit_file_and_the_wheels(tmp_path: Path) -> None:
    f = probed(fakehost.build_fake_host(tmp_path / "h", fakehost.nvrtc_shadowed_server()))
    server = next(c for c in f.contexts if c.kind == "process")
    assert (
        "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libnvrtc.so.12.4.127" in server.mapped_libs
    )
    assert (
        LibFile(
            "/usr/local/cuda-12.4/lib64/libnvrtc.so.12",
            "/usr/local/cuda-12.4/lib64/libnvrtc.so.12.4.127",
        )
        in server.ld_libs
    )
    unit = next(c for c in f.contexts if c.kind == "unit")
    assert unit.ld_path_files == ("/etc/systemd/system/vllm.service",)
    (py,) = [p for p in f.pythons if p.source == "inventory"]
    assert any(p.endswith("nvidia/cuda_nvrtc/lib/libnvrtc.so.12") for p in py.cuda_libs)
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    assert "(set in /etc/systemd/system/vllm.service)" in " ".join(finding.evidence)
    assert "NVRTC 12.4 cannot compile for SM 12.0" in finding.explanation


def test_diagnose_locally_fires_and_the_near_miss_stays_silent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "old", fakehost.nvjitlink_shadowed_login()),
        entry(tmp_path, "new", fakehost.nvjitlink_shadowed_login("2.6.0")),
    )
    assert code == exitcodes.CRITICAL
    assert [[f["id"] for f in h["findings"]] for h in hosts] == [[ID], []]
    fix = hosts[0]["findings"][0]["fixes"][0]
    assert (fix["id"], fix["params"]) == (FIX, {"entry": "/usr/local/cuda-12.1/lib64"})


@pytest.mark.sshd
def test_diagnose_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "server", fakehost.nvrtc_shadowed_server(), ssh=ssh_env.alias),
        entry(tmp_path, "new", fakehost.nvjitlink_shadowed_login("2.6.0"), ssh=ssh_env.alias),
    )
    assert code == exitcodes.CRITICAL
    assert {f["id"]: f["severity"] for f in hosts[0]["findings"]} == {ID: "critical"}
    assert hosts[1]["findings"] == []
