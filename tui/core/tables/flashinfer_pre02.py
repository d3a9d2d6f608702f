"""FlashInfer before 0.2: prebuilt kernels, no JIT — which GPUs its wheels have kernels for.

Releases 0.1.0 – 0.1.6 shipped their kernels compiled into per-torch/CUDA wheels
(``flashinfer-0.1.6+cu124torch2.4``); nothing is compiled at run time, so a GPU the wheels were
not built for gets no kernel at all. The arch list is the ``TORCH_CUDA_ARCH_LIST`` of the
release workflow at each tag (``.github/workflows/release_wheel.yml`` in flashinfer-ai/
flashinfer), read from the repository at that tag; ``+PTX`` adds PTX of the last entry, which
the driver JIT-compiles for newer GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from tui.core.tables import support_matrix

# the newest FlashInfer release the replay was checked against (tests/test_oracle_flashinfer.py)
NEWEST_READ = "0.7.2.post1"


@dataclass(frozen=True)
class Prebuilt:
    first: str
    last: str
    arch_list: str  # TORCH_CUDA_ARCH_LIST as the workflow sets it
    source: str

    @property
    def targets(self) -> tuple[str, ...]:
        """``torch.cuda.get_arch_list()`` spelling: sm_80 … compute_90."""
        out = []
        for item in self.arch_list.split():
            base = item.removesuffix("+PTX")
            out.append(f"sm_{base.replace('.', '')}")
            if item.endswith("+PTX"):
                out.append(f"compute_{base.replace('.', '')}")
        return tuple(out)

    def runs_on(self, cc: tuple[int, int]) -> bool:
        return support_matrix.torch_runs_on(self.targets, cc)


_SRC = "flashinfer-ai/flashinfer .github/workflows/release_wheel.yml at {tags}"
PREBUILT: tuple[Prebuilt, ...] = (
    Prebuilt("0.1.0", "0.1.5", "8.0 8.9 9.0+PTX", _SRC.format(tags="v0.1.0 … v0.1.5")),
    Prebuilt("0.1.6", "0.1.6", "7.5 8.0 8.9 9.0+PTX", _SRC.format(tags="v0.1.6")),
)


def _base(version: str | None) -> Version | None:
    try:
        return Version(Version(version or "").base_version)
    except InvalidVersion:
        return None


def prebuilt_for(version: str | None) -> Prebuilt | None:
    v = _base(version)
    if v is None:
        return None
    for row in PREBUILT:
        if Version(row.first) <= v <= Version(row.last):
            return row
    return None


def newer_than_read(version: str | None) -> bool:
    v = _base(version)
    return v is not None and v > Version(Version(NEWEST_READ).base_version)
