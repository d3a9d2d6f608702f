"""install-cuda-toolkit-pip for real: NVIDIA's CUDA 13 wheels from the package registry into a
throwaway venv on this machine, then the probe and the FlashInfer replay judge the result.

Slow (about 100 MB of wheels the first time; cached in ~/.cache/detective-tui-tests/pip).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from pip_venv import make_venv

from tui.core.facts import DriverInfo, Gpu
from tui.core.fixes import build_plan
from tui.core.hosts import Host
from tui.core.rules.flashinfer_replay import replay
from tui.core.run.fix_envread import judged_facts, read_envs
from tui.core.run.fix_executor import apply_plan
from tui.core.run.runner import Session

pytestmark = pytest.mark.slow

CACHE = Path.home() / ".cache" / "detective-tui-tests"
DRIVER_580 = DriverInfo(state="ok", driver_version="580.95.05", driver_cuda="13.0")
RTX_PRO_6000 = Gpu(index=0, name="NVIDIA RTX PRO 6000 Blackwell Server Edition", compute_cap="12.0")


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    path = tmp_path / "throwaway venv"
    make_venv(path)  # python -m venv, ensurepip's pip copied in (tests/pip_venv.py)
    return path


async def test_pip_toolkit_install_gives_the_venv_a_cuda13_nvcc(venv: Path) -> None:
    python = str(venv / "bin" / "python")
    pip_cache = CACHE / "pip"
    pip_cache.mkdir(parents=True, exist_ok=True)
    host = Host(
        name="pip-box",
        local=True,
        python=(python,),
        env={"PIP_CACHE_DIR": str(pip_cache), "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    async with Session() as session:
        before = (await session.probe(host)).facts
        assert before is not None
        plan = build_plan(before, host, "install-cuda-toolkit-pip", {}, python)
        assert plan.activate == str(venv / "bin" / "activate")
        lines: list[str] = []
        outcome = await apply_plan(session, host, plan, lines.append, before=before)
        assert outcome.applied, "\n".join(lines[-30:])
        assert [s.status for s in outcome.steps] == ["changed", "changed"]
        after = outcome.facts_after
        assert after is not None
        site = next(p for p in after.pythons if p.path == python).site_packages[0]
        home = f"{site}/nvidia/cu13"
        toolkit = after.toolkit_at(home)
        assert toolkit is not None and toolkit.version is not None
        assert toolkit.version.startswith("13."), toolkit

        # The reference host's software on top (no GPU, driver or torch here): FlashInfer
        # 0.6.8 and torch cu130 on an SM 12.0 GPU with driver 580, replayed under the venv
        # as `activate` now leaves it, with the toolkit the probe really found.
        judged = judged_facts(after, plan, await read_envs(session, host, plan))
        py = next(p for p in judged.pythons if p.path == python)
        ctx = judged.context(py.context)
        assert ctx is not None and ctx.vars["CUDA_HOME"] == home
        py = dataclasses.replace(
            py, flashinfer_version="0.6.8", torch_version="2.9.1+cu130", torch_cuda="13.0"
        )
        facts = dataclasses.replace(judged, gpus=(RTX_PRO_6000,), pythons=(py,), driver=DRIVER_580)
        result = replay(facts, py, ctx)
        assert (result.cuda_home, result.jit_cuda) == (home, "13.0")
        assert result.target_cuda_archs == ("12.0f",)
        assert result.check_cuda_arch == "pass"

        again = await apply_plan(session, host, plan, before=after)
        assert [s.status for s in again.steps] == ["unchanged", "unchanged"]
        assert again.record is None
