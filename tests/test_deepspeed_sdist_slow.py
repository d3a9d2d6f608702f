"""``tests/fixtures/deepspeed`` and what jit-nvcc-missing cites, against the real DeepSpeed sdist.

Fetches ``deepspeed==0.19.8``'s sdist (2 MB) from the package index once, where ``pip download
--no-deps --no-binary=:all:`` would (``tests/pip_resolve.py``; checked against the index's
sha256), into the test cache, and reads from it: the fixture is a byte copy of its
``git_version_info_installed.py``; ``setup.py`` writes that file from ``DS_BUILD_OPS``;
``OpBuilder.load()`` JIT-builds an op not in ``installed_ops``; ``installed_cuda_version()``
raises the MissingCUDAException texts the finding quotes; the engine's Adam is FusedAdam.
"""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path

import pytest
from wheel_ranges import CACHE_ROOT, opener_for, resolve

pytestmark = pytest.mark.slow

REQ = "deepspeed==0.19.8"
CACHE = CACHE_ROOT / "deepspeed-sdist"
FIXTURE = (
    Path(__file__).parent
    / "fixtures/deepspeed/deepspeed-0.19.8-sdist-git_version_info_installed.py"
)


def sdist() -> tarfile.TarFile:
    path = CACHE / "deepspeed-0.19.8.tar.gz"
    if not path.is_file():
        found = resolve([REQ], ("--no-binary=:all:",))[REQ]
        with opener_for(found).open(found.url, timeout=found.timeout) as resp:
            data = resp.read()
        assert hashlib.sha256(data).hexdigest() == found.sha256
        CACHE.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(".part")
        part.write_bytes(data)
        part.replace(path)
    return tarfile.open(path)


def member(tar: tarfile.TarFile, name: str) -> str:
    handle = tar.extractfile(f"deepspeed-0.19.8/{name}")
    assert handle is not None
    return handle.read().decode()


def test_the_fixture_and_the_cited_code() -> None:
    with sdist() as tar:
        assert member(tar, "deepspeed/git_version_info_installed.py") == FIXTURE.read_text()
        setup = member(tar, "setup.py")
        builder = member(tar, "deepspeed/ops/op_builder/builder.py")
        engine = member(tar, "deepspeed/runtime/engine.py")
        fused = member(tar, "deepspeed/ops/adam/fused_adam.py")
    assert "BUILD_OP_DEFAULT = int(get_env_if_set('DS_BUILD_OPS', BUILD_OP_PLATFORM))" in setup
    assert "with open('deepspeed/git_version_info_installed.py', 'w') as fd:" in setup
    assert (
        "if installed_ops.get(self.name, False) and accelerator_name == get_accelerator()._name:"
        in builder
    )
    assert "return self.jit_load(verbose)" in builder
    assert '"CUDA_HOME does not exist, unable to compile CUDA op(s)"' in builder
    assert 'f"Unable to run {nvcc}, unable to compile CUDA op(s): {err}"' in builder
    assert "return FusedAdam, {'adam_w_mode': adam_w_mode}" in engine
    assert "FusedAdamBuilder().load()" in fused
