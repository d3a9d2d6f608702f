"""``diagnose --deep``: does CUDA initialise here? ``cuInit(0)`` and the device count, through
``ctypes`` on the ``libcuda.so.1`` the loader finds — never torch or any CUDA package.

Run with the interpreter under inspection and the environment of the process being judged
(``env KEY=VALUE … python3 - < deep_cuinit.py``). Prints one line, ``@@cuinit<TAB>{json}``:
``library`` (the libcuda file this process mapped, from ``/proc/self/maps``), ``load_error``,
``cuinit`` (the CUresult), ``error_name`` (the driver's own ``cuGetErrorName``),
``device_count``, ``driver_version`` (``cuDriverGetVersion``, e.g. 12080).

Python >= 3.8, stdlib only.
"""

import ctypes
import json
import sys

SENTINEL = "@@cuinit"


def _mapped_libcuda():
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and "/libcuda.so" in parts[5]:
                    return parts[5].strip()
    except OSError:
        return None
    return None


def collect():
    out = {
        "python": sys.executable,
        "library": None,
        "load_error": None,
        "cuinit": None,
        "error_name": None,
        "device_count": None,
        "driver_version": None,
    }
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        out["load_error"] = str(e)
        return out
    out["library"] = _mapped_libcuda()
    rc = int(lib.cuInit(ctypes.c_uint(0)))
    out["cuinit"] = rc
    version = ctypes.c_int(0)
    if lib.cuDriverGetVersion(ctypes.byref(version)) == 0:
        out["driver_version"] = version.value
    if rc != 0:
        name = ctypes.c_char_p()
        if lib.cuGetErrorName(rc, ctypes.byref(name)) == 0 and name.value:
            out["error_name"] = name.value.decode("ascii", "replace")
        return out
    count = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(count)) == 0:
        out["device_count"] = count.value
    return out


if __name__ == "__main__":
    print(SENTINEL + "\t" + json.dumps(collect()), flush=True)
