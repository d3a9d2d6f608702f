"""detective-tui: the probe's Python side on compiled files, read in-process (stdlib only,
Python 3.8+): the arch flags inside ``libtorch_python.so``, the dynamic symbol table of an ELF
file (with mmap: only the pages looked at are read), and compiled torch extensions — what they
declare about the torch they were built for and whether the torch installed here exports every
torch symbol their ``.so`` files need. ``pyfacts.py`` imports it; ``probes.pyfacts_program()``
sends both (and ``pyrecord.py``) as one stdin program.
"""

import mmap
import os
import struct

from pyrecord import INDEX, file_lines, host, norm, rec, under_root

# torch.cuda.get_arch_list() is a NUL-terminated string in libtorch_python.so ("sm_75 sm_80 …")
ARCH_PREFIXES = (b"sm_", b"compute_")
MAX_LIB_BYTES = 512 * 1024 * 1024
# compiled extensions checked against the installed torch: what they declare (Requires-Dist,
# local version, xformers/cpp_lib.json) and the torch symbols their .so files need; a dist-info
# of another name is one too when a .so its RECORD lists links torch (links_torch)
EXTENSIONS = (
    "flash-attn",
    "xformers",
    "vllm",
    "sgl-kernel",
    "flashinfer-python",
    "torchvision",
    "torchaudio",
    "deepspeed",
    "causal-conv1d",
    "mamba-ssm",
    "torch-scatter",
    "torch-sparse",
    "transformer-engine-torch",
    "apex",
)
MAX_SO_PER_EXTENSION = 6  # bounds: .so files read per extension and in all
MAX_RECORD_LINES = 2000  # of a RECORD read to find a .so linking torch (links_torch)
MAX_SO_TOTAL = 24
MAX_TORCH_SYMBOLS = 4000  # undefined torch symbols looked up per .so
TORCH_LIBS = (
    "libc10.so",
    "libc10_cuda.so",
    "libtorch.so",
    "libtorch_cpu.so",
    "libtorch_cuda.so",
    "libtorch_python.so",
)
TORCH_SYMBOLS = tuple(
    (kind + ns).encode()
    for ns in ("N3c10", "NK3c10", "N2at", "NK2at", "N5torch", "NK5torch", "N6caffe2")
    for kind in ("_Z", "_ZTV", "_ZTI")
)


def is_arch_flags(data):
    """b"sm_75 sm_80 … compute_120f" — checked without importing re (it costs ~5 ms)."""
    words = data.split(b" ")
    if len(words) < 2:
        return False
    for word in words:
        prefix = next((p for p in ARCH_PREFIXES if word.startswith(p)), None)
        if prefix is None:
            return False
        number = word[len(prefix) :]
        if number[-1:] in (b"a", b"f"):
            number = number[:-1]
        if not number.isdigit():
            return False
    return True


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
                found = tail_flags(mm[start:end]) if end > 0 else None
                if found:
                    return found
                pos = mm.find(b" sm_", pos + 4)
    return None


def tail_flags(segment):
    """The arch flags a NUL-terminated string holds or ends with: the linker merges a string
    into the tail of a longer one ("…ipc_hsm_70 sm_75 …" in torch 2.8/2.9), so the flags may
    start inside it."""
    at = 0
    while at >= 0:
        if is_arch_flags(segment[at:]):
            return segment[at:].decode("ascii")
        at = min(
            (i for i in (segment.find(p, at + 1) for p in ARCH_PREFIXES) if i >= 0), default=-1
        )
    return None


class Elf:
    """The dynamic symbol table of a 64-bit little-endian ELF file, read with mmap (only the
    pages looked at are read): DT_NEEDED, undefined symbols, and lookups through .gnu.hash."""

    def __init__(self, path):
        with open(path, "rb") as fh:  # the map keeps its own handle
            self.mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            self._read_sections()
        except (struct.error, IndexError, ValueError) as exc:
            self.close()
            raise ValueError(f"not a readable 64-bit little-endian ELF file ({exc})") from None

    def _read_sections(self):
        mm = self.mm
        if mm[:4] != b"\x7fELF" or mm[4] != 2 or mm[5] != 1:
            raise ValueError("another format")
        (shoff,) = struct.unpack_from("<Q", mm, 0x28)
        entsize, count = struct.unpack_from("<HH", mm, 0x3A)
        self.sections = []
        for i in range(count):
            (typ,) = struct.unpack_from("<I", mm, shoff + i * entsize + 4)
            off, size, link = struct.unpack_from("<QQI", mm, shoff + i * entsize + 0x18)
            self.sections.append((typ, off, size, link))
        self.dynsym = next((x for x in self.sections if x[0] == 11), None)
        if self.dynsym is None:
            raise ValueError("no dynamic symbol table")
        self.dynstr = self.sections[self.dynsym[3]][1]
        self.hash = next((x for x in self.sections if x[0] == 0x6FFFFFF6), None)

    def close(self):
        self.mm.close()

    def string(self, offset):
        start = self.dynstr + offset
        return self.mm[start : self.mm.find(b"\0", start)]

    def needed(self):
        dynamic = next((x for x in self.sections if x[0] == 6), None)
        out = []
        if dynamic is not None:
            for pos in range(dynamic[1], dynamic[1] + dynamic[2], 16):
                tag, val = struct.unpack_from("<qQ", self.mm, pos)
                if tag == 0:
                    break
                if tag == 1:
                    out.append(self.string(val).decode("ascii", "replace"))
        return out

    def search_path(self):
        """("rpath" or "runpath", the value) of the dynamic section, or None: the folders the
        loader searches for what this file needs (DT_RPATH before LD_LIBRARY_PATH, DT_RUNPATH
        after it)."""
        dynamic = next((x for x in self.sections if x[0] == 6), None)
        found = {}
        if dynamic is not None:
            for pos in range(dynamic[1], dynamic[1] + dynamic[2], 16):
                tag, val = struct.unpack_from("<qQ", self.mm, pos)
                if tag == 0:
                    break
                if tag in (15, 29):  # DT_RPATH, DT_RUNPATH
                    found[tag] = self.string(val).decode("ascii", "replace")
        if 29 in found:  # the loader ignores DT_RPATH when DT_RUNPATH is there
            return "runpath", found[29]
        return ("rpath", found[15]) if 15 in found else None

    def undefined(self, prefixes):
        """Undefined, non-weak symbols whose names start with one of ``prefixes``."""
        _typ, off, size, _link = self.dynsym
        for pos in range(off + 24, off + size, 24):
            name, info, _other, shndx = struct.unpack_from("<IBBH", self.mm, pos)
            if shndx == 0 and info >> 4 != 2 and name:
                text = self.string(name)
                if text.startswith(prefixes):
                    yield text

    def defines(self, name):
        """Whether this file exports ``name``, found as the dynamic linker does (.gnu.hash)."""
        if self.hash is None:
            return None
        mm, base = self.mm, self.hash[1]
        nbuckets, symoffset, bloom_size, _shift = struct.unpack_from("<IIII", mm, base)
        h = 5381
        for ch in name:
            h = (h * 33 + ch) & 0xFFFFFFFF
        buckets = base + 16 + bloom_size * 8
        chains = buckets + nbuckets * 4
        (idx,) = struct.unpack_from("<I", mm, buckets + (h % nbuckets) * 4)
        if idx < symoffset:
            return False
        sym = self.dynsym[1]
        while True:
            (h2,) = struct.unpack_from("<I", mm, chains + (idx - symoffset) * 4)
            if h | 1 == h2 | 1:
                (offset,) = struct.unpack_from("<I", mm, sym + idx * 24)
                if self.string(offset) == name:
                    return True
            if h2 & 1:
                return False
            idx += 1


def extension_sos(sdir, dist_info):
    """The .so files a distribution installed (its RECORD), at most MAX_SO_PER_EXTENSION."""
    out = []
    try:
        for line in file_lines(os.path.join(sdir, dist_info, "RECORD"), 5000):
            rel = line.split(",", 1)[0]
            if (rel.endswith(".so") or ".so." in rel) and ".libs/" not in rel:
                out.append(rel)
                if len(out) >= MAX_SO_PER_EXTENSION:
                    break
    except OSError:
        pass
    return out


def links_torch(sdir, dist_info, budget):
    """Whether a .so its RECORD lists (the first two) needs a torch library (DT_NEEDED): a
    compiled torch extension whatever the distribution is called (sgl-kernel → sglang-kernel).
    ``budget`` ([n]) bounds the ELF headers read in all."""
    try:
        sos = [
            rel
            for rel in (
                line.split(",", 1)[0]
                for line in file_lines(os.path.join(sdir, dist_info, "RECORD"), MAX_RECORD_LINES)
            )
            if (rel.endswith(".so") or ".so." in rel) and ".libs/" not in rel
        ][:2]
    except OSError:
        return False
    for rel in sos:
        path = os.path.normpath(os.path.join(sdir, rel))
        if budget[0] <= 0 or not (under_root(path) and os.path.isfile(path)):
            continue
        budget[0] -= 1
        try:
            elf = Elf(path)
        except (OSError, ValueError):
            continue
        try:
            if any(n in TORCH_LIBS for n in elf.needed()):
                return True
        except (struct.error, IndexError, ValueError):
            pass
        finally:
            elf.close()
    return False


def check_so(dist, path, libs):
    """One record per .so: torch symbols needed, how many no torch library exports, a few of
    them; torch libraries it needs that this torch lacks."""
    try:
        elf = Elf(path)
    except (OSError, ValueError) as exc:
        rec("pyext", INDEX, dist, "so-error", f"{host(path)}: {exc}")
        return
    try:
        needed = elf.needed()
        lacking = [n for n in needed if n in TORCH_LIBS and n not in libs]
        if lacking:
            rec("pyext", INDEX, dist, "lacks", host(path) + " " + " ".join(lacking))
        wanted_libs = [libs[n] for n in needed if n in libs] or list(libs.values())
        count, missing = 0, []
        for name in elf.undefined(TORCH_SYMBOLS):
            count += 1
            if count > MAX_TORCH_SYMBOLS:
                break
            if not any(lib.defines(name) for lib in wanted_libs):
                missing.append(name.decode("ascii", "replace"))
        text = f"{host(path)} {count} {len(missing)} " + " ".join(missing[:3])
        rec("pyext", INDEX, dist, "so", text)
    except (struct.error, IndexError, ValueError) as exc:
        rec("pyext", INDEX, dist, "so-error", f"{host(path)}: {exc}")
    finally:
        elf.close()


def check_extensions(found, libs):
    """What each compiled extension declares about the torch it was built for, and whether the
    torch installed here exports every torch symbol its .so files need."""
    budget = MAX_SO_TOTAL
    try:
        for dist, (sdir, dist_info) in sorted(found.items()):
            try:
                for line in file_lines(os.path.join(sdir, dist_info, "METADATA"), 400):
                    if not line.strip():
                        break
                    if line.startswith("Requires-Dist:") and "extra ==" not in line:
                        spec = line.split(":", 1)[1].strip()
                        if (
                            norm(spec.split(" ")[0].split("(")[0].split(";")[0].rstrip("<>=!~"))
                            == "torch"
                        ):
                            rec("pyext", INDEX, dist, "requires", spec)
            except OSError:
                pass
            if dist == "xformers":
                info = os.path.join(sdir, "xformers", "cpp_lib.json")
                if os.path.isfile(info):
                    for line in file_lines(info, 200):
                        rec("pyext", INDEX, dist, "cpp_lib", line)
            if not libs:
                continue
            for rel in extension_sos(sdir, dist_info):
                if budget <= 0:
                    rec("pyext", INDEX, dist, "so-skipped", rel)
                    continue
                path = os.path.normpath(os.path.join(sdir, rel))
                if under_root(path) and os.path.isfile(path):
                    budget -= 1
                    check_so(dist, path, libs)
    finally:
        for lib in libs.values():
            lib.close()


MAX_NCCL_SYMBOLS = 2000  # undefined nccl* symbols of libtorch_cuda.so looked up


def check_torch_nccl(path):
    """Whether the ``libnccl.so.2`` that ``torch/lib/libtorch_cuda.so`` (``path``) finds through
    its DT_RPATH/DT_RUNPATH exports every ``nccl*`` symbol it needs: record ``torch_nccl``
    (``NEEDED MISSING first,missing,… LIB``). Only the dynamic symbol tables are read (mmap)."""
    try:
        torch_cuda = Elf(path)
    except (OSError, ValueError) as exc:
        rec("py", INDEX, "warning", f"{host(path)}: {exc}")
        return
    nccl = None
    try:
        found = torch_cuda.search_path()
        if found is None or "libnccl.so.2" not in torch_cuda.needed():
            return
        origin = os.path.dirname(path)
        for d in found[1].split(":"):
            lib = os.path.join(
                d.replace("${ORIGIN}", origin).replace("$ORIGIN", origin), "libnccl.so.2"
            )
            if under_root(lib) and os.path.isfile(lib):
                break
        else:
            return
        nccl = Elf(lib)
        count, missing = 0, []
        for name in torch_cuda.undefined((b"nccl",)):
            count += 1
            if count > MAX_NCCL_SYMBOLS:
                break
            if nccl.defines(name) is False:
                missing.append(name.decode("ascii", "replace"))
        names = ",".join(missing[:5]) or "-"
        rec(
            "py",
            INDEX,
            "torch_nccl",
            f"{count} {len(missing)} {names} {host(os.path.normpath(lib))}",
        )
    except (OSError, ValueError, struct.error, IndexError) as exc:
        rec("py", INDEX, "warning", f"{host(path)}: NCCL symbols not checked ({exc})")
    finally:
        torch_cuda.close()
        if nccl is not None:
            nccl.close()


# the dist-infos of other names whose RECORD is read (pyfacts: extensions; wheel_lib_owners)
MAX_OTHER_DISTS = 400
CUDA_LIB_PREFIXES = (
    "libcudart.so.",
    "libnvrtc.so.",
    "libcublas.so.",
    "libcublasLt.so.",
    "libcudnn.so.",
    "libnccl.so.",
    "libnvJitLink.so.",
    "libcudnn_",  # cuDNN 9's sub-libraries (libcudnn_engines_precompiled.so.9…)
)


def wheel_lib_owners(sdir):
    """{site-relative path: [dist, …]}: the CUDA libraries each nvidia-* dist-info's RECORD
    lists (two owners: two wheels wrote the same file, the last one's is there)."""
    owners = {}
    try:
        infos = sorted(
            n for n in os.listdir(sdir) if n.startswith("nvidia_") and n.endswith(".dist-info")
        )
    except OSError:
        return owners
    for info in infos[:MAX_OTHER_DISTS]:
        dist = norm(info.rsplit(".", 1)[0].split("-", 1)[0])
        try:
            for line in file_lines(os.path.join(sdir, info, "RECORD"), MAX_RECORD_LINES):
                rel = line.split(",", 1)[0]
                if rel.startswith("nvidia/") and os.path.basename(rel).startswith(
                    CUDA_LIB_PREFIXES
                ):
                    owners.setdefault(rel, []).append(dist)
        except OSError:
            continue
    return owners
