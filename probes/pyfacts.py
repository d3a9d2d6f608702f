"""detective-tui: what one Python interpreter has installed, read from files only.

Sent by probe.sh on stdin to each interpreter (``python -E -S - INDEX``). Standard library only,
runs on Python 3.8+, never imports torch or FlashInfer. It prints raw records
(see probes/README.md); all parsing happens on the detective-tui side (tui/core/facts/parsers.py).
Paths are reported as host paths: the probe root prefix DT_ROOT is stripped.
"""

import os
import sys
from itertools import islice

from pybinaries import (
    CUDA_LIB_PREFIXES,
    EXTENSIONS,
    MAX_OTHER_DISTS,
    TORCH_LIBS,
    Elf,
    arch_flags,
    check_extensions,
    check_torch_nccl,
    links_torch,
    wheel_lib_owners,
)
from pyrecord import INDEX, ROOT, answer_views, file_lines, host, norm, rec, under_root

# The interpreter of a serving process: probe.sh passes what of the process's start and
# environment changes its import path (it runs us with -E -S, so we apply it ourselves):
# DT_PROC_HOME, DT_PROC_PYTHONPATH, DT_PROC_PYTHONUSERBASE, DT_PROC_PYTHONNOUSERSITE,
# DT_PROC_CWD, DT_PROC_FLAGS (its short options: I E s S P…) and DT_PROC_PATH0 (its sys.path[0]).
# DT_READ_FOR: the facts are about that interpreter (one of an inspected tree, which never runs
# here: probe.sh's trust rule) and this one, the host's own, only reads its files — its version
# from pyvenv.cfg or its lib/pythonX.Y directory, its site dirs by their layout.
PROC = READ_FOR = FLAGS = None  # set from the request's DT_* values (configure)
# packages whose import names say the probe cares about a directory that holds them
WANTED_IMPORTS = ("torch", "flashinfer", "sglang", "sgl_kernel", "vllm", "triton", "nvidia")

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
    "pytorch-triton",
    "cuda-toolkit",
    "cuda-python",
    "cuda-bindings",
    "ninja",
    "xformers",
}
WANTED_PREFIXES = ("nvidia-",)
# a dist-info of any other name is an extension when its RECORD lists a .so that links torch
# (DT_NEEDED libc10/libtorch*): a bound on the .so headers read to find out (MAX_OTHER_DISTS:
# on the RECORDs)
MAX_OTHER_SOS = 48


def executable():
    return READ_FOR or sys.executable


def target_version():
    """(major, minor, micro or None) of the interpreter the facts are about; None: unknown."""
    if not READ_FOR:
        return tuple(sys.version_info[:3])
    venv, settings = venv_config()
    for key in ("version", "version_info"):
        parts = settings.get(key, "").split(".")
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            micro = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else None
            return int(parts[0]), int(parts[1]), micro
    base = venv or os.path.dirname(os.path.dirname(os.path.abspath(READ_FOR)))
    for libdir in ("lib", "lib64"):
        try:
            names = sorted(os.listdir(os.path.join(base, libdir)))
        except OSError:
            continue
        for name in names:
            major, dot, minor = name[len("python") :].partition(".")
            if name.startswith("python") and dot and major.isdigit() and minor.isdigit():
                return int(major), int(minor), None
    return None


def read_for_site_packages(prefix, version):
    """The system site dirs of an interpreter installed under ``prefix`` (upstream and Debian
    layouts), for one that is only read."""
    xy = f"python{version[0]}.{version[1]}"
    layouts = ((xy, "site-packages"), (xy, "dist-packages"), ("python3", "dist-packages"))
    return [
        os.path.join(prefix, libdir, name, sub)
        for libdir in ("lib", "lib64")
        for name, sub in layouts
    ] + [os.path.join(prefix, "local", "lib", xy, "dist-packages")]


def venv_config():
    """(venv dir, settings) when this interpreter belongs to a venv — site.venv()'s rule."""
    exe_dir = os.path.dirname(os.path.abspath(executable()))
    for cfg in (
        os.path.join(exe_dir, "pyvenv.cfg"),
        os.path.join(exe_dir, os.pardir, "pyvenv.cfg"),
    ):
        if os.path.isfile(cfg):
            settings = {}
            for line in file_lines(cfg):
                key, sep, value = line.partition("=")
                if sep:
                    settings[key.strip().lower()] = value.strip()
            return os.path.dirname(os.path.abspath(cfg)), settings
    return None, {}


def pth_dirs(sdir):
    """Directories a site dir's .pth files add — read, never executed (import lines skipped)."""
    out = []
    try:
        names = sorted(n for n in os.listdir(sdir) if n.endswith(".pth"))
    except OSError:
        return out
    for name in names:
        try:
            for line in file_lines(os.path.join(sdir, name), 200):
                line = line.strip()
                if line and not line.startswith(("#", "import ", "import\t")):
                    path = os.path.abspath(os.path.join(sdir, line))
                    if os.path.isdir(path):
                        out.append(path)
        except OSError:
            continue
    return out


def venv_site_packages(venv):
    """A venv's own site dirs, as venv creates them. Not site.getsitepackages([venv]): Debian's and
    Ubuntu's patched site.py answers dist-packages there unless site.venv() already ran, and with
    -S it has not. A free-threaded build (abiflags with "t", 3.13t) has its own lib/python3.13t."""
    thread = "t" if "t" in getattr(sys, "abiflags", "") and not READ_FOR else ""
    found = target_version()
    if found is None:
        return []
    version = f"python{found[0]}.{found[1]}{thread}"
    libdirs = []
    platlib = "lib64" if READ_FOR else getattr(sys, "platlibdir", "lib")
    for libdir in (platlib, "lib"):
        if libdir not in libdirs:
            libdirs.append(libdir)
    return [os.path.join(venv, libdir, version, "site-packages") for libdir in libdirs]


def proc_env(name):
    return os.environ.get("DT_PROC_" + name, "")


def user_site():
    """The user site dir (``pip install --user``), from the serving process's HOME and
    PYTHONUSERBASE when this is its interpreter; None when disabled (and for one only read)."""
    if READ_FOR:
        return None
    import site  # here: one only read never needs it (~3 ms of every run's start)

    if PROC:
        if "s" in FLAGS or "S" in FLAGS or (proc_env("PYTHONNOUSERSITE") and "E" not in FLAGS):
            return None
        for name in ("HOME", "PYTHONUSERBASE"):
            if proc_env(name):
                os.environ[name] = ROOT + proc_env(name)
            else:
                os.environ.pop(name, None)
    if not site.check_enableusersite():
        return None
    return site.getusersitepackages()


def pythonpath_dirs():
    """A serving process's PYTHONPATH entries, first on its sys.path (relative ones and empty
    ones from its working directory, as the interpreter resolves them at startup)."""
    if not PROC or not proc_env("PYTHONPATH") or "E" in FLAGS:
        return []
    cwd = proc_env("CWD")
    out = []
    for entry in proc_env("PYTHONPATH").split(os.pathsep):
        if not entry.startswith("/"):
            if not cwd.startswith("/"):
                continue
            entry = os.path.join(cwd, entry)
        out.append(os.path.abspath(ROOT + entry))
    return out


def holds_wanted(directory):
    """Whether a directory has a package or distribution the probe reports."""
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    for name in names:
        if name.endswith((".dist-info", ".egg-info")):
            if wanted(norm(name.rsplit(".", 1)[0].split("-", 1)[0])):
                return True
        elif name in WANTED_IMPORTS and os.path.isdir(os.path.join(directory, name)):
            return True
    return False


def path0_dirs():
    """A serving process's sys.path[0] (its working directory for -m, its script's directory),
    when it holds something that shadows site-packages — a server started inside a FlashInfer
    or PyTorch checkout imports that checkout."""
    path0 = proc_env("PATH0") if PROC and "P" not in FLAGS else ""
    if not path0.startswith("/"):
        return []
    path0 = os.path.abspath(ROOT + path0)
    return [path0] if holds_wanted(path0) else []


def site_dirs():
    """(prefix, site dirs) as site.main() would set them up — computed, since we run with -S so
    that no .pth file executes code. A serving process's sys.path[0] (when it matters) and
    PYTHONPATH dirs come first."""
    venv, settings = venv_config()
    user = user_site()
    version = target_version()
    if venv:
        prefix = venv
        dirs = venv_site_packages(venv)
        # site.venv(): a pyvenv.cfg without the key includes the system site dirs
        if settings.get("include-system-site-packages", "true").lower() == "true":
            if READ_FOR and version and settings.get("home", "").startswith("/"):
                base = ROOT + os.path.dirname(settings["home"].rstrip("/"))
                dirs += read_for_site_packages(base, version)
            elif not READ_FOR:
                import site

                dirs += [user, *site.getsitepackages([sys.base_prefix])]
    elif READ_FOR:
        prefix = os.path.dirname(os.path.dirname(os.path.abspath(READ_FOR)))
        dirs = read_for_site_packages(prefix, version) if version else []
    else:
        import site

        prefix = sys.prefix
        dirs = [user, *site.getsitepackages()]
    if "S" in FLAGS:
        dirs = []
    found = []
    for entry in path0_dirs() + pythonpath_dirs():
        if entry not in found and under_root(entry) and os.path.isdir(entry):
            found.append(entry)
    for entry in dirs:
        if not entry or not os.path.isdir(entry):
            continue
        for d in [os.path.abspath(entry), *pth_dirs(entry)]:
            if d not in found and under_root(d):
                found.append(d)
    return prefix, found


def wanted(dist_name):
    return dist_name in WANTED or dist_name in EXTENSIONS or dist_name.startswith(WANTED_PREFIXES)


def report_dists(sites):
    """Report the wanted distributions; return {extension: (site dir, dist-info dir)}."""
    count = 0
    seen = set()
    found = {}
    others = []  # (dist, site dir, dist-info) of the names not wanted: maybe extensions
    for sdir in sites:
        try:
            names = sorted(os.listdir(sdir))
        except OSError:
            continue
        for entry in names:
            if entry.endswith(".dist-info"):
                meta = "METADATA"
            elif entry.endswith(".egg-info"):
                meta = "PKG-INFO"
            else:
                continue
            dist = norm(entry.rsplit(".", 1)[0].split("-", 1)[0])
            if dist in seen:
                continue
            if not wanted(dist):
                if entry.endswith(".dist-info") and len(others) < MAX_OTHER_DISTS:
                    others.append((dist, sdir, entry))
                continue
            seen.add(dist)
            if dist in EXTENSIONS and entry.endswith(".dist-info"):
                found[dist] = (sdir, entry)
            count += 1
            report_dist(sdir, entry, meta, count)
    budget = [MAX_OTHER_SOS]
    for dist, sdir, entry in others if "torch" in seen else ():
        if dist not in seen and links_torch(sdir, entry, budget):
            seen.add(dist)
            found[dist] = (sdir, entry)
            count += 1
            report_dist(sdir, entry, "METADATA", count)
    return found


def report_dist(sdir, entry, meta, count):
    rec("pydist", INDEX, count, entry)
    report_install(os.path.join(sdir, entry), count)
    path = os.path.join(sdir, entry)
    if os.path.isdir(path):  # an old-style .egg-info may be the PKG-INFO file itself
        path = os.path.join(path, meta)
    torch = entry.startswith("torch-")
    try:
        for line in file_lines(path, 200 if torch else 40):
            if not line.strip():
                break
            if line.startswith(("Name:", "Version:")):
                rec("pymeta", INDEX, count, line)
            elif torch and line.startswith("Requires-Dist: nvidia-cudnn"):
                rec("py", INDEX, "torch_requires", line[len("Requires-Dist: ") :])
    except OSError as exc:
        rec("py", INDEX, "warning", f"{host(path)}: {exc.strerror or exc}")


# ---- what the host records about its changes (record kind pyinst; probes/README.md) ----------
def report_install(dist_dir, count):
    """Who installed a distribution (its dist-info ``INSTALLER``: pip, uv, conda…) and when (the
    dist-info dir's mtime): read, never run."""
    installer = ""
    try:
        mtime = int(os.stat(dist_dir).st_mtime)
    except OSError:
        return
    if os.path.isdir(dist_dir):
        try:
            installer = next(file_lines(os.path.join(dist_dir, "INSTALLER"), 1), "").strip()
        except OSError:
            installer = ""
    rec("pyinst", INDEX, count, installer, mtime)


def editable_packages(sites):
    """{top-level package: its source dir} from setuptools' editable-install finders
    (``__editable___<dist>_finder.py``, with ``MAPPING = {...}`` on one line): the packages a
    ``pip install -e`` of a non-flat project imports from its checkout. Read, never run."""
    out = {}
    for sdir in sites:
        try:
            names = sorted(n for n in os.listdir(sdir) if n.startswith("__editable___"))
        except OSError:
            continue
        for name in names:
            if not name.endswith("_finder.py"):
                continue
            try:
                for line in file_lines(os.path.join(sdir, name), 40):
                    if line.startswith(("MAPPING =", "MAPPING:")):
                        import ast  # only here: it costs a few ms

                        mapping = ast.literal_eval(line.partition("=")[2].strip())
                        for pkg, path in mapping.items():
                            if "." not in pkg and str(path).startswith("/"):
                                out.setdefault(pkg, ROOT + path)
                        break
            except (OSError, ValueError, SyntaxError, AttributeError) as exc:
                rec("py", INDEX, "warning", f"{host(os.path.join(sdir, name))}: {exc}")
    return out


def find_file(sites, editable, relpath):
    """Where the import system finds ``relpath`` (``torch/version.py``): the first site dir that
    has it, else the editable finders (they come after the path entries in sys.meta_path)."""
    for sdir in sites:
        path = os.path.join(sdir, relpath)
        if os.path.isfile(path):
            return path
    top, _, rest = relpath.partition(os.sep)
    if top in editable:
        path = os.path.join(editable[top], rest)
        if under_root(path) and os.path.isfile(path):
            return path
    return None


def report_file(sites, editable, relpath, label):
    path = find_file(sites, editable, relpath)
    if path:
        try:
            for line in file_lines(path):
                rec("pyfile", INDEX, label, line)
        except OSError as exc:
            rec("py", INDEX, "warning", f"{host(path)}: {exc.strerror or exc}")


def report_pip_nvcc(sites):
    for sdir in sites:
        nvidia = os.path.join(sdir, "nvidia")
        try:
            subdirs = sorted(os.listdir(nvidia))
        except OSError:
            continue
        for sub in subdirs:
            nvcc = os.path.join(nvidia, sub, "bin", "nvcc")
            if os.path.isfile(nvcc):
                rec("py", INDEX, "pip_nvcc", host(nvcc))


def report_triton_ptxas(sites, editable):
    """The ptxas binaries bundled in the Triton this interpreter imports (probe.sh runs each)."""
    init = find_file(sites, editable, os.path.join("triton", "__init__.py"))
    if not init:
        return
    bindir = os.path.join(os.path.dirname(init), "backends", "nvidia", "bin")
    try:
        names = sorted(n for n in os.listdir(bindir) if n.startswith("ptxas"))
    except OSError:
        return
    rec("py", INDEX, "triton_bin", host(bindir))
    for name in names:
        if os.path.isfile(os.path.join(bindir, name)):
            rec("py", INDEX, "triton_ptxas", host(os.path.join(bindir, name)))


def report_wheel_libs(sites):
    """The CUDA libraries the nvidia-* wheels put in site-packages/nvidia/*/lib, and the
    distributions whose RECORD lists each (record ``nvown``: dist, path); those two list."""
    shared = []
    for sdir in sites:
        owners = wheel_lib_owners(sdir)
        nvidia = os.path.join(sdir, "nvidia")
        try:
            subdirs = sorted(os.listdir(nvidia))
        except OSError:
            continue
        for sub in subdirs:
            lib = os.path.join(nvidia, sub, "lib")
            try:
                names = sorted(os.listdir(lib))
            except OSError:
                continue
            for name in names:
                if name.startswith(CUDA_LIB_PREFIXES):
                    rec("py", INDEX, "nvlib", host(os.path.join(lib, name)))
                    dists = owners.get(f"nvidia/{sub}/lib/{name}", ())
                    for dist in dists:
                        rec("py", INDEX, "nvown", f"{dist} {host(os.path.join(lib, name))}")
                    if len(dists) > 1:
                        shared.append(name)
    return shared


MAX_TORCH_LIB_NAMES = 400  # names of torch/lib looked at for bundled CUDA libraries


def report_torch_lib(sites, editable):
    """How torch's own libraries find the CUDA libraries they need: the search path of
    ``torch/lib/libtorch_global_deps.so`` (``torch_rpath``: DT_RPATH or DT_RUNPATH), the CUDA
    sonames it needs (``torch_needs``) and the CUDA libraries bundled beside it in ``torch/lib``
    (``torchlib``: the 1.x "fat" wheels), bounded."""
    path = find_file(sites, editable, os.path.join("torch", "lib", "libtorch_global_deps.so"))
    if not path:
        return
    lib = os.path.dirname(path)
    rec("py", INDEX, "torch_lib", host(lib))
    try:
        elf = Elf(path)
    except (OSError, ValueError) as exc:
        rec("py", INDEX, "warning", f"{host(path)}: {exc}")
        return
    try:
        found = elf.search_path()
        needed = elf.needed()
    finally:
        elf.close()
    if found:
        rec("py", INDEX, "torch_rpath", f"{found[0]} {found[1]}")
    for name in needed:
        if name.startswith(CUDA_LIB_PREFIXES):
            rec("py", INDEX, "torch_needs", name)
    try:
        with os.scandir(lib) as it:
            names = sorted(e.name for e in islice(it, MAX_TORCH_LIB_NAMES))
    except OSError:
        return
    for name in names:
        if name.startswith(CUDA_LIB_PREFIXES):
            rec("py", INDEX, "torchlib", host(os.path.join(lib, name)))


def report_pip(sites):
    """Whether ``python -m pip`` can work: a pip package in one of the site dirs."""
    found = any(os.path.isfile(os.path.join(s, "pip", "__init__.py")) for s in sites)
    rec("py", INDEX, "pip", "1" if found else "0")


def report_torch_archs(sites, editable):
    lib = find_file(sites, editable, os.path.join("torch", "lib", "libtorch_python.so"))
    if lib:
        try:
            flags = arch_flags(lib)
        except (OSError, ValueError) as exc:
            rec("py", INDEX, "warning", f"{host(lib)}: {exc}")
            return
        if flags:
            rec("pyfile", INDEX, "torch_arch_flags", flags)


def torch_libs(sites):
    libs = {}
    for name in TORCH_LIBS:
        path = find_file(sites, {}, os.path.join("torch", "lib", name))
        if path:
            try:
                libs[name] = Elf(path)
            except (OSError, ValueError) as exc:
                rec("py", INDEX, "warning", f"{host(path)}: {exc}")
    return libs


def report_extensions(sites, found):
    """What each compiled extension declares about the torch it was built for, and whether the
    torch installed here exports every torch symbol its .so files need (check_extensions)."""
    if found:
        check_extensions(found, torch_libs(sites))


def main():
    version = target_version()
    if version is not None:
        rec("py", INDEX, "version", ".".join(str(n) for n in version if n is not None))
    rec("py", INDEX, "executable", host(executable()))
    prefix, sites = site_dirs()
    rec("py", INDEX, "prefix", host(prefix))
    for sdir in sites:
        rec("py", INDEX, "site", host(sdir))
    extensions = report_dists(sites)
    editable = editable_packages(sites)
    report_file(sites, editable, os.path.join("torch", "version.py"), "torch_version")
    meta = os.path.join("flashinfer", "_build_meta.py")
    report_file(sites, editable, meta, "flashinfer_build_meta")
    ds_ops = os.path.join("deepspeed", "git_version_info_installed.py")
    report_file(sites, editable, ds_ops, "deepspeed_installed")
    report_torch_archs(sites, editable)
    report_pip_nvcc(sites)
    report_extensions(sites, extensions)
    report_triton_ptxas(sites, editable)
    shared = report_wheel_libs(sites)
    torch_cuda = find_file(sites, editable, os.path.join("torch", "lib", "libtorch_cuda.so"))
    if torch_cuda and "libnccl.so.2" in shared:  # two NCCL wheels wrote it: which one is there
        check_torch_nccl(torch_cuda)
    report_torch_lib(sites, editable)
    report_pip(sites)


def configure():
    """The request's DT_* values (os.environ) as the globals the report reads."""
    global PROC, READ_FOR, FLAGS
    PROC = os.environ.get("DT_PROC") == "1"
    READ_FOR = os.environ.get("DT_READ_FOR", "")
    FLAGS = os.environ.get("DT_PROC_FLAGS", "") if PROC else ""
    if "I" in FLAGS:  # isolated mode: -E -s -P
        FLAGS += "EsP"


def answer():
    configure()
    try:
        main()
    except Exception as exc:  # the probe must report, never crash
        rec("py", INDEX, "error", f"{type(exc).__name__}: {exc}")
    sys.stdout.flush()


if sys.argv[2:3] == ["views"]:  # the helper's word, never the host's environment's
    answer_views(answer, os.environ.get("DT_VIEWS", ""), os.environ.get("DT_VIEW_MARK", ""))
else:
    answer()
