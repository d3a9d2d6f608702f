"""Small stand-in wheels with real names and versions, and a local package index serving them.

The pip fixes are run with the real pip against these: ``build_wheel`` writes a valid wheel
(``METADATA``, ``WHEEL``, ``RECORD`` with hashes, file modes), ``LocalIndex`` lays wheels out as
PEP 503 simple indexes under one directory (``file://…/<index>/<project>/index.html``), so
``--index-url``/``--extra-index-url file://…`` reach them as pip reaches a mirror. The contents
are what the probe reads, taken from real captures: ``torch/version.py`` of the real wheels
(``__version__``/``cuda`` rewritten for releases not captured), the arch-flags string of
``libtorch_python.so``, ``nvcc --version`` output and the ``CUDART_VERSION`` header lines;
dependencies are real ``Requires-Dist`` pins where the test needs them (the cu128 runtime of
torch 2.8/2.9, ``cuda-toolkit``'s extras, torchvision's ``torch (==…)``), others left out.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import stat
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from tui.demo import fakehost

TORCH_CPU_VERSION_PY = "torch/torch-version.py-2.13.0+cpu-x86_64.py"
TORCH_CU128_VERSION_PY = "torch/torch-version.py-2.8.0+cu128-x86_64-pypi.py"
TORCH_CU130_VERSION_PY = "torch/torch-version.py-2.11.0+cu130-x86_64-pypi.py"
# cuda-toolkit 13.0.2's components (cuda-facts.md §1.1; the real 13.0.x wheels' METADATA)
CUDA_TOOLKIT_1302 = {
    "nvcc": "nvidia-cuda-nvcc==13.0.88",
    "crt": "nvidia-cuda-crt==13.0.88",
    "nvvm": "nvidia-nvvm==13.0.88",
    "cccl": "nvidia-cuda-cccl==13.0.85",
    "cudart": "nvidia-cuda-runtime==13.0.96",
}


@dataclass(frozen=True)
class StandIn:
    name: str  # the project name as PyPI spells it: "nvidia-cuda-runtime-cu12"
    version: str
    files: Mapping[str, str | bytes] = field(default_factory=dict)  # path in site-packages
    requires: Sequence[str] = ()  # Requires-Dist lines
    extras: Mapping[str, Sequence[str]] = field(default_factory=dict)  # extra → requirements
    executables: frozenset[str] = frozenset()  # paths of ``files`` installed with mode 0755
    padding: int = 0  # bytes of a big file (``<first package dir>/lib/padding.bin``), first


def wheel_name(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def _metadata(w: StandIn) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {w.name}", f"Version: {w.version}"]
    lines += [f"Requires-Dist: {r}" for r in w.requires]
    for extra, reqs in w.extras.items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in reqs]
    return "\n".join(lines) + "\n\nA detective-tui test stand-in.\n"


def padding_path(w: StandIn) -> str:
    top = next(iter(w.files)).split("/", 1)[0]
    return f"{top}/lib/padding.bin"


def build_wheel(dest: Path, w: StandIn) -> Path:
    """Write ``w`` as ``<name>-<version>-py3-none-any.whl`` into ``dest``; returns its path.
    ``padding`` zero bytes go first, deflated (a small wheel whose install writes a big file)."""
    dest.mkdir(parents=True, exist_ok=True)
    info = f"{wheel_name(w.name)}-{w.version}.dist-info"
    path = dest / f"{wheel_name(w.name)}-{w.version}-py3-none-any.whl"
    entries: list[tuple[str, bytes, int]] = []
    if w.padding:
        entries.append((padding_path(w), bytes(w.padding), 0o644))
    for rel, content in w.files.items():
        data = content.encode() if isinstance(content, str) else content
        entries.append((rel, data, 0o755 if rel in w.executables else 0o644))
    wheel_text = (
        "Wheel-Version: 1.0\nGenerator: detective-tui-tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n"
    )
    entries += [(f"{info}/METADATA", _metadata(w).encode(), 0o644)]
    entries += [(f"{info}/WHEEL", wheel_text.encode(), 0o644)]
    record = "".join(f"{rel},{_record_hash(data)},{len(data)}\n" for rel, data, _m in entries)
    entries.append((f"{info}/RECORD", (record + f"{info}/RECORD,,\n").encode(), 0o644))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, data, mode in entries:
            zi = zipfile.ZipInfo(rel, date_time=(2025, 11, 29, 12, 0, 0))
            zi.external_attr = (stat.S_IFREG | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
    return path


class LocalIndex:
    """Simple indexes under ``root``: ``add("torch/cu128", wheel…)`` serves them at
    ``url("torch/cu128")``; the wheels themselves lie in ``root/files``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = root / "files"
        self.projects: dict[str, dict[str, list[Path]]] = {}

    def url(self, index: str) -> str:
        return (self.root / index).as_uri()

    def add(self, index: str, *wheels: StandIn) -> None:
        for w in wheels:
            path = build_wheel(self.files, w)
            project = wheel_name(w.name).replace("_", "-").lower()
            self.projects.setdefault(index, {}).setdefault(project, []).append(path)
            self._write_page(index, project)

    def _write_page(self, index: str, project: str) -> None:
        links = []
        for path in self.projects[index][project]:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            href = "file://" + quote(str(path)) + f"#sha256={digest}"
            links.append(f'<a href="{html.escape(href)}">{html.escape(path.name)}</a><br/>')
        page = self.root / index / project / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n")


# -- the stand-ins ----------------------------------------------------------------------------


def _version_py(fixture: str, version: str, cuda: str | None) -> str:
    out = []
    for line in fakehost.fixture_text(fixture).split("\n"):
        if line.startswith("__version__"):
            line = f"__version__ = '{version}'"
        elif line.startswith("cuda:"):
            line = f"cuda: Optional[str] = {cuda!r}"
        out.append(line)
    return "\n".join(out)


def torch(
    version: str,
    *,
    cuda: str | None,
    arch_flags: str | None = None,
    requires: Sequence[str] = (),
    padding: int = 0,
    pypi: bool = False,
) -> StandIn:
    """torch ``version`` (``2.9.1+cu128``): the real ``torch/version.py`` of a build of that
    kind (the 2.13.0+cpu, 2.8.0+cu128 or 2.11.0+cu130 wheel's) with ``__version__`` and
    ``cuda`` set, and the arch flags in a ``libtorch_python.so`` stand-in. ``pypi``: the
    distribution's version is the public one (PyPI's ``2.11.0`` is the ``+cu130`` build)."""
    fixture = (
        TORCH_CPU_VERSION_PY
        if cuda is None
        else (TORCH_CU130_VERSION_PY if cuda.startswith("13.") else TORCH_CU128_VERSION_PY)
    )
    files: dict[str, str | bytes] = {
        "torch/__init__.py": "from torch.version import __version__ as __version__\n",
        "torch/version.py": _version_py(fixture, version, cuda),
    }
    if arch_flags:
        files["torch/lib/libtorch_python.so"] = fakehost.torch_python_lib(arch_flags)
    dist_version = version.split("+")[0] if pypi else version
    return StandIn("torch", dist_version, files, requires=tuple(requires), padding=padding)


def package(
    name: str, version: str, *, module: str | None = None, requires: Sequence[str] = ()
) -> StandIn:
    """A pure-Python stand-in: ``<module>/__init__.py`` and its metadata."""
    mod = module or wheel_name(name)
    files = {f"{mod}/__init__.py": f"__version__ = {version!r}\n"}
    return StandIn(name, version, files, requires=tuple(requires))


def flashinfer(version: str) -> StandIn:
    files = {
        "flashinfer/__init__.py": "",
        "flashinfer/_build_meta.py": f"__version__ = {version!r}\n",
    }
    return StandIn("flashinfer-python", version, files)


def cuda_runtime_cu12(version: str) -> StandIn:
    """nvidia-cuda-runtime-cu12: the cu12 layout (``nvidia/cuda_runtime/lib/libcudart.so.12``)."""
    files: dict[str, str | bytes] = {
        "nvidia/__init__.py": "",
        "nvidia/cuda_runtime/__init__.py": "",
        "nvidia/cuda_runtime/lib/libcudart.so.12": b"\x7fELF\x02\x01\x01" + bytes(range(256)),
    }
    return StandIn("nvidia-cuda-runtime-cu12", version, files)


def cu13_nvcc(version: str, nvcc_fixture: str) -> StandIn:
    """nvidia-cuda-nvcc (13.x): ``nvidia/cu13/bin/nvcc`` (the fake nvcc printing the captured
    ``--version`` output) and its real ``Requires-Dist`` (cuda-facts.md §5.5)."""
    shim = fakehost.NVCC_SHIM
    return StandIn(
        "nvidia-cuda-nvcc",
        version,
        {
            "nvidia/cu13/bin/nvcc": shim,
            "nvidia/cu13/bin/.nvcc-version.out": fakehost.fixture_text(nvcc_fixture),
        },
        requires=("nvidia-nvvm", "nvidia-cuda-runtime", "nvidia-cuda-crt"),
        executables=frozenset({"nvidia/cu13/bin/nvcc"}),
    )


def cu13_runtime(version: str, header_fixture: str) -> StandIn:
    header = fakehost.fixture_text(header_fixture)
    return StandIn(
        "nvidia-cuda-runtime",
        version,
        {"nvidia/cu13/include/cuda_runtime_api.h": header},
    )


def cu13_part(name: str, version: str, rel: str) -> StandIn:
    """nvidia-cuda-crt / nvidia-nvvm / nvidia-cuda-cccl: one file of theirs under nvidia/cu13."""
    return StandIn(name, version, {f"nvidia/cu13/{rel}": f"/* {name} {version} stand-in */\n"})


def cuda_toolkit(version: str, extras: Mapping[str, str]) -> StandIn:
    """NVIDIA's ``cuda-toolkit`` metapackage: no files, one pinned component per extra."""
    return StandIn(
        "cuda-toolkit",
        version,
        {},
        extras={extra: (req,) for extra, req in extras.items()},
    )
