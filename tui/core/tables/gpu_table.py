"""GPU product name → compute capability, for when nvidia-smi cannot report ``compute_cap``.

Data, not logic: the first pattern that matches the name (case-insensitive regex search) wins,
so more specific names come first (``GH200`` before ``H200``, ``GB200`` before ``B200``).
Source: developer.nvidia.com/cuda-gpus and the MIG guide, as summarised in
``shared/knowledge/cuda-facts.md`` §4. Truncated table names (``NVIDIA RTX PRO 6000 Blac...``)
are covered by patterns that stop before the truncation point.
"""

from __future__ import annotations

import re

NAME_TO_CC: tuple[tuple[str, str], ...] = (
    # Blackwell workstation / consumer (SM 12.0) and GB10 (SM 12.1)
    (r"\bGB10\b", "12.1"),
    (r"RTX PRO \d{4}( SFF)? Blac", "12.0"),
    (r"GeForce RTX 50[5-9]0", "12.0"),
    (r"RTX 50[5-9]0", "12.0"),
    # Blackwell data centre
    (r"\bG?B300\b", "10.3"),
    (r"\bG?B200\b", "10.0"),
    (r"\bB100\b", "10.0"),
    (r"\bThor\b", "11.0"),
    # Hopper
    (r"\bGH200\b", "9.0"),
    (r"\bH(100|200|800|20)\b", "9.0"),
    # Ada
    (r"\bL(4|20|40S?)\b", "8.9"),
    (r"RTX \d{4} Ada", "8.9"),
    (r"GeForce RTX 40[5-9]0", "8.9"),
    # Ampere
    (r"\bA(100|30|800)\b", "8.0"),
    (r"\bA(40|10G?|16|2)\b", "8.6"),
    (r"RTX A\d{4}", "8.6"),
    (r"GeForce RTX 30[5-9]0", "8.6"),
    (r"\bOrin\b", "8.7"),
    # Turing, Volta
    (r"\bT4\b", "7.5"),
    (r"GeForce RTX 20[6-8]0", "7.5"),
    (r"Quadro RTX", "7.5"),
    (r"TITAN RTX", "7.5"),
    (r"\bT(400|600|1000)\b", "7.5"),
    (r"\bXavier\b", "7.2"),
    (r"\bV100\b", "7.0"),
    (r"\bGV100\b", "7.0"),
    (r"TITAN V\b", "7.0"),
    # Pascal, Maxwell, Kepler (CUDA 13 cannot target them; 12.x drops Kepler)
    (r"\bP100\b", "6.0"),
    (r"\bP(4|40|6)\b", "6.1"),
    (r"GeForce GTX 10[5-8]0", "6.1"),
    (r"\bM(4|6|40|60)\b", "5.2"),
    (r"\bK80\b", "3.7"),
)

_COMPILED = tuple((re.compile(p, re.IGNORECASE), cc) for p, cc in NAME_TO_CC)


def cc_for_name(name: str) -> str | None:
    """The compute capability ("12.0") for a GPU product name, or None if unknown."""
    for pattern, cc in _COMPILED:
        if pattern.search(name):
            return cc
    return None
