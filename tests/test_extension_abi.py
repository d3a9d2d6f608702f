# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""``extension-torch-abi-mismatch`` and ``match-extension-to-torch``.

What an extension declares (a Requires-Dist pin, a local version, xformers' cpp_lib.json),
the rule's verdicts, the what-if, the exact dry-run of the pip plan and its undo, the real probe
on fake hosts locally and over a real sshd, and — slow — the ELF symbol check on real wheels:
torchvision 0.24.1 (built for torch 2.9.1) against the libraries of torch 2.9.1 and 2.8.0.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from factsmaker import make_facts
from wheel_ranges import CACHE_ROOT, wheel_members

from tui.cli import main
from tui.core import exitcodes
from tui.core.facts import ExtensionBuild, Facts
from tui.core.facts.extensions import declared
from tui.core.fixes import build_plan
from tui.core.fixes.pipplan import LEFTOVERS, SNAPSHOT, WAIT
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.rules.evaluate import evaluate
from tui.demo.fakehost import VenvSpec, build_fake_host, healthy_h100
from tui.demo.neighbours import extension_for_other_torch

ID = "extension-torch-abi-mismatch"
CACHE = CACHE_ROOT / "ext-wheel-members"


def facts_with(torch: str, *exts: ExtensionBuild) -> Facts:
    f = make_facts(
        gpus=("9.0",), torch_cuda="12.8", flashinfer=None, driver="570.148.08", toolkits=()
    )
    return replace(f, pythons=(replace(f.pythons[0], torch_version=torch, extensions=exts),))


TV_241 = ExtensionBuild("torchvision", "0.24.1", ("torch (==2.9.1)",))


@pytest.mark.parametrize(
    ("ext", "torch", "fits"),
    [
        (TV_241, "2.9.1+cu130", True),
        (TV_241, "2.8.0+cu128", False),
        (ExtensionBuild("xformers", "0.0.34", ("torch>=2.10",)), "2.11.0", True),
        (ExtensionBuild("flashinfer-python", "0.2.5+cu124torch2.6"), "2.6.0+cu124", True),
        (ExtensionBuild("flashinfer-python", "0.2.5+cu124torch2.6"), "2.7.0+cu126", False),
        (ExtensionBuild("torch-scatter", "2.1.2+pt24cu121"), "2.5.1+cu121", False),
        (ExtensionBuild("xformers", "0.0.33", built_torch="2.9.0+cu128"), "2.9.0+cu130", False),
        (ExtensionBuild("xformers", "0.0.34", built_torch="2.10.0+cu128"), "2.11.0+cu130", True),
        (ExtensionBuild("xformers", "0.0.34", built_torch="2.10.0+cu128"), "2.9.1+cu128", False),
    ],
)
def test_what_the_extension_declares(ext: ExtensionBuild, torch: str, fits: bool) -> None:
    said = declared(ext, torch)
    assert said is not None and said.fits is fits, said


def test_nothing_declared_and_no_symbols_read_says_nothing() -> None:
    ext = ExtensionBuild("flash-attn", "2.8.3")
    assert declared(ext, "2.9.1") is None
    assert evaluate(facts_with("2.9.1+cu128", ext))[0] == ()


ROWS = {
    "pin for another minor, symbols unread": (
        "2.8.0+cu128",
        TV_241,
        "critical",
    ),
    "pin for another minor, every symbol resolves": (
        "2.8.0+cu128",
        replace(TV_241, so_read=2, torch_symbols=182),
        "warning",
    ),
    "undefined symbol, nothing declared (flash-attn built locally)": (
        "2.9.1+cu128",
        ExtensionBuild(
            "flash-attn",
            "2.8.3",
            so_read=1,
            torch_symbols=210,
            missing_symbols=4,
            missing_sample=("_ZNK3c106SymInt22maybe_as_int_slow_pathEv",),
        ),
        "critical",
    ),
    "a CUDA build of an extension on a CPU torch": (
        "2.9.1+cpu",
        ExtensionBuild("xformers", "0.0.33.post2", so_read=1, lacking_libs=("libc10_cuda.so",)),
        "critical",
    ),
    "pin differs in the patch release only": (
        "2.9.0+cu128",
        TV_241,
        "warning",
    ),
    "matching pin (near miss)": ("2.9.1+cu130", TV_241, None),
}


@pytest.mark.parametrize(("torch", "ext", "severity"), list(ROWS.values()), ids=list(ROWS))
def test_rule(torch: str, ext: ExtensionBuild, severity: str | None) -> None:
    findings, _ = evaluate(facts_with(torch, ext))
    assert [(f.id, f.severity) for f in findings] == ([(ID, severity)] if severity else [])


def test_undefined_symbol_is_named() -> None:
    ext = ROWS["undefined symbol, nothing declared (flash-attn built locally)"][1]
    (f,) = evaluate(facts_with("2.9.1+cu128", ext))[0]
    assert "'undefined symbol: _ZNK3c106SymInt22maybe_as_int_slow_pathEv'" in f.explanation
    assert "4 of the 210 torch symbols" in f.explanation


def test_whatif_extension_follows_torch() -> None:
    broken = ExtensionBuild("xformers", "0.0.28.post3", ("torch==2.5.1",))
    d = diagnose(facts_with("2.8.0+cu128", TV_241, broken))
    assert [f.id for f in d.findings] == [ID, ID]  # one per extension
    for f in d.findings:
        (fix,) = f.fixes
        assert (fix.id, dict(fix.params), fix.resolves) == (
            "match-extension-to-torch",
            {"package": "torchvision,xformers"},
            (ID,),
        )


def test_whatif_torch_follows_a_serving_engine() -> None:
    vllm = ExtensionBuild("vllm", "0.11.0", ("torch==2.8.0",))
    d = diagnose(facts_with("2.9.1+cu128", vllm))
    params = [dict(x.params) for x in d.findings[0].fixes]
    assert params == [{"package": "vllm"}]  # least invasive of the two that resolve it
    from tui.core.judge.whatif import apply_fix

    after = apply_fix(
        facts_with("2.9.1+cu128", vllm),
        "match-extension-to-torch",
        {"package": "vllm", "torch": "2.8.0"},
    )
    assert after.pythons[0].torch_version == "2.8.0+cu128"
    assert evaluate(after)[0] == ()


DRY_RUN = r"""
set -e
f=/venv/.detective-tui/pip-freeze-20261129-120000.txt
mkdir -p "$(dirname "$f")"
exec 9>>"$f".lock
/venv/bin/python3 -I -c WAIT
[ -s "$f" ] || { /venv/bin/python3 -I -c SNAPSHOT /venv "$f".paths; /venv/bin/python3 -m pip freeze --all > "$f".tmp; mv -f "$f".tmp "$f"; }
/venv/bin/python3 -m pip install --disable-pip-version-check --extra-index-url https://download.pytorch.org/whl/cu128 --upgrade torchvision torch==2.8.0+cu128
echo '@@dt changed pip installed --upgrade torchvision torch==2.8.0+cu128 (the packages before: /venv/.detective-tui/pip-freeze-20261129-120000.txt)'
"""
UNDO = r"""
f=/venv/.detective-tui/pip-freeze-20261129-120000.txt
mkdir -p "$(dirname "$f")"
exec 9>>"$f".lock
/venv/bin/python3 -I -c WAIT
rm -f "$f".tmp "$f".paths.tmp
if [ ! -s "$f" ]; then
  echo '@@dt unchanged nothing of this fix run: no record /venv/.detective-tui/pip-freeze-20261129-120000.txt, pip never ran'
  exit 0
fi
/venv/bin/python3 -m pip freeze --all | sed -n -e 's/^\([A-Za-z0-9._-][A-Za-z0-9._-]*\)==.*/\1/p' -e 's/^\([A-Za-z0-9._-][A-Za-z0-9._-]*\) @ .*/\1/p' | sort > "$f".after
sed -n -e 's/^\([A-Za-z0-9._-][A-Za-z0-9._-]*\)==.*/\1/p' -e 's/^\([A-Za-z0-9._-][A-Za-z0-9._-]*\) @ .*/\1/p' "$f" | sort > "$f".before
added=$(comm -13 "$f".before "$f".after)
if [ -n "$added" ]; then /venv/bin/python3 -m pip uninstall -y $added; fi
sed -n -e 's/^\([A-Za-z0-9._-][A-Za-z0-9._-]*\)==/\1===/p' -e '/^[A-Za-z0-9._-][A-Za-z0-9._-]* @ /p' "$f" > "$f".pins
/venv/bin/python3 -m pip install --disable-pip-version-check --no-deps --extra-index-url https://download.pytorch.org/whl/cu128 -r "$f".pins
if [ -s "$f".paths ]; then /venv/bin/python3 -I -c LEFTOVERS /venv "$f".paths /venv/.detective-tui/pip-leftovers-20261129-120000; fi
rm -f "$f".after "$f".before "$f".pins
echo '@@dt changed restored the packages recorded in /venv/.detective-tui/pip-freeze-20261129-120000.txt'
"""


def test_dry_run_and_undo_are_exact() -> None:
    plan = build_plan(
        facts_with("2.8.0+cu128", TV_241),
        Host(name="h100", ssh="root@10.0.0.8"),
        "match-extension-to-torch",
        {"package": "torchvision"},
        stamp="20261129-120000",
    )
    dry_run = (
        DRY_RUN.strip("\n")
        .replace("SNAPSHOT", shlex.quote(SNAPSHOT))
        .replace("WAIT", shlex.quote(WAIT))
    )
    assert "\n-----\n".join(plan.preview_commands()) == dry_run
    assert plan.steps[0].undo == UNDO.strip("\n").replace(
        "LEFTOVERS", shlex.quote(LEFTOVERS)
    ).replace("WAIT", shlex.quote(WAIT))
    assert plan.verify_gone == (ID,)


def test_source_only_extensions_are_rebuilt_for_the_installed_torch() -> None:
    ext = ROWS["undefined symbol, nothing declared (flash-attn built locally)"][1]
    plan = build_plan(
        facts_with("2.9.1+cu128", ext),
        Host(name="h", ssh="h"),
        "match-extension-to-torch",
        {"package": "flash-attn"},
        stamp="20261129-120000",
    )
    (command,) = plan.preview_commands()
    assert (
        "install --disable-pip-version-check --extra-index-url https://download.pytorch.org/whl/cu128"
        " --no-build-isolation --no-deps --force-reinstall --no-binary flash-attn flash-attn==2.8.3"
        in command
    )


# -- the real probe on fake hosts ----------------------------------------------------------------


def _inventory(tmp_path: Path, specs: dict[str, Any], ssh: str | None = None) -> str:
    hosts = []
    for name, spec in specs.items():
        fake = build_fake_host(tmp_path / f"{name} root", spec)
        entry: dict[str, Any] = {
            "name": name,
            "root": str(fake.root),
            "simulate": "tree",
            "env": fake.env,
            "python": list(fake.pythons),
        }
        entry.update({"ssh": ssh} if ssh else {"local": True})
        hosts.append(entry)
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump({"hosts": hosts}))
    return str(path)


def _diagnose(capsys: pytest.CaptureFixture[str], inv: str) -> tuple[int, dict[str, dict]]:
    code = main(["--hosts", inv, "diagnose", "--json"])
    return code, {h["host"]: h for h in json.loads(capsys.readouterr().out)}


def _check(code: int, hosts: dict[str, dict]) -> None:
    assert code == exitcodes.CRITICAL
    broken, ok = hosts["broken"], hosts["ok"]
    assert {f["id"]: f["severity"] for f in broken["findings"]} == {ID: "critical"}
    assert ok["findings"] == []
    (f,) = broken["findings"]
    assert "Requires-Dist: torch==2.9.1" in f["evidence"]
    assert [(x["id"], x["params"]) for x in f["fixes"]] == [
        ("match-extension-to-torch", {"package": "torchvision"})
    ]
    (ext,) = broken["facts"]["pythons"][0]["extensions"]
    assert (ext["name"], ext["version"], ext["requires_torch"]) == (
        "torchvision",
        "0.24.1",
        ["torch (==2.9.1)"],
    )


SPECS = {"broken": extension_for_other_torch(), "ok": extension_for_other_torch(matching=True)}


def test_fake_hosts_locally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(*_diagnose(capsys, _inventory(tmp_path, SPECS)))


def test_fake_hosts_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(*_diagnose(capsys, _inventory(tmp_path, SPECS, ssh=ssh_env.alias)))


# -- slow: real wheels' symbol tables ------------------------------------------------------------

TORCH_LIBS = ("libc10.so", "libtorch.so", "libtorch_cpu.so", "libtorch_python.so")
VISION_SOS = ("torchvision/_C.so", "torchvision/image.so")
WHEELS = {  # what each test host is built from: (requirement, the members it reads)
    "torch-2.9.1": ("torch==2.9.1", tuple(f"torch/lib/{lib}" for lib in TORCH_LIBS)),
    "torch-2.8.0": ("torch==2.8.0", tuple(f"torch/lib/{lib}" for lib in TORCH_LIBS)),
    "torchvision-0.24.1": (
        "torchvision==0.24.1",
        (*VISION_SOS, "torchvision-0.24.1.dist-info/METADATA"),
    ),
}
AARCH64_CP311 = (
    "--only-binary=:all:",
    "--platform",
    "manylinux_2_28_aarch64",
    "--python-version",
    "3.11",
)


def _unpacked(name: str) -> Path:
    """The members the test reads from a real PyPI wheel (aarch64: the CPU builds, ~100 MB;
    ~65 MB of it is libtorch_cpu.so), fetched once with HTTP Range requests."""
    requirement, members = WHEELS[name]
    others = [req for req, _members in WHEELS.values()]
    return wheel_members(name, requirement, AARCH64_CP311, members, CACHE, others)


def _real_host(torch_dir: Path, vision: Path) -> Any:
    meta = (vision / "torchvision-0.24.1.dist-info" / "METADATA").read_text()
    requires = tuple(
        line.split(":", 1)[1].strip()
        for line in meta.split("\n\n")[0].splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    )
    (venv,) = healthy_h100().venvs
    venv = VenvSpec(
        path=venv.path,
        dists=(("torch", torch_dir.name.split("-")[1]), ("torchvision", "0.24.1")),
        requires={"torchvision": requires},
        records={"torchvision": VISION_SOS},
        site_files={
            **{f"torch/lib/{lib}": torch_dir / "torch" / "lib" / lib for lib in TORCH_LIBS},
            **{so: vision / so for so in VISION_SOS},
        },
    )
    return replace(healthy_h100(), venvs=(venv,))


@pytest.mark.slow
def test_real_torchvision_against_two_real_torches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vision = _unpacked("torchvision-0.24.1")
    specs = {
        "ok": _real_host(_unpacked("torch-2.9.1"), vision),
        "broken": _real_host(_unpacked("torch-2.8.0"), vision),
    }
    code, hosts = _diagnose(capsys, _inventory(tmp_path, specs))
    assert code == exitcodes.CRITICAL
    ok = hosts["ok"]["facts"]["pythons"][0]["extensions"][0]
    assert (ok["so_read"], ok["missing_symbols"]) == (2, 0)
    assert ok["torch_symbols"] > 100 and hosts["ok"]["findings"] == []
    broken = hosts["broken"]["facts"]["pythons"][0]["extensions"][0]
    # torchvision 0.24.1's _C.so needs c10::SymInt::maybe_as_int_slow_path() const, which
    # torch 2.9.1's libc10.so exports and 2.8.0's does not
    assert broken["missing_sample"] == ["_ZNK3c106SymInt22maybe_as_int_slow_pathEv"]
    (f,) = hosts["broken"]["findings"]
    assert f["severity"] == "critical" and "undefined symbol" in f["explanation"]
