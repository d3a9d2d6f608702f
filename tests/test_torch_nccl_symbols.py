"""wheel-file-conflict names the NCCL symbol torch's libtorch_cuda.so lacks (issue 22, item 6).

The NCCL wheels' file lists are real (``tests/fixtures/packaging``: nvidia-nccl-cu12 2.27.5 and
nvidia-nccl-cu13 2.27.7 both install ``nvidia/nccl/lib/libnccl.so.2``). The libraries are small
real ELF files built here with ``cc`` — the real ones are 210–430 MB: a ``libtorch_cuda.so``
needing ``libnccl.so.2`` through a ``DT_RPATH`` ``$ORIGIN/../../nvidia/nccl/lib`` (as torch's
wheels carry it, ``readelf -d`` of 2.10.0/2.11.0) and leaving the NCCL symbols of the public
threads undefined (``ncclCommResume``: pytorch/pytorch#186591; ``ncclMemFree``:
rwth-i6/returnn#1802), and two ``libnccl.so.2`` builds, one exporting them, one not. The real
probe reads only their dynamic symbol tables, locally and over the real sshd.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakehost_runs import diagnose_json, entry, probed
from test_wheel_file_conflict import NCCL, WHEELS, _installed_last, filelist

from tui.core.judge.diagnosis import diagnose
from tui.demo import fakehost

ID = "wheel-file-conflict"
NEEDED = ("ncclCommInitRankConfig", "ncclGetVersion", "ncclCommResume", "ncclMemFree")
OLD = ("ncclCommInitRankConfig", "ncclGetVersion")  # the build without the newer two

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler (cc)")


def _cc(out: Path, source: str, *flags: str) -> Path:
    src = out.with_suffix(".c")
    src.write_text(source)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(out), str(src), *flags], check=True)
    return out


@pytest.fixture(scope="module")
def elves(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("elves")
    built = {}
    for name, exports in (("full", NEEDED), ("old", OLD)):
        (d / name).mkdir()
        source = "".join(f"int {n}(void) {{ return 0; }}\n" for n in exports)
        built[name] = _cc(d / name / "libnccl.so.2", source, "-Wl,-soname,libnccl.so.2")
    calls = "".join(f"extern int {n}(void);\n" for n in NEEDED)
    body = "int torch_nccl(void) { return " + " + ".join(f"{n}()" for n in NEEDED) + "; }\n"
    torch = _cc(
        d / "libtorch_cuda.so",
        calls + body,
        f"-L{d / 'full'}",
        "-l:libnccl.so.2",
        "-Wl,--disable-new-dtags,-rpath,$ORIGIN/../../nvidia/nccl/lib",
    )
    return {**built, "torch": torch}


def host(elves: dict[str, Path], nccl: str) -> fakehost.FakeHostSpec:
    """The healthy H100 node (torch 2.8.0+cu128) with both NCCL wheels' RECORDs, the built
    libtorch_cuda.so and the ``nccl`` libnccl.so.2 at nvidia/nccl/lib."""
    base = fakehost.healthy_h100()
    (venv,) = base.venvs
    venv = replace(
        venv,
        dists=(*venv.dists, *WHEELS.items()),
        records={d: filelist(d, v) for d, v in WHEELS.items()},
        site_files={"torch/lib/libtorch_cuda.so": elves["torch"], NCCL: elves[nccl]},
    )
    return replace(base, venvs=(venv,))


def test_the_built_files_are_what_the_test_says(elves: dict[str, Path]) -> None:
    dyn = subprocess.run(["readelf", "-d", str(elves["torch"])], capture_output=True, text=True)
    assert "(NEEDED)             Shared library: [libnccl.so.2]" in dyn.stdout
    assert "(RPATH)              Library rpath: [$ORIGIN/../../nvidia/nccl/lib]" in dyn.stdout


def test_the_probe_names_the_missing_symbol(elves: dict[str, Path], tmp_path: Path) -> None:
    fake = fakehost.build_fake_host(tmp_path / "h", host(elves, "old"))
    _installed_last(fake.root, "nvidia-nccl-cu13")
    f = probed(fake)
    (py,) = [p for p in f.pythons if p.source == "inventory"]
    assert py.torch_nccl is not None and py.torch_nccl.endswith("/nvidia/nccl/lib/libnccl.so.2")
    assert (py.torch_nccl_needed, py.torch_nccl_missing) == (4, 2)
    assert set(py.torch_nccl_missing_names) == {"ncclCommResume", "ncclMemFree"}
    (finding,) = [x for x in diagnose(f).findings if x.id == ID]
    assert finding.severity == "critical"
    first = py.torch_nccl_missing_names[0]
    assert finding.title.endswith(f": torch needs {first}, which it lacks")
    assert f"'undefined symbol: {first}'" in finding.explanation
    assert "nvidia-nccl-cu13 was installed last" in finding.explanation


def test_a_file_with_every_symbol_stays_a_warning(elves: dict[str, Path], tmp_path: Path) -> None:
    f = probed(fakehost.build_fake_host(tmp_path / "h", host(elves, "full")))
    (py,) = [p for p in f.pythons if p.source == "inventory"]
    assert (py.torch_nccl_needed, py.torch_nccl_missing) == (4, 0)
    assert [x.severity for x in diagnose(f).findings if x.id == ID] == ["warning"]


@pytest.mark.sshd
def test_over_real_sshd(
    elves: dict[str, Path], ssh_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _code, hosts = diagnose_json(
        tmp_path,
        capsys,
        entry(tmp_path, "old", host(elves, "old"), ssh=ssh_env.alias),
        entry(tmp_path, "full", host(elves, "full"), ssh=ssh_env.alias),
    )
    found = [[f["severity"] for f in h["findings"] if f["id"] == ID] for h in hosts]
    assert found == [["critical"], ["warning"]]
