# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""``jit-nvcc-missing``: FlashInfer must JIT-compile for a visible GPU and finds no nvcc.

Facts-level rows (every finding a host shape must produce), the prebuilt-coverage table, the
what-if (which fixes resolve it), the exact dry-run of the pip fix, and the real probe on fake
hosts — locally and over a real sshd — where it must fire and its near misses where it must not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from factsmaker import make_facts, toolkit

from tui.cli import main
from tui.core import exitcodes
from tui.core.fixes import build_plan
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.rules.evaluate import evaluate
from tui.core.tables.flashinfer_prebuilt import coverage, serves
from tui.demo.fakehost import build_fake_host
from tui.demo.neighbours import jit_without_nvcc

C130 = ("/usr/local/cuda-13.0", "13.0")
NO_TOOLKIT = dict(gpus=("12.0",), toolkits=(), env={}, torch_cuda="13.0")
ID = "jit-nvcc-missing"

ROWS = {
    "no toolkit at all, FlashInfer 0.6.8, cu130 torch": (NO_TOOLKIT, {ID: "critical"}),
    "no toolkit, H100": ({**NO_TOOLKIT, "gpus": ("9.0",) * 4}, {ID: "critical"}),
    "jit-cache of the same version (near miss)": ({**NO_TOOLKIT, "jit_cache": "0.6.8+cu130"}, {}),
    "jit-cache of another version": ({**NO_TOOLKIT, "jit_cache": "0.6.7+cu130"}, {ID: "critical"}),
    "version check disabled, other jit-cache": (
        {
            **NO_TOOLKIT,
            "jit_cache": "0.6.7+cu130",
            "env": {"FLASHINFER_DISABLE_VERSION_CHECK": "1"},
        },
        {},
    ),
    "0.7.2 provider covers 12.0f (near miss)": (
        {**NO_TOOLKIT, "flashinfer": "0.7.2", "jit_cache": "0.7.2+cu130"},
        {},
    ),
    "0.7.2 provider: 12.0f serves SM 12.1 too (near miss)": (
        {**NO_TOOLKIT, "gpus": ("12.1",), "flashinfer": "0.7.2", "jit_cache": "0.7.2+cu130"},
        {},
    ),
    "0.7.2 provider of an unrecorded variant": (
        {**NO_TOOLKIT, "flashinfer": "0.7.2", "jit_cache": "0.7.2+cu140"},
        {ID: "warning"},
    ),
    "CUDA_HOME ends in /bin": (
        {**NO_TOOLKIT, "toolkits": (C130,), "env": {"CUDA_HOME": "/usr/local/cuda-13.0/bin"}},
        {ID: "critical"},
    ),
    "CUDA_HOME with a leading ':'": (
        {**NO_TOOLKIT, "toolkits": (C130,), "env": {"CUDA_HOME": ":/usr/local/cuda-13.0"}},
        {ID: "critical"},
    ),
    "nvcc not executable (H100: no version needed to pick 9.0a)": (
        {
            **NO_TOOLKIT,
            "gpus": ("9.0",),
            "toolkits": (),
            "extra_toolkits": (toolkit(C130[0], "13.0", executable=False),),
            "env": {"CUDA_HOME": C130[0]},
        },
        {ID: "critical"},
    ),
    "a working toolkit (healthy)": (
        {**NO_TOOLKIT, "toolkits": (C130,), "env": {"CUDA_HOME": C130[0]}},
        {},
    ),
    "no FlashInfer: nothing JIT-compiles": ({**NO_TOOLKIT, "flashinfer": None}, {}),
    # jit-nvcc-missing stays silent (nothing to build for); the empty variable is its own finding
    "no GPU visible: nothing to build for": (
        {**NO_TOOLKIT, "env": {"CUDA_VISIBLE_DEVICES": ""}},
        {"cuda-visible-devices-selects-no-gpu": "warning"},
    ),
}


@pytest.mark.parametrize(("kwargs", "expected"), list(ROWS.values()), ids=list(ROWS))
def test_rules_fire_exactly(kwargs: dict[str, Any], expected: dict[str, str]) -> None:
    findings, replays = evaluate(make_facts(**kwargs))
    assert {f.id: f.severity for f in findings} == expected, [f.title for f in findings]
    if expected:
        assert replays[0].compiles is not True


def test_the_replay_already_knew_compiles_false() -> None:
    findings, (replayed,) = evaluate(make_facts(**NO_TOOLKIT))
    assert (replayed.compiles, replayed.check_cuda_arch, replayed.cuda_home) == (
        False,
        "pass",
        None,
    )
    (f,) = findings
    assert "replay: compiles = false" in f.evidence
    for part in (
        "FlashInfer 0.6.8 finds no toolkit",
        "falls back to torch.version.cuda 13.0",
        "TARGET_CUDA_ARCHS = ['12.0f']",
        "Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist",
        "no flashinfer-jit-cache is installed, so nothing spares that build",
        "flashinfer-jit-cache==0.6.8+cu130",
    ):
        assert part in f.explanation, part


def test_malformed_cuda_home_names_the_directory_it_meant() -> None:
    facts = make_facts(**{**NO_TOOLKIT, "toolkits": (C130,), "env": {"CUDA_HOME": "/x:" + C130[0]}})
    (f,) = evaluate(facts)[0]
    assert "is a ':'-separated list" in f.explanation
    assert "CUDA_HOME=/usr/local/cuda-13.0 would name the installed toolkit" in f.explanation


def test_runtime_only_tree_is_named() -> None:
    runtime = toolkit("/usr/local/cuda", "13.0", exists=False, executable=False)
    runtime = runtime.__class__(**{**runtime.__dict__, "version": None, "cudart": "/lib"})
    facts = make_facts(**{**NO_TOOLKIT, "extra_toolkits": (runtime,), "usr_local_cuda": None})
    facts = facts.__class__(
        **{
            **facts.__dict__,
            "usr_local_cuda": "/usr/local/cuda",
            "contexts": tuple(
                c.__class__(**{**c.__dict__, "usr_local_cuda_exists": True}) for c in facts.contexts
            ),
        }
    )
    (f,) = evaluate(facts)[0]
    assert "its default /usr/local/cuda" in f.explanation
    assert "CUDA runtime tree without a compiler" in f.explanation


@pytest.mark.parametrize(
    ("provided", "target", "ok"),
    [
        ("12.0f", "12.0f", True),
        ("12.0f", "12.1a", True),  # f builds serve later minors of the major
        ("9.0a", "9.0a", True),
        ("10.0a", "10.3a", False),  # a builds only their exact capability
        ("8.0", "8.6", True),
        ("8.9", "8.6", False),
        ("12.0f", "10.0a", False),
    ],
)
def test_provider_serves(provided: str, target: str, ok: bool) -> None:
    assert serves(provided, target) is ok


def test_provider_without_the_target_arch_does_not_cover() -> None:
    got = coverage("0.7.2", "0.7.2+cu130", ("10.1a",), "x86_64", {})
    assert got.covered is False
    assert "none of which serves 10.1a" in got.reason


def test_aot_wheels_of_0_2_need_no_nvcc() -> None:
    assert coverage("0.2.5+cu124torch2.6", None, ("9.0a",), "x86_64", {}).covered is True
    assert coverage("0.2.5", None, ("9.0a",), "x86_64", {}).covered is False


# -- what-if -----------------------------------------------------------------------------------


def _fixes(kwargs: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    f = diagnose(make_facts(**kwargs)).finding(ID)
    assert f is not None
    return {x.id: x.resolves for x in f.fixes}


def test_whatif_no_toolkit_pip_and_apt_resolve_it() -> None:
    assert _fixes(NO_TOOLKIT) == {
        "install-cuda-toolkit-pip": (ID,),
        "install-cuda-toolkit-apt": (ID,),
    }


def test_whatif_malformed_home_points_at_the_installed_toolkit() -> None:
    fixes = _fixes({**NO_TOOLKIT, "toolkits": (C130,), "env": {"CUDA_HOME": C130[0] + "/bin"}})
    assert list(fixes) == [
        "use-installed-toolkit",
        "install-cuda-toolkit-pip",
        "install-cuda-toolkit-apt",
    ]
    assert set(fixes.values()) == {(ID,)}
    first = diagnose(
        make_facts(**{**NO_TOOLKIT, "toolkits": (C130,), "env": {"CUDA_HOME": C130[0] + "/bin"}})
    ).finding(ID)
    assert dict(first.fixes[0].params) == {"path": C130[0]}


PIP_DRY_RUN = r"""
set -e
if [ -x /venv/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc ]; then
  echo '@@dt unchanged /venv/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc already installed'
else
  : > /venv/lib/python3.12/site-packages/nvidia-cu13.detective-tui-20261129-120000.absent
  /venv/bin/python3 -m pip install --disable-pip-version-check 'cuda-toolkit[nvcc,cudart,crt,nvvm,cccl]==13.0.2'
  [ -x /venv/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc ] || { echo 'pip finished but /venv/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc is missing' >&2; exit 1; }
  echo '@@dt changed installed cuda-toolkit[nvcc,cudart,crt,nvvm,cccl]==13.0.2'
fi
-----
set -e
if [ -f /venv/bin/activate ]; then
f=/venv/bin/activate
b='# >>> detective-tui cuda >>>
export CUDA_HOME=/venv/lib/python3.12/site-packages/nvidia/cu13
export PATH=/venv/lib/python3.12/site-packages/nvidia/cu13/bin:"$PATH"
# <<< detective-tui cuda <<<'
if [ -f "$f" ] && grep -qxF '# >>> detective-tui cuda >>>' "$f" && ! grep -qxF '# <<< detective-tui cuda <<<' "$f"; then printf '%s %s\n' "$f" 'has a detective-tui cuda block without its end marker; fix it by hand' >&2; exit 1; fi
if [ -f "$f" ] && [ "$(sed -n '/^# >>> detective-tui cuda >>>$/,/^# <<< detective-tui cuda <<<$/p' "$f")" = "$b" ]; then
  echo '@@dt unchanged block cuda already in place'
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
  if [ -f "$f" ]; then sed '/^# >>> detective-tui cuda >>>$/,/^# <<< detective-tui cuda <<<$/d' "$f" > "$t"; fi
  if [ -s "$t" ] && [ -n "$(tail -c 1 "$t")" ]; then echo >> "$t"; fi
  printf '%s\n' "$b" >> "$t"
  mv -f "$t" "$f"
  echo '@@dt changed block cuda written'
fi
else
  echo '@@dt unchanged no activate script at /venv/bin/activate'
fi
"""


def test_pip_fix_dry_run_is_exact_and_verifies_the_finding() -> None:
    facts = make_facts(**NO_TOOLKIT, packages={"nvidia-cuda-runtime": "13.0.96"})
    host = Host(name="pro6000", ssh="root@10.0.0.7")
    plan = build_plan(facts, host, "install-cuda-toolkit-pip", {}, stamp="20261129-120000")
    assert "\n-----\n".join(plan.preview_commands()) == PIP_DRY_RUN.strip("\n")
    assert ID in plan.verify_gone
    undo = plan.steps[0].undo or ""
    assert "pip uninstall -y nvidia-cuda-nvcc nvidia-cuda-crt nvidia-nvvm nvidia-cuda-cccl" in undo


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
    hosts = json.loads(capsys.readouterr().out)
    return code, {h["host"]: h for h in hosts}


SHAPES = {
    "no-toolkit": (jit_without_nvcc(), True),
    "runtime-image": (jit_without_nvcc(runtime_cuda=True), True),
    "home-ends-in-bin": (jit_without_nvcc(cuda_home="/usr/local/cuda-13.0/bin"), True),
    "home-list": (jit_without_nvcc(cuda_home=":/usr/local/cuda"), True),
    "jit-cache": (jit_without_nvcc(jit_cache="0.6.8+cu130"), False),
}


def _check(code: int, hosts: dict[str, dict]) -> None:
    assert code == exitcodes.CRITICAL
    for name, (_spec, fires) in SHAPES.items():
        host = hosts[name]
        ids = {f["id"]: f["severity"] for f in host["findings"]}
        assert ids == ({ID: "critical"} if fires else {}), (name, ids)
        (fi,) = host["flashinfer"]
        assert fi["check_cuda_arch"] == "pass" and fi["target_cuda_archs"] == ["12.0f"]
        if fires:
            (f,) = host["findings"]
            assert "sglang.launch_server" in f["explanation"]  # judged in the server's env
            # the fake venv has no pip: the pip toolkit install adds it first (issue 22 item 10);
            # the apt install is not offered on a root: tree (dpkg and apt-get would run on
            # this machine)
            assert [x["id"] for x in f["fixes"]] == ["install-cuda-toolkit-pip"]
            assert "-m ensurepip --default-pip" in f["fixes"][0]["commands"][0]


def test_fake_hosts_locally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inv = _inventory(tmp_path, {name: spec for name, (spec, _f) in SHAPES.items()})
    code, hosts = _diagnose(capsys, inv)
    _check(code, hosts)
    assert hosts["no-toolkit"]["flashinfer"][0]["compiles"] is False
    assert hosts["home-list"]["flashinfer"][0]["compiles"] is None  # a relative nvcc path
    toolkits = {t["home"]: t for t in hosts["runtime-image"]["facts"]["toolkits"]}
    runtime = toolkits["/usr/local/cuda"]
    assert (runtime["exists"], runtime["home_exists"]) == (False, True)
    assert runtime["cudart"] == "/usr/local/cuda/lib64/libcudart.so.13.0.96"
    (bin_home,) = hosts["home-ends-in-bin"]["facts"]["toolkits"]
    assert (bin_home["home"], bin_home["home_exists"]) == ("/usr/local/cuda-13.0/bin", False)


def test_fake_hosts_over_real_sshd(
    ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = _inventory(tmp_path, {n: s for n, (s, _f) in SHAPES.items()}, ssh=ssh_env.alias)
    _check(*_diagnose(capsys, inv))
