"""detective-tui: what one Python interpreter has installed, read from files only.

Sent by probe.sh on stdin to each interpreter (``python -E - INDEX``). Standard library only,
runs on Python 3.8+, never imports torch or FlashInfer. It prints raw records
(see probes/README.md); all parsing happens on the detective-tui side (tui/core/parsers.py).
Paths are reported as host paths: the probe root prefix DT_ROOT is stripped.
"""

import mmap
import os
import re
import sys

SENTINEL = "@@DT1"
ROOT = os.environ.get("DT_ROOT", "").rstrip("/")
INDEX = sys.argv[1] if len(sys.argv) > 1 else "0"

WANTED = {
    "torch",
    "flashinfer-python",
    "flashinfer",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "sglang",
    "sgl-kernel",
    "vllm",
    "triton",
    "cuda-toolkit",
    "cuda-python",
    "cuda-bindings",
    "ninja",
    "xformers",
}
WANTED_PREFIXES = ("nvidia-",)
MAX_FILE_LINES = 60
# torch.cuda.get_arch_list() is a NUL-terminated string in libtorch_python.so ("sm_75 sm_80 …")
ARCH_FLAGS = re.compile(rb"^(?:sm|compute)_\d+[af]?(?: (?:sm|compute)_\d+[af]?)+$")
MAX_LIB_BYTES = 512 * 1024 * 1024


def clean(value):
    return str(value).replace("\t", " ").replace("\n", " ").replace("\r", " ")


def rec(*fields):
    sys.stdout.write(SENTINEL + "\t" + "\t".join(clean(f) for f in fields) + "\n")


def host(path):
    if ROOT and (path == ROOT or path.startswith(ROOT + "/")):
        return path[len(ROOT) :] or "/"
    return path


def under_root(path):
    return not ROOT or path == ROOT or path.startswith(ROOT + "/")


def norm(name):
    out = []
    prev_sep = False
    for ch in name.lower():
        if ch in "-_.":
            if not prev_sep:
                out.append("-")
            prev_sep = True
        else:
            out.append(ch)
            prev_sep = False
    return "".join(out)


def file_lines(path, limit=MAX_FILE_LINES):
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh):
            if n >= limit:
                break
            yield line.rstrip("\r\n")


def site_dirs():
    seen = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        base = os.path.basename(entry.rstrip("/"))
        if base not in ("site-packages", "dist-packages") or not under_root(entry):
            continue
        real = os.path.abspath(entry)
        if real not in seen:
            seen.append(real)
    return seen


def wanted(dist_name):
    return dist_name in WANTED or dist_name.startswith(WANTED_PREFIXES)


def report_dists(sites):
    count = 0
    seen = set()
    for site in sites:
        try:
            names = sorted(os.listdir(site))
        except OSError:
            continue
        for entry in names:
            if entry.endswith(".dist-info"):
                meta = "METADATA"
            elif entry.endswith(".egg-info"):
                meta = "PKG-INFO"
            else:
                continue
            dist = norm(entry.split("-", 1)[0])
            if not wanted(dist) or dist in seen:
                continue
            seen.add(dist)
            count += 1
            rec("pydist", INDEX, count, entry)
            path = os.path.join(site, entry, meta)
            try:
                for line in file_lines(path, 40):
                    if not line.strip():
                        break
                    if line.startswith(("Name:", "Version:")):
                        rec("pymeta", INDEX, count, line)
            except OSError as exc:
                rec("py", INDEX, "warning", f"{host(path)}: {exc.strerror or exc}")


def report_file(sites, relpath, label):
    for site in sites:
        path = os.path.join(site, relpath)
        if os.path.isfile(path):
            try:
                for line in file_lines(path):
                    rec("pyfile", INDEX, label, line)
            except OSError as exc:
                rec("py", INDEX, "warning", f"{host(path)}: {exc.strerror or exc}")
            return


def report_pip_nvcc(sites):
    for site in sites:
        nvidia = os.path.join(site, "nvidia")
        try:
            subdirs = sorted(os.listdir(nvidia))
        except OSError:
            continue
        for sub in subdirs:
            nvcc = os.path.join(nvidia, sub, "bin", "nvcc")
            if os.path.isfile(nvcc):
                rec("py", INDEX, "pip_nvcc", host(nvcc))


def arch_flags(path):
    """The arch-flag string of a libtorch_python.so, found without reading it into memory."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if not 0 < size <= MAX_LIB_BYTES:
            return None
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            pos = mm.find(b" sm_")
            while pos >= 0:
                start = mm.rfind(b"\0", max(0, pos - 256), pos) + 1
                end = mm.find(b"\0", pos, pos + 1024)
                if end > 0 and ARCH_FLAGS.match(mm[start:end]):
                    return mm[start:end].decode("ascii")
                pos = mm.find(b" sm_", pos + 4)
    return None


def report_torch_archs(sites):
    for site in sites:
        lib = os.path.join(site, "torch", "lib", "libtorch_python.so")
        if os.path.isfile(lib):
            try:
                flags = arch_flags(lib)
            except (OSError, ValueError) as exc:
                rec("py", INDEX, "warning", f"{host(lib)}: {exc}")
                return
            if flags:
                rec("pyfile", INDEX, "torch_arch_flags", flags)
            return


def main():
    rec("py", INDEX, "version", ".".join(str(n) for n in sys.version_info[:3]))
    rec("py", INDEX, "executable", host(sys.executable))
    rec("py", INDEX, "prefix", host(sys.prefix))
    sites = site_dirs()
    for site in sites:
        rec("py", INDEX, "site", host(site))
    report_dists(sites)
    report_file(sites, os.path.join("torch", "version.py"), "torch_version")
    report_file(sites, os.path.join("flashinfer", "_build_meta.py"), "flashinfer_build_meta")
    report_torch_archs(sites)
    report_pip_nvcc(sites)


try:
    main()
except Exception as exc:  # the probe must report, never crash
    rec("py", INDEX, "error", f"{type(exc).__name__}: {exc}")
sys.stdout.flush()
