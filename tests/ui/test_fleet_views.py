"""The UI's pure helpers: table cells, sorting, the `/` filter, grouping and the CUDA boxes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tui.core.facts import DriverInfo, EnvContext, Facts, Gpu, PythonEnv, Toolkit
from tui.core.findings import Finding, FlashInferReplay
from tui.core.hosts import Host
from tui.core.judge.diagnosis import Diagnosis
from tui.core.run.runner import ProbeResult
from tui.ui.cuda_boxes import cuda_boxes
from tui.ui.filtering import FilterError, matches, parse_filter, unknown_finding
from tui.ui.fleet_state import FleetState, HostState, sort_key, status_text
from tui.ui.grouping import group_by_finding
from tui.ui.story import headline

PY = "/srv/venv/bin/python3"


def _facts(*, sm: str = "12.0", nvcc: str = "12.8", torch_cuda: str | None = "13.0") -> Facts:
    home = f"/usr/local/cuda-{nvcc}"
    return Facts(
        driver=DriverInfo(state="ok", driver_version="580.95.05", driver_cuda="13.0"),
        gpus=(Gpu(0, "NVIDIA RTX PRO 6000 Blackwell Server Edition", sm),),
        toolkits=(
            Toolkit(
                home="/usr/local",
                nvcc="/usr/local/bin/nvcc",
                version="13.0",
                wrapper_of="/usr/local/cuda-13.0/bin/nvcc",
            ),
            Toolkit(home=home, nvcc=f"{home}/bin/nvcc", version=nvcc),
        ),
        contexts=(
            EnvContext(kind="ssh", label="ssh session", which_nvcc=("/usr/local/bin/nvcc",)),
        ),
        pythons=(PythonEnv(path=PY, torch_version="2.9.1+cu130", torch_cuda=torch_cuda),),
    )


def _replay(cuda: str, verdict: str = "fail") -> FlashInferReplay:
    return FlashInferReplay(
        python=PY,
        version="0.6.8",
        cuda_home=f"/usr/local/cuda-{cuda}",
        jit_cuda=cuda,
        jit_cuda_source="nvcc",
        target_cuda_archs=(),
        check_cuda_arch=verdict,
    )


def _finding(fid: str, severity: str = "critical") -> Finding:
    return Finding(id=fid, severity=severity, title=f"title of {fid}", explanation="because")


def _state(name: str, facts: Facts | None, findings=(), replays=(), **kw) -> HostState:
    host = Host(name=name, local=True, tags=kw.pop("tags", ()))
    if facts is None:
        result = ProbeResult(host, None, "no answer (simulated demo host)", "unreachable")
        return HostState(host, status="unreachable", result=result)
    diag = Diagnosis(findings=tuple(findings), flashinfer=tuple(replays))
    return HostState(host, status="done", result=ProbeResult(host, facts), diagnosis=diag)


REJECTED = _state(
    "ct200",
    _facts(),
    [_finding("flashinfer-arch-rejected"), _finding("nvcc-torch-major-mismatch", "warning")],
    [_replay("12.8")],
    tags=("blackwell",),
)
REJECTED_TOO = replace(REJECTED, host=Host(name="ct201", local=True))
HEALTHY = _state("h100", _facts(sm="9.0", torch_cuda="12.8"), [], [_replay("12.8", "pass")])
GONE = _state("gone", None)


def test_rows_show_the_story_in_cells() -> None:
    row = REJECTED.row
    assert (row.sm, row.driver_cuda, row.torch_cuda, row.jit) == ("12.0", "13.0", "13.0", "12.8")
    assert (row.flashinfer, row.verdict, row.worst) == ("0.6.8", "rejects GPU", "critical")
    assert row.gpu == "1× RTX PRO 6000 Blackwell Server Edition"
    assert HEALTHY.row.worst == "none" and HEALTHY.row.verdict == "ok"
    assert status_text(GONE) == "unreachable: no answer (simulated demo host)"
    # the table's Status says what happened, its Reason why
    assert (GONE.row.status, GONE.row.reason) == ("unreachable", "no answer (simulated demo host)")
    assert REJECTED.row.reason == "SM 12.0 + nvcc 12.8 → FlashInfer drops the GPU (+1)"
    assert HEALTHY.row.reason.startswith("no findings")


def test_probing_status_shows_progress() -> None:
    state = HostState(Host(name="x"), status="probing", step="toolkits", done=3, total=8)
    assert status_text(state) == "probing 3/8 toolkits"


def test_sort_by_severity_and_versions() -> None:
    states = [HEALTHY, GONE, REJECTED]
    by_worst = sorted(states, key=lambda s: sort_key(s, "worst"))
    # nothing is known about a host that was not reached: it ranks above a critical one
    assert [s.name for s in by_worst] == ["gone", "ct200", "h100"]
    by_status = sorted(states, key=lambda s: sort_key(s, "status"))
    assert by_status[0].name == "gone"
    newer = _state("new", _facts(nvcc="12.10"), [], [_replay("12.10", "pass")])
    by_jit = sorted([newer, REJECTED], key=lambda s: sort_key(s, "jit"))
    assert [s.name for s in by_jit] == ["ct200", "new"]  # 12.8 < 12.10, numerically


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", {"ct200", "h100", "gone"}),
        ("tag:blackwell", {"ct200"}),
        ("finding:arch-rejected", {"ct200"}),
        ("sm:9.0", {"h100"}),
        ("status:unreach", {"gone"}),
        ("severity:crit", {"ct200"}),
        ("torch:12.8", {"h100"}),
        ("torch:cu130", {"ct200", "h100"}),
        ("torch:2.9.1", {"ct200", "h100"}),
        ("reason:drops", {"ct200"}),
        ("status:no answer", {"gone"}),
        ("ct2 13.0", {"ct200"}),
        ("RTX", {"ct200", "h100"}),
    ],
)
def test_filter(query: str, expected: set[str]) -> None:
    terms = parse_filter(query)
    assert {s.name for s in (REJECTED, HEALTHY, GONE) if matches(s, terms)} == expected


def test_filter_rejects_unknown_keys() -> None:
    with pytest.raises(FilterError, match="unknown filter key 'colour'"):
        parse_filter("colour:red")
    terms = parse_filter("a: b")  # a bare word with a colon
    assert [(t.key, t.value) for t in terms] == [(None, "a:"), (None, "b")]
    with pytest.raises(FilterError) as info:  # what was typed, as typed (no Python repr)
        parse_filter(r"c\d:x")
    assert str(info.value).startswith("unknown filter key 'c\\d' in 'c\\d:x'")
    with pytest.raises(FilterError, match="a comparison is <, <=, >, >= or = and a version"):
        parse_filter("driver:<abc")
    with pytest.raises(FilterError, match="only driver, torch, cuda, nvcc, sm, flashinfer"):
        parse_filter("tag:<3")


OLD_DRIVER = _state(
    "old",
    replace(
        _facts(sm="9.0"),
        driver=DriverInfo(state="ok", driver_version="570.86.15", driver_cuda="12.8"),
    ),
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("-tag:blackwell", {"h100", "gone", "old"}),
        ("!ct2", {"h100", "gone", "old"}),
        ("ct200|h100", {"ct200", "h100"}),
        ("gpu:rtx -sm:9.0", {"ct200"}),
        ("sm:>=10", {"ct200"}),
        ("sm:<10", {"h100", "old"}),
        ("driver:<580", {"old"}),
        ("driver:>=580.95", {"ct200", "h100"}),
        ("driver:=570", {"old"}),
        ("cuda:>=13", {"ct200", "h100"}),
        ("nvcc:>=12.8", {"ct200", "h100"}),
        ("torch:<2.10", {"ct200", "h100", "old"}),
        ("-driver:<580 -status:unreach", {"ct200", "h100"}),
        ("finding:arch-rejected|nvcc-torch", {"ct200"}),
    ],
)
def test_filter_negation_or_and_comparisons(query: str, expected: set[str]) -> None:
    terms = parse_filter(query)
    states = (REJECTED, HEALTHY, GONE, OLD_DRIVER)
    assert {s.name for s in states if matches(s, terms)} == expected


def test_an_unknown_finding_id_is_an_error_not_no_match() -> None:
    states = (REJECTED, HEALTHY, GONE)
    error = unknown_finding(parse_filter("finding:nope"), states)
    assert error is not None and error.startswith("unknown finding id 'nope'")
    assert unknown_finding(parse_filter("finding:arch-rejected"), states) is None
    assert unknown_finding(parse_filter("finding:title of"), states) is None  # a title matches
    assert unknown_finding(parse_filter("finding:cuda-library"), ()) is None  # a known id


def test_group_by_finding() -> None:
    groups = group_by_finding([HEALTHY, REJECTED, GONE, REJECTED_TOO])
    labels = [g.label for g in groups]
    assert labels[0] == "1 host: unreachable"
    assert labels[1] == "2 hosts: SM 12.0 + nvcc 12.8 → FlashInfer drops the GPU"
    assert groups[1].hosts == ("ct200", "ct201") and groups[1].severity == "critical"
    assert labels[2] == "2 hosts: nvcc 12.8 vs torch CUDA 13.0 → JIT and torch CUDA majors differ"
    assert labels[-1] == "1 host: no findings" and groups[-1].hosts == ("h100",)


def test_fleet_state_is_replaced_not_mutated() -> None:
    fleet = FleetState.of([Host(name="a"), Host(name="b")])
    updated = fleet.updated(replace(fleet["a"], status="queued"))
    assert fleet["a"].status == "idle" and updated["a"].status == "queued"
    assert updated["b"] is fleet["b"] and list(updated.order) == ["a", "b"]


def test_cuda_boxes_mark_the_odd_ones() -> None:
    boxes = {b.key: b for b in cuda_boxes(REJECTED.facts, REJECTED.diagnosis)}
    assert [boxes[k].value for k in ("driver", "torch", "path", "jit")] == [
        "13.0",
        "13.0",
        "13.0",
        "12.8",
    ]
    assert boxes["jit"].severity == "critical"  # implicated by flashinfer-arch-rejected
    assert boxes["driver"].severity is None and boxes["torch"].severity is None
    assert boxes["path"].severity == "odd"  # PATH's nvcc (13.0 wrapper) is not what FlashInfer uses
    assert boxes["path"].detail == "/usr/local/bin/nvcc"
    assert boxes["jit"].detail == "/usr/local/cuda-12.8"
    healthy = {b.key: b for b in cuda_boxes(HEALTHY.facts, HEALTHY.diagnosis)}
    assert all(healthy[k].severity is None for k in ("driver", "torch", "jit"))


def test_headline() -> None:
    assert headline(REJECTED.diagnosis) == (
        "critical",
        "title of flashinfer-arch-rejected  (+1 more)",
    )
    assert headline(HEALTHY.diagnosis)[0] == "healthy"
