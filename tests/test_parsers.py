"""Every nvcc/, nvidia-smi/, proc/ fixture and every torch version.py through
tui.core.facts.parsers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_fixtures import SHARED_FIXTURES, needs_shared

from tui.core.facts import Facts, parsers
from tui.core.facts.build import ARITY, FactBuilder
from tui.core.tables.gpu_table import cc_for_name

PACKAGED = Path(__file__).resolve().parents[1] / "tui" / "demo" / "fixtures"


def fixtures(sub: str, pattern: str = "*") -> list[Path]:
    return sorted((SHARED_FIXTURES / sub).glob(pattern)) if SHARED_FIXTURES.is_dir() else []


def ids(paths: list[Path]) -> list[str]:
    return [p.name for p in paths]


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# --- nvcc --------------------------------------------------------------------------------

NVCC_VERSION_FILES = [
    p for p in fixtures("nvcc") if re.fullmatch(r"nvcc-\d+\.\d+(\.\d+)?\.txt", p.name)
]
NVCC_LIST_FILES = [p for p in fixtures("nvcc") if "-list-gpu-" in p.name]
NVCC_ERROR_FILES = [p for p in fixtures("nvcc") if "-error-" in p.name]


@needs_shared
def test_every_nvcc_fixture_is_covered() -> None:
    covered = set(NVCC_VERSION_FILES) | set(NVCC_LIST_FILES) | set(NVCC_ERROR_FILES)
    assert covered == set(fixtures("nvcc")) and covered


@pytest.mark.parametrize("path", NVCC_VERSION_FILES, ids=ids(NVCC_VERSION_FILES))
def test_nvcc_version(path: Path) -> None:
    parts = path.name[len("nvcc-") : -len(".txt")].split(".")
    got = parsers.parse_nvcc_version(text(path))
    assert got is not None
    assert got.release == f"{parts[0]}.{parts[1]}"
    if len(parts) == 3:
        assert got.full == ".".join(parts)
    else:  # nvcc-12.8.txt is a copy of the full-version file of that release
        twin = SHARED_FIXTURES / "nvcc" / f"nvcc-{got.full}.txt"
        assert twin.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", NVCC_LIST_FILES, ids=ids(NVCC_LIST_FILES))
def test_nvcc_gpu_lists(path: Path) -> None:
    got = parsers.parse_nvcc_gpu_list(text(path))
    kind = "compute_" if "list-gpu-arch" in path.name else "sm_"
    assert got and all(a.startswith(kind) for a in got)
    numbers = {int(re.sub(r"\D", "", a)) for a in got}
    release = path.name.split("-")[1]
    if release.startswith("13."):
        assert 70 not in numbers and 120 in numbers and 110 in numbers
    if release == "11.8.89":
        assert 35 in numbers and 120 not in numbers
    if release == "12.4.131":
        assert 90 in numbers and 100 not in numbers


@pytest.mark.parametrize("path", NVCC_ERROR_FILES, ids=ids(NVCC_ERROR_FILES))
def test_nvcc_error_text_is_not_a_version(path: Path) -> None:
    body = text(path)
    assert "nvcc fatal" in body
    assert parsers.parse_nvcc_version(body) is None
    assert parsers.parse_nvcc_gpu_list(body) == ()


def test_cuda_version_json() -> None:
    doc = '{"cuda": {"name": "CUDA SDK", "version": "12.8.1"}, "cuda_nvcc": {"version": "12.8.93"}}'
    assert parsers.parse_cuda_version_json(doc) == parsers.NvccVersion("12.8", "12.8.93")
    assert parsers.parse_cuda_version_json(
        '{"cuda": {"version": "13.0.2"}}'
    ) == parsers.NvccVersion("13.0", None)
    assert parsers.parse_cuda_version_json("[1, 2]") is None
    assert parsers.parse_cuda_version_json("not json") is None


# --- nvidia-smi ----------------------------------------------------------------------------

# file → (NVIDIA-SMI version, driver, CUDA, GPUs in the table, CC of GPU 0)
SMI_TABLES = {
    "SYNTHETIC-nvidia-smi-h100x8-550.127.05.txt": ("550.127.05", "550.127.05", "12.4", 8, "9.0"),
    "SYNTHETIC-nvidia-smi-rtxpro6000-server-x8-570.133.20.txt": (
        "570.133.20",
        "570.133.20",
        "12.8",
        8,
        "12.0",
    ),
    "SYNTHETIC-nvidia-smi-rtxpro6000-server-x8-575.57.08.txt": (
        "575.57.08",
        "575.57.08",
        "12.9",
        8,
        "12.0",
    ),
    "SYNTHETIC-nvidia-smi-rtxpro6000-server-x8-580.95.05.txt": (
        "580.95.05",
        "580.95.05",
        "13.0",
        8,
        "12.0",
    ),
    "nvidia-smi-a100x8-550.163.01.txt": ("550.163.01", "550.163.01", "12.4", 8, "8.0"),
    "nvidia-smi-b200x8-575.57.08.txt": ("575.57.08", "575.57.08", "12.9", 8, "10.0"),
    "nvidia-smi-gb10-dgx-spark-580.95.05.txt": ("580.95.05", "580.95.05", "13.0", 1, "12.1"),
    "nvidia-smi-h100-545.23.08-old-layout.txt": ("545.23.08", "545.23.08", "12.3", 1, "9.0"),
    "nvidia-smi-h100x4-570.148.08.txt": ("570.148.08", "570.148.08", "12.8", 4, "9.0"),
    "nvidia-smi-h200x8-550.163.01.txt": ("550.163.01", "550.163.01", "12.4", 8, "9.0"),
    "nvidia-smi-h200x8-570.172.08.txt": ("570.172.08", "570.172.08", "12.8", 8, "9.0"),
    "nvidia-smi-rtx5090-570.124.06.txt": ("570.124.06", "570.124.06", "12.8", 1, "12.0"),
    "nvidia-smi-rtx5090-laptop-wsl2-580.88.txt": ("580.65.05", "580.88", "13.0", 1, "12.0"),
    "nvidia-smi-rtxpro6000-server-570.172.08.txt": ("570.172.08", "570.172.08", "12.8", 1, "12.0"),
    "nvidia-smi-rtxpro6000-workstation-580.95.05.txt": (
        "580.95.05",
        "580.95.05",
        "13.0",
        1,
        "12.0",
    ),
    "nvidia-smi-rtxpro6000x2-maxq-595.71.05.txt": ("595.71.05", "595.71.05", "13.2", 2, "12.0"),
    "nvidia-smi-rtxpro6000-server-610.43.02-mig-kmd-umd-header.txt": (
        "610.43.02",
        "610.43.02",
        "13.3",
        1,
        "12.0",
    ),
}
SMI_FAILURES = {
    "nvidia-smi-550.163.01-no-kernel-driver.txt": (9, "not-loaded"),
    "nvidia-smi-550.163.01-no-kernel-driver-L.txt": (9, "not-loaded"),
    "nvidia-smi-550.163.01-no-kernel-driver-query-gpu.txt": (9, "not-loaded"),
    "nvidia-smi-550.163.01-no-libnvidia-ml.txt": (12, "no-nvml"),
    "nvidia-smi-driver-library-version-mismatch-580.159.txt": (18, "version-mismatch"),
}
SMI_QUERY_NOHEADER = ("name", "compute_cap", "driver_version", "memory.total")
SMI_OTHER = {
    "nvidia-smi-550.163.01-binary-table-template.txt",
    "nvidia-smi-L-rtxpro6000-server-x8-610.43.02.txt",
    "nvidia-smi-q-rtx5090-570.124.06-excerpt.txt",
    "nvidia-smi-q-rtx5090-570.124.06-fb-memory-excerpt.txt",
}


@needs_shared
def test_every_nvidia_smi_fixture_is_covered() -> None:
    names = {p.name for p in fixtures("nvidia-smi")}
    csvs = {n for n in names if n.endswith(".csv")}
    assert names == set(SMI_TABLES) | set(SMI_FAILURES) | SMI_OTHER | csvs


@needs_shared
@pytest.mark.parametrize("name", sorted(SMI_TABLES))
def test_smi_table(name: str) -> None:
    smi, driver, cuda, count, cc0 = SMI_TABLES[name]
    body = text(SHARED_FIXTURES / "nvidia-smi" / name)
    assert parsers.parse_smi_header(body) == parsers.SmiHeader(smi, driver, cuda)
    gpus = parsers.parse_smi_table_gpus(body)
    assert len(gpus) == count
    assert [g.index for g in gpus] == list(range(count))
    assert gpus[0].compute_cap == cc0 and gpus[0].cc_source == "name-table"


@needs_shared
def test_smi_table_memory_and_truncated_names() -> None:
    gpus = parsers.parse_smi_table_gpus(
        text(
            SHARED_FIXTURES
            / "nvidia-smi"
            / "SYNTHETIC-nvidia-smi-rtxpro6000-server-x8-580.95.05.txt"
        )
    )
    assert {g.name for g in gpus} == {"NVIDIA RTX PRO 6000 Blac..."}
    assert {g.memory_mib for g in gpus} == {97887}
    spark = parsers.parse_smi_table_gpus(
        text(SHARED_FIXTURES / "nvidia-smi" / "nvidia-smi-gb10-dgx-spark-580.95.05.txt")
    )
    assert spark[0].memory_mib is None  # "Not Supported"


@needs_shared
@pytest.mark.parametrize("name", sorted(SMI_FAILURES))
def test_smi_failure(name: str) -> None:
    rc, state = SMI_FAILURES[name]
    body = text(SHARED_FIXTURES / "nvidia-smi" / name)
    assert parsers.parse_smi_header(body) is None
    assert parsers.classify_smi_failure(body, rc) == state
    assert parsers.classify_smi_failure(body, None) == state  # the text alone decides
    assert parsers.parse_query_gpu(body) == ()
    assert parsers.parse_smi_list(body) == ()


def test_smi_failure_by_exit_code_and_timeout() -> None:
    assert parsers.classify_smi_failure("", 124) == "timeout"
    assert parsers.classify_smi_failure("", 137) == "timeout"
    assert parsers.classify_smi_failure("", 9) == "not-loaded"
    assert parsers.classify_smi_failure("something else", 255) == "error"


@needs_shared
def test_smi_binary_template_has_no_versions() -> None:
    body = text(SHARED_FIXTURES / "nvidia-smi" / "nvidia-smi-550.163.01-binary-table-template.txt")
    assert parsers.parse_smi_header(body) is None


@needs_shared
def test_smi_q_excerpts() -> None:
    q = text(SHARED_FIXTURES / "nvidia-smi" / "nvidia-smi-q-rtx5090-570.124.06-excerpt.txt")
    assert parsers.parse_smi_header(q) == parsers.SmiHeader(None, "570.124.06", "12.8")
    fb = text(
        SHARED_FIXTURES / "nvidia-smi" / "nvidia-smi-q-rtx5090-570.124.06-fb-memory-excerpt.txt"
    )
    assert parsers.parse_smi_header(fb) is None


@needs_shared
def test_smi_list() -> None:
    gpus = parsers.parse_smi_list(
        text(SHARED_FIXTURES / "nvidia-smi" / "nvidia-smi-L-rtxpro6000-server-x8-610.43.02.txt")
    )
    assert [g.index for g in gpus] == list(range(8))
    assert gpus[0].uuid == "GPU-8b89b58e-b427-108d-ac50-06138d78fe78"
    assert {g.name for g in gpus} == {"NVIDIA RTX PRO 6000 Blackwell Server Edition"}
    assert {(g.compute_cap, g.cc_source) for g in gpus} == {("12.0", "name-table")}


QUERY_FILES = fixtures("nvidia-smi", "*.csv")


@pytest.mark.parametrize("path", QUERY_FILES, ids=ids(QUERY_FILES))
def test_query_gpu(path: Path) -> None:
    body = text(path)
    gpus = parsers.parse_query_gpu(body, SMI_QUERY_NOHEADER)
    rows = [ln for ln in body.splitlines() if ln.strip()]
    has_header = rows[0].startswith("index")
    assert len(gpus) == len(rows) - has_header
    assert [g.index for g in gpus] == list(range(len(gpus)))
    for gpu, row in zip(gpus, rows[has_header:], strict=True):
        assert gpu.name in row and gpu.cc_source == "nvidia-smi"
        assert gpu.compute_cap == cc_for_name(gpu.name)
        assert (gpu.memory_mib is None) == ("[N/A]" in row)
        assert gpu.memory_mib is None or f"{gpu.memory_mib} MiB" in row


def test_query_gpu_probe_fields_and_commas_in_names() -> None:
    body = "0, NVIDIA Odd, Name, 12.0, 97887 MiB, GPU-1\n1, NVIDIA GB10, [N/A], [N/A], GPU-2\n"
    a, b = parsers.parse_query_gpu(body)
    assert (a.name, a.compute_cap, a.memory_mib, a.uuid) == (
        "NVIDIA Odd, Name",
        "12.0",
        97887,
        "GPU-1",
    )
    assert (b.compute_cap, b.cc_source, b.memory_mib) == ("12.1", "name-table", None)


# --- /proc -------------------------------------------------------------------------------

PROC_FILES = fixtures("proc")


@pytest.mark.parametrize("path", PROC_FILES, ids=ids(PROC_FILES))
def test_proc_driver_version(path: Path) -> None:
    got = parsers.parse_proc_driver_version(text(path))
    if "absent" in path.name:
        assert got is None
        return
    version, flavour = re.match(
        r"proc-driver-nvidia-version-([\d.]+)-(open|proprietary)", path.name
    ).groups()
    assert got is not None
    assert (got.version, got.kernel_module) == (version, flavour)


# --- torch version.py --------------------------------------------------------------------

TORCH_FILES = fixtures("torch", "torch-version.py-*.py")


@pytest.mark.parametrize("path", TORCH_FILES, ids=ids(TORCH_FILES))
def test_torch_version_py(path: Path) -> None:
    version = re.match(r"torch-version\.py-([^-]+)-", path.name).group(1)
    got = parsers.parse_torch_version_py(text(path))
    assert got is not None and got.version == version
    local = version.split("+")[1]
    if local == "cpu":
        assert got.cuda is None
    else:
        digits = local[2:]
        assert got.cuda == f"{int(digits[:-1])}.{digits[-1]}"
    assert got.hip is None


ARCH_ROWS = [
    ln.split("\t")
    for ln in (
        text(
            SHARED_FIXTURES / "torch" / "torch-pypi-wheels-CUDA_ARCH_FLAGS-from-libtorch_python.tsv"
        )
        if SHARED_FIXTURES.is_dir()
        else ""
    ).splitlines()
    if ln and not ln.startswith("#")
]


@pytest.mark.parametrize("row", ARCH_ROWS, ids=[r[0] for r in ARCH_ROWS])
def test_torch_arch_flags(row: list[str]) -> None:
    got = parsers.parse_torch_arch_flags(row[2])
    assert got == tuple(row[2].split()) and "sm_90" in got


def test_torch_arch_flags_rejects_other_text() -> None:
    assert parsers.parse_torch_arch_flags("sm_count") is None
    assert parsers.parse_torch_arch_flags("") is None
    assert parsers.parse_torch_arch_flags("sm_90 compute_120f") == ("sm_90", "compute_120f")


def test_torch_version_py_variants() -> None:
    assert parsers.parse_torch_version_py("__version__ = '2.0.0'\ncuda = '11.8'\n") == (
        parsers.TorchVersionInfo("2.0.0", "11.8")
    )
    assert parsers.parse_torch_version_py("cuda = '11.8'\n") is None


# --- files of packages, OS, environments -------------------------------------------------


def test_dist_metadata_and_dir_names() -> None:
    meta = "Metadata-Version: 2.1\nName: Flashinfer_Python\nVersion: 0.6.8\n\nVersion: 9\n"
    assert parsers.parse_dist_metadata(meta) == ("flashinfer-python", "0.6.8")
    assert parsers.parse_dist_metadata("Name: x\n") is None
    assert parsers.parse_dist_dir_name("torch-2.9.1.dist-info") == ("torch", "2.9.1")
    assert parsers.parse_dist_dir_name("sgl_kernel-0.3.18.dist-info") == ("sgl-kernel", "0.3.18")
    assert parsers.parse_dist_dir_name("sglang.egg-info") is None


def test_flashinfer_build_meta() -> None:
    assert parsers.parse_flashinfer_build_meta("__version__ = '0.6.8'\n") == "0.6.8"
    assert parsers.parse_flashinfer_build_meta(
        '__version__ = "0.7.2.post1"\n__git_commit__ = "b"'
    ) == ("0.7.2.post1")
    assert parsers.parse_flashinfer_build_meta("x = 1") is None


def test_os_release() -> None:
    got = parsers.parse_os_release(
        'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nID=ubuntu\nVERSION_ID="22.04"\n# c\n'
    )
    assert got == {"PRETTY_NAME": "Ubuntu 22.04.5 LTS", "ID": "ubuntu", "VERSION_ID": "22.04"}


def test_shell_assignments_replay() -> None:
    env = parsers.apply_shell_assignments(
        [
            "export CUDA_HOME=/usr/local/cuda-13.0",
            'export PATH="$CUDA_HOME/bin:${PATH}"',
            "LITERAL='$HOME'",
            "if [ -x foo ]; then bar; fi",
            "X=1 # comment",
        ],
        {"PATH": "/usr/bin", "HOME": "/root"},
    )
    assert env["PATH"] == "/usr/local/cuda-13.0/bin:/usr/bin"
    assert env["LITERAL"] == "$HOME" and env["X"] == "1"


def test_systemd_environment() -> None:
    env = parsers.parse_systemd_environment(
        ["A=1 B=2", '"PATH=/opt/cuda 13/bin:/usr/bin" C=3', "", "CUDA_HOME=/usr/local/cuda-12.8"],
        ["# comment", "CUDA_HOME=/usr/local/cuda-13.0", "export D='4'"],
    )
    assert env == {"CUDA_HOME": "/usr/local/cuda-13.0", "D": "4"}
    env = parsers.parse_systemd_environment(['"PATH=/opt/cuda 13/bin:/usr/bin" C=3'])
    assert env == {"PATH": "/opt/cuda 13/bin:/usr/bin", "C": "3"}


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"),
        ("NVIDIA RTX PRO 6000 Blac...", "12.0"),
        ("NVIDIA GeForce RTX 5090 ...", "12.0"),
        ("NVIDIA GB10", "12.1"),
        ("NVIDIA GB200", "10.0"),
        ("NVIDIA B300 SXM6 AC", "10.3"),
        ("NVIDIA GH200 480GB", "9.0"),
        ("NVIDIA H100 NVL", "9.0"),
        ("NVIDIA A100-SXM4-80GB", "8.0"),
        ("NVIDIA A10G", "8.6"),
        ("NVIDIA L40S", "8.9"),
        ("Tesla V100-SXM2-32GB", "7.0"),
        ("Tesla T4", "7.5"),
        ("Tesla P100-PCIE-16GB", "6.0"),
        ("Tesla K80", "3.7"),
        ("NVIDIA RTX 6000 Ada Generation", "8.9"),
        ("NVIDIA H20", "9.0"),
        ("Some Future GPU", None),
    ],
)
def test_gpu_name_table(name: str, cc: str | None) -> None:
    assert cc_for_name(name) == cc


# --- the packaged copies ------------------------------------------------------------------


@needs_shared
def test_packaged_fixtures_are_byte_identical_copies() -> None:
    copies = [p for p in PACKAGED.rglob("*") if p.is_file()]
    assert copies
    for copy in copies:
        original = SHARED_FIXTURES / copy.relative_to(PACKAGED)
        assert original.read_bytes() == copy.read_bytes(), copy


# --- fuzzing: no parser raises, whatever the text ----------------------------------------

TEXT_PARSERS = (
    parsers.parse_nvcc_version,
    parsers.parse_nvcc_gpu_list,
    parsers.parse_cuda_version_json,
    parsers.parse_smi_header,
    parsers.parse_query_gpu,
    parsers.parse_smi_list,
    parsers.parse_smi_table_gpus,
    parsers.parse_proc_driver_version,
    parsers.parse_os_release,
    parsers.parse_torch_version_py,
    parsers.parse_flashinfer_build_meta,
    parsers.parse_dist_metadata,
    parsers.parse_dist_dir_name,
    parsers.parse_torch_arch_flags,
)
NOISY_TEXT = st.text() | st.lists(
    st.sampled_from(
        [
            "| NVIDIA-SMI 580.95.05   Driver Version: 580.95.05   CUDA Version: 13.0 |",
            "|   0  NVIDIA H100    On  |   00000000:18:00.0 Off |",
            "0, NVIDIA B200, 10.0, 183359 MiB, GPU-x",
            "Cuda compilation tools, release 12.8, V12.8.93",
            "__version__ = '2.9.1+cu130'",
            "cuda: Optional[str] = '13.0'",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release",
            '{"cuda_nvcc": {"version": 7}}',
            "Name: torch",
            "Version: 2.9.1",
            "",
            ",,,,",
            "[N/A], [N/A]",
        ]
    )
).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(NOISY_TEXT)
def test_parsers_never_raise(body: str) -> None:
    for parse in TEXT_PARSERS:
        parse(body)
    parsers.classify_smi_failure(body, 0)
    parsers.apply_shell_assignments(body.splitlines(), {})
    parsers.parse_systemd_environment(body.splitlines(), body.splitlines())


RECORD = st.tuples(
    st.sampled_from(["@@DT1\t", "noise @@DT1\t", "", "@@DT1"]),
    st.sampled_from([*sorted(ARITY), "unknown"]),
    st.lists(st.sampled_from(["0", "1", "", "ssh", "-", "/usr/local/cuda", "x\ty"]) | st.text()),
).map(lambda r: r[0] + "\t".join([r[1], *r[2]]))


@settings(max_examples=300, deadline=None)
@given(st.lists(RECORD))
def test_fact_builder_never_raises(lines: list[str]) -> None:
    builder = FactBuilder()
    for line in lines:
        builder.feed(line)
    facts = builder.facts()
    assert Facts.from_json(facts.to_json()) == facts
