"""A compiled torch extension is found by what its dist-info installed, not by its name (issue 22,
item 7): sgl-kernel was renamed sglang-kernel, and a closed list of names left the new one
uninspected. The probe reads the RECORD of each other dist-info (bounded) and inspects it as an
extension when a .so it lists needs a torch library (DT_NEEDED libc10/libtorch*).

The slow test builds its hosts from real wheels' files: torchvision 0.24.1's ``_C.so`` (which
needs ``c10::SymInt::maybe_as_int_slow_path() const``, exported by torch 2.9.1's libc10.so and not
2.8.0's) installed under the dist-info names ``sglang-kernel`` and ``sgl-kernel``, against the
real torch libraries of both releases (``tests/test_extension_abi.py`` fetches them). The fast
test is the near miss: a dist-info of another name whose .so is a real ELF of this machine that
links no torch library is not inspected.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_extension_abi import ID, TORCH_LIBS, VISION_SOS, _diagnose, _inventory, _unpacked

from tui.core import exitcodes
from tui.demo.fakehost import VenvSpec, healthy_h100


def _host(torch_dir: Path, so_dir: Path, dist: str) -> object:
    (venv,) = healthy_h100().venvs
    venv = VenvSpec(
        path=venv.path,
        dists=(("torch", torch_dir.name.split("-")[1]), (dist, "0.3.9")),
        records={dist: VISION_SOS},
        site_files={
            **{f"torch/lib/{lib}": torch_dir / "torch" / "lib" / lib for lib in TORCH_LIBS},
            **{so: so_dir / so for so in VISION_SOS},
        },
    )
    return replace(healthy_h100(), venvs=(venv,))


def _extensions(hosts: dict[str, dict], name: str) -> list[str]:
    return [e["name"] for e in hosts[name]["facts"]["pythons"][0]["extensions"]]


def test_a_dist_info_whose_so_links_no_torch_is_not_inspected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = Path(sys.executable).resolve().parent.parent / "lib"
    lib = next(iter(sorted(real.glob("libpython3*.so*"))), None) or Path(
        "/lib/x86_64-linux-gnu/libz.so.1"
    )
    if not lib.is_file():
        pytest.skip("no shared library of this machine to stand for a non-torch .so")
    (venv,) = healthy_h100().venvs
    venv = replace(
        venv,
        dists=(*venv.dists, ("sglang-kernel", "0.3.9")),
        records={"sglang-kernel": ("sgl_kernel/common_ops.so",)},
        site_files={**venv.site_files, "sgl_kernel/common_ops.so": lib},
    )
    code, hosts = _diagnose(
        capsys, _inventory(tmp_path, {"h": replace(healthy_h100(), venvs=(venv,))})
    )
    assert code == exitcodes.OK, hosts["h"]["findings"]
    assert "sglang-kernel" not in _extensions(hosts, "h")


@pytest.mark.slow
def test_renamed_extension_is_inspected_by_its_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vision = _unpacked("torchvision-0.24.1")
    old, new = _unpacked("torch-2.8.0"), _unpacked("torch-2.9.1")
    specs = {
        "renamed": _host(old, vision, "sglang-kernel"),
        "old-name": _host(old, vision, "sgl-kernel"),
        "ok": _host(new, vision, "sglang-kernel"),
    }
    code, hosts = _diagnose(capsys, _inventory(tmp_path, specs))
    assert code == exitcodes.CRITICAL
    for name, dist in (("renamed", "sglang-kernel"), ("old-name", "sgl-kernel")):
        # the real torch libraries are aarch64 CPU builds: torch-cpu-build fires on both alike
        got = {x["id"]: x["severity"] for x in hosts[name]["findings"]}
        assert got == {ID: "critical", "torch-cpu-build": "critical"}
        (f,) = [x for x in hosts[name]["findings"] if x["id"] == ID]
        assert dist in f["title"] and "undefined symbol" in f["explanation"]
        (ext,) = hosts[name]["facts"]["pythons"][0]["extensions"]
        assert ext["missing_sample"] == ["_ZNK3c106SymInt22maybe_as_int_slow_pathEv"]
    assert [x["id"] for x in hosts["ok"]["findings"]] == ["torch-cpu-build"]
    (ok,) = hosts["ok"]["facts"]["pythons"][0]["extensions"]
    assert (ok["name"], ok["so_read"], ok["missing_symbols"]) == ("sglang-kernel", 2, 0)
