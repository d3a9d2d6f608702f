"""Node sets (``gpu[001-128]``): the expansion, the errors, and — slow — ClusterShell's own
``NodeSet`` from the package index accepting and refusing exactly the same patterns."""

from __future__ import annotations

import json
import subprocess

import pytest

from tui.core.reach.hostlist import HostlistError, expand, fold, is_pattern

# pattern → names (in the order written), or None when it must be refused
CASES: dict[str, list[str] | None] = {
    "gpu[01-04,07]": ["gpu01", "gpu02", "gpu03", "gpu04", "gpu07"],
    "gpu[1-3]-ib[0-1]": ["gpu1-ib0", "gpu1-ib1", "gpu2-ib0", "gpu2-ib1", "gpu3-ib0", "gpu3-ib1"],
    "gpu[9-10]": ["gpu9", "gpu10"],
    "gpu[099-101]": ["gpu099", "gpu100", "gpu101"],
    "gpu[00-02]": ["gpu00", "gpu01", "gpu02"],
    "gpu[0-2]": ["gpu0", "gpu1", "gpu2"],
    "gpu[007]": ["gpu007"],
    "gpu[1-10/3]": ["gpu1", "gpu4", "gpu7", "gpu10"],
    "a[1-2],b3": ["a1", "a2", "b3"],
    "x[0-2]y": ["x0y", "x1y", "x2y"],
    "[1-2]gpu": ["1gpu", "2gpu"],
    "dgx-a[1-2],dgx-b[1-2]": ["dgx-a1", "dgx-a2", "dgx-b1", "dgx-b2"],
    "plain": ["plain"],
    "gpu[01-100]": None,  # padding length mismatch
    "gpu[8-011]": None,
    "gpu[3-1]": None,  # backwards
    "gpu[]": None,
    "gpu[1-2": None,
    "gpu1-2]": None,
    "dgx-[a-c]": None,  # letters: ClusterShell refuses them too
    "dgx-[a-c][1-2]": None,
    "dgx-[1-2][1-2]": None,  # touching brackets
    "gpu[1-3/0]": None,
    "gpu[1/2]": None,
    "gpu[1-2],": None,
    "gpu[x]": None,
}


@pytest.mark.parametrize("pattern", list(CASES))
def test_expand(pattern: str) -> None:
    want = CASES[pattern]
    if want is None:
        with pytest.raises(HostlistError, match=pattern.replace("[", r"\[").replace("]", r"\]")):
            expand(pattern)
    else:
        assert expand(pattern) == want


def test_zero_padding_of_a_large_range() -> None:
    names = expand("gpu[001-128]")
    assert len(names) == 128 and names[0] == "gpu001" and names[-1] == "gpu128"


def test_errors_say_what_to_write() -> None:
    with pytest.raises(HostlistError, match=r"letter range.*dgx-a\[1-2\],dgx-b\[1-2\]"):
        expand("dgx-[a-c][1-2]")
    with pytest.raises(HostlistError, match=r"dgx-\[1-2\]-\[1-2\]"):
        expand("dgx-[1-2][1-2]")
    with pytest.raises(HostlistError, match=r"same number of digits \(e.g. 001-100\)"):
        expand("gpu[01-100]")
    with pytest.raises(HostlistError, match=r"'gpu02' more than once"):
        expand("gpu[01-03],gpu02")
    with pytest.raises(HostlistError, match="more than 100000"):
        expand("gpu[1-1000000]")


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("gpu[01-04]", True),
        ("root@gpu[1-2]", True),
        ("a,b", True),
        ("[::1]", False),
        ("root@[::1]:2222", False),
        ("[fe80::1%eth0]:22", False),
        ("host:22", False),
        ("alias", False),
    ],
)
def test_is_pattern_leaves_ipv6_addresses_alone(text: str, pattern: bool) -> None:
    assert is_pattern(text) is pattern


FOLDS = {
    "gpu001 gpu002 gpu003 gpu007": ["gpu[001-003,007]"],
    "gpu8 gpu9 gpu10": ["gpu[8-10]"],
    "gpu08 gpu09 gpu10 gpu100": ["gpu[08-10]", "gpu100"],
    "a b1 b2 c01": ["a", "b[1-2]", "c01"],
    "r1n1 r1n2 r2n1": ["r1n[1-2]", "r2n1"],
    "x099 x100 x101 x1000": ["x[099-101]", "x1000"],
    "n3 n1 n2 n1": ["n[1-3]"],
}


@pytest.mark.parametrize("names", list(FOLDS))
def test_fold_round_trips(names: str) -> None:
    folded = fold(names.split())
    assert folded == FOLDS[names]
    assert sorted(n for p in folded for n in expand(p)) == sorted(set(names.split()))


@pytest.mark.slow
def test_clustershell_agrees() -> None:
    """ClusterShell 1.10 (pip) accepts exactly the patterns we accept, with the same names
    (as a set: NodeSet sorts and merges; our duplicates case is left out)."""
    from engines_venv import engines_bin

    python = engines_bin() / "python"
    code = (
        "import json, sys\n"
        "from ClusterShell.NodeSet import NodeSet\n"
        "out = {}\n"
        "for p in json.load(sys.stdin):\n"
        "    try:\n"
        "        out[p] = sorted(NodeSet(p))\n"
        "    except Exception as e:\n"
        "        out[p] = None\n"
        "print(json.dumps(out))\n"
    )
    patterns = [*CASES, "gpu[001-128]", *(p for f in FOLDS.values() for p in f)]
    done = subprocess.run(
        [str(python), "-c", code],
        input=json.dumps(patterns),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    theirs = json.loads(done.stdout)
    for pattern in patterns:
        try:
            ours: list[str] | None = sorted(expand(pattern))
        except HostlistError:
            ours = None
        assert ours == theirs[pattern], pattern
