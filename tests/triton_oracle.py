"""Run a real Triton release's own ptxas selection code, outside Triton.

``python triton_oracle.py EXTRACTED_DIR FAKE_PTXAS`` — EXTRACTED_DIR holds ``triton/knobs.py``
(3.4+), ``triton/backends/nvidia/compiler.py`` and ``…/bin/ptxas*`` from the wheel. The
functions that choose the ptxas (``_path_to_binary``/``get_ptxas``/``knobs.env_nvidia_tool``),
name the target (``sm_arch_from_capability`` or the inline suffix) and map a ptxas release to
a PTX version (``ptx_get_version``) are taken from the wheel's source with ``ast`` and run as
they are; only the compiled ``triton._C.libtriton`` (its ``getenv``) and ``triton._utils``
names the module imports are stood in for. Prints one JSON object.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import sysconfig
import types
from pathlib import Path

ARCHS = (80, 90, 100, 103, 110, 120, 121)
VARS = ("TRITON_PTXAS_PATH", "TRITON_PTXAS-BLACKWELL_PATH", "TRITON_PTXAS_BLACKWELL_PATH")
CUDAS = ("11.8", "12.4", "12.6", "12.7", "12.8", "12.9", "13.0", "13.4")


def functions(path: Path, names: tuple[str, ...]) -> str:
    tree = ast.parse(path.read_text())
    wanted = [
        node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in names
    ]
    for node in wanted:  # keep functools.lru_cache; drop annotations' runtime needs
        node.returns = None
    return "\n\n".join(ast.unparse(node) for node in wanted)


def load_knobs(root: Path) -> types.ModuleType | None:
    path = root / "triton" / "knobs.py"
    if not path.is_file() or "class env_nvidia_tool" not in path.read_text():
        return None
    c = types.ModuleType("triton._C")
    lib = types.ModuleType("triton._C.libtriton")
    lib.getenv = os.environ.get  # type: ignore[attr-defined]
    lib.getenv_bool = lambda key, default=False: (  # type: ignore[attr-defined]
        os.environ.get(key, "1" if default else "0").lower() in ("1", "true", "on", "yes")
    )
    utils = types.ModuleType("triton._utils")
    utils.FP_FUSION_DEFAULT_WARNING = ""  # type: ignore[attr-defined]
    utils.warn_once = lambda *a, **k: None  # type: ignore[attr-defined]
    package = types.ModuleType("triton")
    package.__path__ = [str(root / "triton")]  # type: ignore[attr-defined]
    sys.modules.update(
        {"triton": package, "triton._C": c, "triton._C.libtriton": lib, "triton._utils": utils}
    )
    spec = importlib.util.spec_from_file_location("triton.knobs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["triton.knobs"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    root, fake = Path(sys.argv[1]), sys.argv[2]
    compiler = root / "triton" / "backends" / "nvidia" / "compiler.py"
    source = compiler.read_text()
    knobs = load_knobs(root)
    space: dict = {
        "os": os,
        "re": re,
        "subprocess": subprocess,
        "sysconfig": sysconfig,
        "functools": functools,
        "__file__": str(compiler),
        "knobs": knobs,
    }
    exec(  # the wheel's own functions, unchanged
        functions(
            compiler,
            ("_path_to_binary", "get_ptxas", "sm_arch_from_capability", "ptx_get_version"),
        ),
        space,
    )
    get_ptxas = space.get("get_ptxas")
    takes_arch = get_ptxas is not None and bool(inspect.signature(get_ptxas).parameters)

    def chosen(arch: int) -> str:
        if knobs is not None:  # a fresh read of the environment, as a new process would do
            for tool in vars(type(knobs.nvidia)).values():
                if hasattr(tool, "cache"):
                    tool.cache = {}
        for name in ("_path_to_binary", "get_ptxas"):
            fn = space.get(name)
            if fn is not None and hasattr(fn, "cache_clear"):
                fn.cache_clear()
        if get_ptxas is None:
            return space["_path_to_binary"]("ptxas")[0]
        tool = get_ptxas(arch) if takes_arch else get_ptxas()
        return tool[0] if isinstance(tool, tuple) else tool.path

    picks: dict[str, dict[str, str]] = {}
    for var in ("", *VARS):
        for name in VARS:
            os.environ.pop(name, None)
        if var:
            os.environ[var] = fake
        picks[var or "-"] = {
            str(arch): ("override" if chosen(arch) == fake else Path(chosen(arch)).name)
            for arch in ARCHS
        }
    if "sm_arch_from_capability" in space:
        targets = {str(a): space["sm_arch_from_capability"](a) for a in ARCHS}
    else:  # 3.0-3.2: the suffix is inline in make_cubin
        m = re.search(r"suffix = '(a ?)' if capability == 90 else '( ?)'", source)
        assert m, "no inline suffix in this compiler.py"
        targets = {str(a): f"sm_{a}a" if a == 90 else f"sm_{a}" for a in ARCHS}
    accepts = {}
    for cuda in CUDAS:
        try:
            space["ptx_get_version"](cuda)
            accepts[cuda] = True
        except RuntimeError:
            accepts[cuda] = False
    print(json.dumps({"picks": picks, "targets": targets, "accepts": accepts}))


if __name__ == "__main__":
    main()
