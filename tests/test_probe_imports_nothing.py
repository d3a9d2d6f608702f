"""The fast probe reads torch and FlashInfer from files; it never imports them (nor runs
their ``.pth`` hooks). Here importing either would leave a marker file behind."""

from __future__ import annotations

from pathlib import Path

from fakehost_runs import run_probe

from tui.demo import fakehost

TRAP = "import pathlib; pathlib.Path({marker!r}).write_text('{name} was imported')\n"


def test_probe_never_imports_torch_or_flashinfer(tmp_path: Path) -> None:
    fake = fakehost.build_fake_host(tmp_path / "root", fakehost.reference_ct200())
    (site,) = (fake.root / "root/venv_sglang211/lib").glob("python3*/site-packages")
    markers = []
    for name in ("torch", "flashinfer"):
        marker = tmp_path / f"{name}-imported"
        markers.append(marker)
        (site / name).mkdir(exist_ok=True)
        (site / name / "__init__.py").write_text(TRAP.format(marker=str(marker), name=name))
    pth_marker = tmp_path / "pth-ran"
    markers.append(pth_marker)
    (site / "zz-trap.pth").write_text(TRAP.format(marker=str(pth_marker), name="a .pth hook"))

    facts, _ = run_probe(fake)

    venv = [p for p in facts.pythons if p.path == "/root/venv_sglang211/bin/python3"]
    assert venv  # the inventory's interpreter and the service's: both read from files
    assert {(p.torch_version, p.flashinfer_version) for p in venv} == {("2.9.1+cu130", "0.6.8")}
    assert [m.name for m in markers if m.exists()] == []
