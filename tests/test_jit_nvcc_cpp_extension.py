"""jit-nvcc-missing for builds through torch.utils.cpp_extension (issue 22, item 8).

DeepSpeed installed from its PyPI sdist without ``DS_BUILD_OPS`` prebuilds no op: the real
``deepspeed/git_version_info_installed.py`` of ``deepspeed-0.19.8.tar.gz`` (``tests/fixtures/
deepspeed``) has every op of ``installed_ops`` ``False``, and ``OpBuilder.load()`` then
``jit_load()``s it through ``torch.utils.cpp_extension`` — needing ``$CUDA_HOME/bin/nvcc`` as
torch's ``_find_cuda_home()`` resolves it. The host: an RTX PRO 6000 container (the real
580.95.05 capture) with torch 2.11.0+cu130 from the wheels, no FlashInfer, a runtime-only
``/usr/local/cuda`` (``lib64/libcudart``, no ``bin/nvcc``) and the nvidia-cuda-nvcc wheel's nvcc in
the venv, off PATH. The real probe reads it, locally and over the real sshd.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest
from fakehost_runs import diagnose_json, entry, probed

from tui.core import exitcodes
from tui.core.facts.parsers import parse_deepspeed_installed
from tui.core.judge.diagnosis import diagnose
from tui.demo import fakehost, neighbours

ID = "jit-nvcc-missing"
DS_FILE = (
    Path(__file__).parent
    / "fixtures/deepspeed/deepspeed-0.19.8-sdist-git_version_info_installed.py"
)


def deepspeed_host(*, toolkit: bool = False, deepspeed: bool = True) -> fakehost.FakeHostSpec:
    """The runtime image with DeepSpeed 0.19.8 in the venv (``deepspeed`` False: without it);
    ``toolkit``: a CUDA 13.0 toolkit at /usr/local/cuda-13.0 (the near miss)."""
    base = neighbours.jit_without_nvcc(runtime_cuda=not toolkit)
    (venv,) = base.venvs
    dists = tuple(d for d in venv.dists if d[0] not in ("sglang",))
    venv = dataclasses.replace(
        venv,
        dists=(*dists, ("deepspeed", "0.19.8")) if deepspeed else dists,
        flashinfer=None,
        pip_nvcc_fixture="nvcc/nvcc-13.0.88.txt",
        site_files={
            "deepspeed/__init__.py": "",
            "deepspeed/git_version_info_installed.py": DS_FILE.read_text(),
        }
        if deepspeed
        else {},
    )
    spec = dataclasses.replace(
        base, hostname="pro6000-deepspeed", venvs=(venv,), processes=(), files={}
    )
    if toolkit:
        tk = fakehost.ToolkitSpec("/usr/local/cuda-13.0", "nvcc/nvcc-13.0.88.txt", "13.0.96")
        spec = dataclasses.replace(spec, toolkits=(tk,), usr_local_cuda="/usr/local/cuda-13.0")
    return spec


def test_the_real_file_says_nothing_is_prebuilt() -> None:
    parsed = parse_deepspeed_installed(DS_FILE.read_text())
    assert parsed is not None
    ops, accelerator = parsed
    assert accelerator == "cpu"
    assert ("fused_adam", False) in ops and not any(built for _, built in ops)
    assert parse_deepspeed_installed("version='1'\n") is None


def test_the_probe_reads_it_and_the_rule_fires(tmp_path: Path) -> None:
    f = probed(fakehost.build_fake_host(tmp_path / "h", deepspeed_host()))
    (py,) = [p for p in f.pythons if p.source == "inventory"]
    assert py.flashinfer_version is None and py.packages["deepspeed"] == "0.19.8"
    assert py.deepspeed_accelerator == "cpu"
    assert py.deepspeed_ops is not None and ("fused_adam", False) in py.deepspeed_ops
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    assert finding.severity == "critical"
    assert finding.title.startswith("DeepSpeed must build its CUDA ops for NVIDIA RTX PRO 6000")
    text = finding.explanation
    assert "OpBuilder.load() JIT-builds each op on first use" in text
    assert (
        "torch.utils.cpp_extension takes CUDA_HOME=/usr/local/cuda (the default /usr/local/cuda)"
        in text
    )
    assert "a CUDA runtime tree without a compiler" in text
    assert "MissingCUDAException: Unable to run /usr/local/cuda/bin/nvcc" in text
    site = f"/opt/sglang/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    pip_nvcc = f"{site}/nvidia/cu13"
    assert f"A toolkit is installed at {pip_nvcc}, where torch does not look" in text
    fixes = {x.id: dict(x.params) for x in finding.fixes}
    assert fixes["use-installed-toolkit"] == {"path": pip_nvcc}
    assert "install-cuda-toolkit-pip" in fixes
    assert all(ID in x.resolves for x in finding.fixes)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("a toolkit at /usr/local/cuda", {"toolkit": True}), ("no DeepSpeed", {"deepspeed": False})],
)
def test_near_misses_stay_silent(tmp_path: Path, name: str, kwargs: dict) -> None:
    f = probed(fakehost.build_fake_host(tmp_path / "h", deepspeed_host(**kwargs)))
    assert [x for x in diagnose(f).findings if x.id == ID] == [], name


@pytest.mark.sshd
def test_over_real_sshd(ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "ds", deepspeed_host(), ssh=ssh_env.alias),
        entry(tmp_path, "ds-toolkit", deepspeed_host(toolkit=True), ssh=ssh_env.alias),
    )
    assert code == exitcodes.CRITICAL
    assert [[f["id"] for f in h["findings"] if f["id"] == ID] for h in hosts] == [[ID], []]
