"""PyTorch's package indexes: one per CUDA variant (``cu130``, ``cu128``, ``cpu``).

A torch whose version carries a local tag (``2.9.1+cu130``) came from the index of that
variant; torchvision, torchaudio and xformers builds for it are published there too
(``shared/knowledge/cuda-facts.md`` §5.1). Index URL pattern from the same section.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

TORCH_INDEX = "https://download.pytorch.org/whl/{variant}"


def variant(torch_version: str | None) -> str | None:
    """``cu130``, ``cpu``, ``rocm6.4`` — the local tag of a torch version, if any."""
    try:
        local = Version(torch_version).local if torch_version else None
    except InvalidVersion:
        return None
    return local or None


def index_url(variant_name: str) -> str:
    return TORCH_INDEX.format(variant=variant_name)
