"""PyTorch's package indexes: one per CUDA variant (``cu130``, ``cu128``, ``cpu``).

A torch whose version carries a local tag (``2.9.1+cu130``) came from the index of that
variant; torchvision, torchaudio and xformers builds for it are published there too
(``shared/knowledge/cuda-facts.md`` §5.1). Index URL pattern from the same section.

``$DETECTIVE_TUI_TORCH_INDEX`` replaces PyTorch's own host (a mirror, an air-gapped fleet's
repository, a directory of wheels): the URL of the per-variant indexes with ``{variant}`` where
the variant goes (``https://pypi.example.internal/pytorch/{variant}/simple``); a URL without
it gets ``/{variant}`` appended. It is read when a plan is built, so the preview, the journal
and the undo all carry the URL that really runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from packaging.version import InvalidVersion, Version

TORCH_INDEX = "https://download.pytorch.org/whl/{variant}"
INDEX_ENV = "DETECTIVE_TUI_TORCH_INDEX"
SCHEMES = ("https://", "http://", "file://")


class IndexSettingError(ValueError):
    """``$DETECTIVE_TUI_TORCH_INDEX`` is not a usable index URL (the message says why)."""


def variant(torch_version: str | None) -> str | None:
    """``cu130``, ``cpu``, ``rocm6.4`` — the local tag of a torch version, if any."""
    try:
        local = Version(torch_version).local if torch_version else None
    except InvalidVersion:
        return None
    return local or None


def index_template(environ: Mapping[str, str] = os.environ) -> str:
    """The per-variant index URL with ``{variant}``: the override, else PyTorch's own."""
    value = environ.get(INDEX_ENV, "").strip()
    if not value:
        return TORCH_INDEX
    if not value.startswith(SCHEMES) or any(c.isspace() for c in value):
        raise IndexSettingError(
            f"{INDEX_ENV}={value!r} is not an index URL: give one starting with "
            f"{', '.join(SCHEMES)} and without spaces, e.g. "
            "https://mirror.example/pytorch/{variant} (or unset it for PyTorch's own indexes)"
        )
    if "{variant}" not in value:
        value = value.rstrip("/") + "/{variant}"
    rest = value.replace("{variant}", "")
    if "{" in rest or "}" in rest:
        raise IndexSettingError(
            f"{INDEX_ENV}={value!r}: the only placeholder it may hold is {{variant}} (cu128, cpu …)"
        )
    return value


def index_url(variant_name: str, environ: Mapping[str, str] = os.environ) -> str:
    return index_template(environ).replace("{variant}", variant_name)
