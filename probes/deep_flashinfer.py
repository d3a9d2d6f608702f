"""Ground truth for ``diagnose --deep``: ask the host's own FlashInfer what it decided.

Run with the interpreter under inspection and the environment of the process being judged
(``env KEY=VALUE … python3 - --unset NAME,… < deep_flashinfer.py``). It imports FlashInfer
in this fresh process, so per-process caches start empty exactly as in a server, and prints
one line: ``@@deep<TAB>{json}``. Importing FlashInfer initialises CUDA in this process; it
never compiles, downloads or writes caches beyond what ``import`` itself does.

Python ≥ 3.8, stdlib only (plus FlashInfer and torch, which are what is being inspected).
"""

import json
import logging
import os
import sys

SENTINEL = "@@deep"


class _Capture(logging.Handler):
    def __init__(self):
        logging.Handler.__init__(self, level=logging.WARNING)
        self.messages = []
        self._records = []

    def emit(self, record):  # attached to several loggers: count each record once
        if any(seen is record for seen in self._records):
            return
        self._records.append(record)
        try:
            self.messages.append(record.getMessage())
        except Exception as e:  # a broken log call must not hide the rest
            self.messages.append(f"unformattable log record: {e!r}")


def _error(e):
    return f"{type(e).__name__}: {e}"


def _arch_text(arch):
    return f"{arch[0]}.{arch[1]}"


def collect():
    """What FlashInfer decides in this process, as a JSON-able dict."""
    capture = _Capture()
    root = logging.getLogger()
    root.addHandler(capture)
    for name in ("flashinfer", "flashinfer.jit", "flashinfer.compilation_context"):
        logging.getLogger(name).addHandler(capture)
    out = {
        "python": sys.executable,
        "version": None,
        "import_error": None,
        "cuda_home": None,
        "cuda_home_error": None,
        "cuda_version": None,
        "cuda_version_error": None,
        "target_cuda_archs": None,
        "check_cuda_arch": None,
        "check_message": None,
        "workspace": None,
        "warnings": capture.messages,
    }
    try:
        import flashinfer
    except Exception as e:
        out["import_error"] = _error(e)
        return out
    out["version"] = getattr(flashinfer, "__version__", None)
    try:
        from flashinfer.jit import cpp_ext
    except Exception as e:
        out["cuda_home_error"] = _error(e)
        cpp_ext = None
    if cpp_ext is not None and hasattr(cpp_ext, "get_cuda_path"):
        try:
            out["cuda_home"] = cpp_ext.get_cuda_path()
        except Exception as e:
            out["cuda_home_error"] = _error(e)
    if cpp_ext is not None and hasattr(cpp_ext, "get_cuda_version"):
        try:
            out["cuda_version"] = str(cpp_ext.get_cuda_version())
        except Exception as e:
            out["cuda_version_error"] = _error(e)
    try:
        from flashinfer.jit import core
    except Exception as e:
        out["check_message"] = _error(e)
        return out
    context = getattr(core, "current_compilation_context", None)
    if context is not None:
        archs = sorted(context.TARGET_CUDA_ARCHS, key=lambda a: (a[0], str(a[1])))
        out["target_cuda_archs"] = [_arch_text(a) for a in archs]
    try:
        core.check_cuda_arch()
        out["check_cuda_arch"] = "pass"
    except Exception as e:
        out["check_cuda_arch"] = "fail"
        out["check_message"] = _error(e)
    try:
        from flashinfer.jit import env as jit_env

        out["workspace"] = str(jit_env.FLASHINFER_WORKSPACE_DIR)
    except Exception:
        out["workspace"] = None
    return out


def main(argv=None):
    """``--unset NAME,NAME``: remove variables first (the judged process does not have them)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "--unset":
        for name in args[1].split(","):
            os.environ.pop(name, None)
    result = collect()
    sys.stdout.write(SENTINEL + "\t" + json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
