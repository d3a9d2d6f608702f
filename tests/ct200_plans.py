"""The reference host's facts and host for fix-plan tests: CT200 with /usr/local/cuda-13.0 beside
12.8 and an sglang.service, mirroring the fake host; each fix's default parameters, and
``plan_for`` which builds a fix's plan on it at a fixed stamp.
"""

from __future__ import annotations

import dataclasses

from tui.core.facts import EnvContext, Facts, HostInfo, PythonEnv, Toolkit
from tui.core.fixes import build_plan
from tui.core.hosts import Host

STAMP = "20261129-120000"
ROOT = "/srv/fake hosts/ct200"
VENV = "/root/venv_sglang211"
PY = f"{VENV}/bin/python3"
SITE = f"{VENV}/lib/python3.12/site-packages"
SERVICE_LABEL = "pid 4242 sglang.launch_server"


def ct200_facts(**host: object) -> Facts:
    info = {
        "hostname": "ct200",
        "os_id": "ubuntu",
        "os_version_id": "22.04",
        "arch": "x86_64",
        "user": "root",
        "is_root": True,
        **host,
    }
    return Facts(
        host=HostInfo(**info),  # type: ignore[arg-type]
        toolkits=(
            Toolkit(
                home="/usr/local/cuda-12.8", nvcc="/usr/local/cuda-12.8/bin/nvcc", version="12.8"
            ),
            Toolkit(
                home="/usr/local/cuda-13.0", nvcc="/usr/local/cuda-13.0/bin/nvcc", version="13.0"
            ),
        ),
        contexts=(
            EnvContext(kind="ssh", label="ssh session", vars={"CUDA_HOME": "/usr/local/cuda-12.8"}),
            EnvContext(
                kind="process",
                label=SERVICE_LABEL,
                pid=4242,
                exe=PY,
                cmdline=f"{PY} -m sglang.launch_server --model-path /models/k2 --tp 8",
                unit="sglang.service",
                vars={
                    "CUDA_HOME": "/usr/local/cuda-12.8",
                    "PATH": f"/usr/local/cuda-12.8/bin:{VENV}/bin:/usr/bin:/bin",
                },
            ),
        ),
        pythons=(
            PythonEnv(
                path=PY,
                prefix=VENV,
                context=SERVICE_LABEL,
                site_packages=(SITE,),
                torch_version="2.9.1+cu130",
                torch_cuda="13.0",
                flashinfer_version="0.6.8",
                packages={"sglang": "0.5.5", "nvidia-cuda-runtime": "13.0.96"},
                jit_cache_dirs=("/root/.cache/flashinfer/0.6.8",),
            ),
        ),
    )


CT200 = Host(name="ct200", ssh="root@10.1.2.200", root=ROOT)
# the apt steps run dpkg, curl and apt-get: on a root-prefixed host only the stand-ins the host
# object names (as the demo's and the tests' trees do), never the inspecting machine's own
TOOLS = {t: f"/srv/fake tools/{t}" for t in ("dpkg", "curl", "apt-get")}
CT200_TOOLS = dataclasses.replace(CT200, standins=TOOLS)
HOSTS = {"install-cuda-toolkit-apt": CT200_TOOLS}

PARAMS = {
    "use-installed-toolkit": {"path": "/usr/local/cuda-13.0"},
    "install-cuda-toolkit-pip": {},
    "install-cuda-toolkit-apt": {},
    "set-flashinfer-arch-list": {"value": "12.0a"},
    "sampling-backend-fallback": {},
    "clear-flashinfer-jit-cache": {},
}


def plan_for(fix_id: str, facts: Facts | None = None, host: Host | None = None, **params: str):
    host = host or HOSTS.get(fix_id, CT200)
    chosen = params or PARAMS[fix_id]
    return build_plan(facts or ct200_facts(), host, fix_id, chosen, stamp=STAMP)
