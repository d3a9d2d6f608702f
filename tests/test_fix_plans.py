# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""Fix plans are data: exact commands per fix and per host, quoting, parameters, idempotence.

The facts below mirror the fake hosts (reference CT200 with /usr/local/cuda-13.0 beside 12.8
and an sglang.service; Ubuntu 22.04/24.04, Debian 12, arm64 variants). The shell snippets of
the plans are also run here, locally, against throwaway directory trees: quoting of hostile
paths, idempotence and undo are properties of the real shell, not of string comparisons.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from plan_golden import shown

from tui.core.facts import DriverInfo, EnvContext, Facts, HostInfo, PythonEnv, Toolkit
from tui.core.fixes import FixError, build_plan
from tui.core.fixes.confine import with_resolver
from tui.core.fixes.plan import parse_flags
from tui.core.fixes.restart import restart_plan
from tui.core.fixes.shell import daemon_reload
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

# Each fix's dry-run commands on the reference host, separated by lines of five dashes.
GOLDEN = {
    "use-installed-toolkit": r"""
set -e
dt_in_root() { … }
d="$(dt_in_root '/srv/fake hosts/ct200' /etc/systemd/system/sglang.service.d)"
f="$d"/50-detective-tui-cuda.conf
c='# Written by detective-tui (fix use-installed-toolkit). Delete this file to undo.
[Service]
Environment="CUDA_HOME=/usr/local/cuda-13.0"
Environment="PATH=/usr/local/cuda-13.0/bin:/root/venv_sglang211/bin:/usr/bin:/bin"'
if [ -f "$f" ] && [ "$(cat "$f")" = "$c" ]; then
  echo '@@dt unchanged 50-detective-tui-cuda.conf already in place'
else
  if [ ! -d "$d" ]; then mkdir -p "$d"; : > "$d"/.detective-tui-20261129-120000.dir; fi
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  printf '%s\n' "$c" > "$t"
  mv -f "$t" "$f"
  echo '@@dt changed 50-detective-tui-cuda.conf written'
fi
echo '@@dt unchanged skipped systemctl daemon-reload: ct200 is a filesystem under /srv/fake hosts/ct200, not a running system: run systemctl daemon-reload on the machine that runs it'
-----
set -e
dt_in_root() { … }
if [ -f "$(dt_in_root '/srv/fake hosts/ct200' /root/venv_sglang211/bin/activate)" ]; then
f="$(dt_in_root '/srv/fake hosts/ct200' /root/venv_sglang211/bin/activate)"
b='# >>> detective-tui cuda >>>
export CUDA_HOME=/usr/local/cuda-13.0
export PATH=/usr/local/cuda-13.0/bin:"$PATH"
# <<< detective-tui cuda <<<'
if [ -f "$f" ] && grep -qxF '# >>> detective-tui cuda >>>' "$f" && ! grep -qxF '# <<< detective-tui cuda <<<' "$f"; then printf '%s %s\n' "$f" 'has a detective-tui cuda block without its end marker; fix it by hand' >&2; exit 1; fi
if [ -f "$f" ] && [ "$(sed -n '/^# >>> detective-tui cuda >>>$/,/^# <<< detective-tui cuda <<<$/p' "$f")" = "$b" ]; then
  echo '@@dt unchanged block cuda already in place'
else
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  if [ -f "$f" ]; then sed '/^# >>> detective-tui cuda >>>$/,/^# <<< detective-tui cuda <<<$/d' "$f" > "$t"; fi
  if [ -s "$t" ] && [ -n "$(tail -c 1 "$t")" ]; then echo >> "$t"; fi
  printf '%s\n' "$b" >> "$t"
  mv -f "$t" "$f"
  echo '@@dt changed block cuda written'
fi
else
  echo '@@dt unchanged no activate script at /root/venv_sglang211/bin/activate'
fi
""",
    "install-cuda-toolkit-pip": r"""
set -e
dt_in_root() { … }
if [ -x '/srv/fake hosts/ct200/root/venv_sglang211/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc' ]; then
  echo '@@dt unchanged /root/venv_sglang211/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc already installed'
else
  : > "$(dt_in_root '/srv/fake hosts/ct200' /root/venv_sglang211/lib/python3.12/site-packages/nvidia-cu13.detective-tui-20261129-120000.absent)"
  '/srv/fake hosts/ct200/root/venv_sglang211/bin/python3' -m pip install --disable-pip-version-check 'cuda-toolkit[nvcc,cudart,crt,nvvm,cccl]==13.0.2'
  [ -x '/srv/fake hosts/ct200/root/venv_sglang211/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc' ] || { echo 'pip finished but /root/venv_sglang211/lib/python3.12/site-packages/nvidia/cu13/bin/nvcc is missing' >&2; exit 1; }
  echo '@@dt changed installed cuda-toolkit[nvcc,cudart,crt,nvvm,cccl]==13.0.2'
fi
-----
set -e
dt_in_root() { … }
d="$(dt_in_root '/srv/fake hosts/ct200' /etc/systemd/system/sglang.service.d)"
f="$d"/50-detective-tui-cuda.conf
c='# Written by detective-tui (fix install-cuda-toolkit-pip). Delete this file to undo.
[Service]
Environment="CUDA_HOME=/root/venv_sglang211/lib/python3.12/site-packages/nvidia/cu13"
Environment="PATH=/root/venv_sglang211/lib/python3.12/site-packages/nvidia/cu13/bin:/root/venv_sglang211/bin:/usr/bin:/bin"'
if [ -f "$f" ] && [ "$(cat "$f")" = "$c" ]; then
  echo '@@dt unchanged 50-detective-tui-cuda.conf already in place'
else
  if [ ! -d "$d" ]; then mkdir -p "$d"; : > "$d"/.detective-tui-20261129-120000.dir; fi
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  printf '%s\n' "$c" > "$t"
  mv -f "$t" "$f"
  echo '@@dt changed 50-detective-tui-cuda.conf written'
fi
echo '@@dt unchanged skipped systemctl daemon-reload: ct200 is a filesystem under /srv/fake hosts/ct200, not a running system: run systemctl daemon-reload on the machine that runs it'
-----
set -e
dt_in_root() { … }
if [ -f "$(dt_in_root '/srv/fake hosts/ct200' /root/venv_sglang211/bin/activate)" ]; then
f="$(dt_in_root '/srv/fake hosts/ct200' /root/venv_sglang211/bin/activate)"
b='# >>> detective-tui cuda >>>
export CUDA_HOME=/root/venv_sglang211/lib/python3.12/site-packages/nvidia/cu13
export PATH=/root/venv_sglang211/lib/python3.12/site-packages/nvidia/cu13/bin:"$PATH"
# <<< detective-tui cuda <<<'
if [ -f "$f" ] && grep -qxF '# >>> detective-tui cuda >>>' "$f" && ! grep -qxF '# <<< detective-tui cuda <<<' "$f"; then printf '%s %s\n' "$f" 'has a detective-tui cuda block without its end marker; fix it by hand' >&2; exit 1; fi
if [ -f "$f" ] && [ "$(sed -n '/^# >>> detective-tui cuda >>>$/,/^# <<< detective-tui cuda <<<$/p' "$f")" = "$b" ]; then
  echo '@@dt unchanged block cuda already in place'
else
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  if [ -f "$f" ]; then sed '/^# >>> detective-tui cuda >>>$/,/^# <<< detective-tui cuda <<<$/d' "$f" > "$t"; fi
  if [ -s "$t" ] && [ -n "$(tail -c 1 "$t")" ]; then echo >> "$t"; fi
  printf '%s\n' "$b" >> "$t"
  mv -f "$t" "$f"
  echo '@@dt changed block cuda written'
fi
else
  echo '@@dt unchanged no activate script at /root/venv_sglang211/bin/activate'
fi
""",
    "install-cuda-toolkit-apt": r"""
set -e
dt_in_root() { … }
if '/srv/fake tools/dpkg' -s cuda-keyring >/dev/null 2>&1; then
  echo '@@dt unchanged cuda-keyring already installed'
else
  mkdir -p "$(dt_in_root '/srv/fake hosts/ct200' /var/lib/detective-tui)"
  : > "$(dt_in_root '/srv/fake hosts/ct200' /var/lib/detective-tui/cuda-keyring.detective-tui-20261129-120000.absent)"
  t=$(mktemp -d)
  '/srv/fake tools/curl' -fsSL -o "$t"/cuda-keyring_1.1-1_all.deb https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/cuda-keyring_1.1-1_all.deb
  '/srv/fake tools/dpkg' -i "$t"/cuda-keyring_1.1-1_all.deb
  rm -rf "$t"
  echo '@@dt changed installed cuda-keyring'
fi
-----
set -e
'/srv/fake tools/apt-get' update
-----
set -e
dt_in_root() { … }
if [ -x '/srv/fake hosts/ct200/usr/local/cuda-13.0/bin/nvcc' ]; then
  echo '@@dt unchanged /usr/local/cuda-13.0/bin/nvcc already installed'
else
  mkdir -p "$(dt_in_root '/srv/fake hosts/ct200' /var/lib/detective-tui)"
  : > "$(dt_in_root '/srv/fake hosts/ct200' /var/lib/detective-tui/cuda-toolkit-13-0.detective-tui-20261129-120000.absent)"
  DEBIAN_FRONTEND=noninteractive '/srv/fake tools/apt-get' install -y --no-install-recommends cuda-toolkit-13-0
  [ -x '/srv/fake hosts/ct200/usr/local/cuda-13.0/bin/nvcc' ] || { echo 'apt-get left no /usr/local/cuda-13.0/bin/nvcc' >&2; exit 1; }
  echo '@@dt changed installed cuda-toolkit-13-0'
fi
-----
set -e
dt_in_root() { … }
d="$(dt_in_root '/srv/fake hosts/ct200' /etc/systemd/system/sglang.service.d)"
f="$d"/50-detective-tui-cuda.conf
c='# Written by detective-tui (fix install-cuda-toolkit-apt). Delete this file to undo.
[Service]
Environment="CUDA_HOME=/usr/local/cuda-13.0"
Environment="PATH=/usr/local/cuda-13.0/bin:/root/venv_sglang211/bin:/usr/bin:/bin"'
if [ -f "$f" ] && [ "$(cat "$f")" = "$c" ]; then
  echo '@@dt unchanged 50-detective-tui-cuda.conf already in place'
else
  if [ ! -d "$d" ]; then mkdir -p "$d"; : > "$d"/.detective-tui-20261129-120000.dir; fi
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  printf '%s\n' "$c" > "$t"
  mv -f "$t" "$f"
  echo '@@dt changed 50-detective-tui-cuda.conf written'
fi
echo '@@dt unchanged skipped systemctl daemon-reload: ct200 is a filesystem under /srv/fake hosts/ct200, not a running system: run systemctl daemon-reload on the machine that runs it'
-----
set -e
dt_in_root() { … }
if [ -f "$(dt_in_root '/srv/fake hosts/ct200' /root/venv_sglang211/bin/activate)" ]; then
f="$(dt_in_root '/srv/fake hosts/ct200' /root/venv_sglang211/bin/activate)"
b='# >>> detective-tui cuda >>>
export CUDA_HOME=/usr/local/cuda-13.0
export PATH=/usr/local/cuda-13.0/bin:"$PATH"
# <<< detective-tui cuda <<<'
if [ -f "$f" ] && grep -qxF '# >>> detective-tui cuda >>>' "$f" && ! grep -qxF '# <<< detective-tui cuda <<<' "$f"; then printf '%s %s\n' "$f" 'has a detective-tui cuda block without its end marker; fix it by hand' >&2; exit 1; fi
if [ -f "$f" ] && [ "$(sed -n '/^# >>> detective-tui cuda >>>$/,/^# <<< detective-tui cuda <<<$/p' "$f")" = "$b" ]; then
  echo '@@dt unchanged block cuda already in place'
else
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  if [ -f "$f" ]; then sed '/^# >>> detective-tui cuda >>>$/,/^# <<< detective-tui cuda <<<$/d' "$f" > "$t"; fi
  if [ -s "$t" ] && [ -n "$(tail -c 1 "$t")" ]; then echo >> "$t"; fi
  printf '%s\n' "$b" >> "$t"
  mv -f "$t" "$f"
  echo '@@dt changed block cuda written'
fi
else
  echo '@@dt unchanged no activate script at /root/venv_sglang211/bin/activate'
fi
""",
    "set-flashinfer-arch-list": r"""
set -e
dt_in_root() { … }
d="$(dt_in_root '/srv/fake hosts/ct200' /etc/systemd/system/sglang.service.d)"
f="$d"/50-detective-tui-arch-list.conf
c='# Written by detective-tui (fix set-flashinfer-arch-list). Delete this file to undo.
[Service]
Environment="FLASHINFER_CUDA_ARCH_LIST=12.0a"'
if [ -f "$f" ] && [ "$(cat "$f")" = "$c" ]; then
  echo '@@dt unchanged 50-detective-tui-arch-list.conf already in place'
else
  if [ ! -d "$d" ]; then mkdir -p "$d"; : > "$d"/.detective-tui-20261129-120000.dir; fi
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  printf '%s\n' "$c" > "$t"
  mv -f "$t" "$f"
  echo '@@dt changed 50-detective-tui-arch-list.conf written'
fi
echo '@@dt unchanged skipped systemctl daemon-reload: ct200 is a filesystem under /srv/fake hosts/ct200, not a running system: run systemctl daemon-reload on the machine that runs it'
-----
set -e
dt_in_root() { … }
if [ -f "$(dt_in_root '/srv/fake hosts/ct200' /root/venv_sglang211/bin/activate)" ]; then
f="$(dt_in_root '/srv/fake hosts/ct200' /root/venv_sglang211/bin/activate)"
b='# >>> detective-tui arch-list >>>
export FLASHINFER_CUDA_ARCH_LIST=12.0a
# <<< detective-tui arch-list <<<'
if [ -f "$f" ] && grep -qxF '# >>> detective-tui arch-list >>>' "$f" && ! grep -qxF '# <<< detective-tui arch-list <<<' "$f"; then printf '%s %s\n' "$f" 'has a detective-tui arch-list block without its end marker; fix it by hand' >&2; exit 1; fi
if [ -f "$f" ] && [ "$(sed -n '/^# >>> detective-tui arch-list >>>$/,/^# <<< detective-tui arch-list <<<$/p' "$f")" = "$b" ]; then
  echo '@@dt unchanged block arch-list already in place'
else
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  if [ -f "$f" ]; then sed '/^# >>> detective-tui arch-list >>>$/,/^# <<< detective-tui arch-list <<<$/d' "$f" > "$t"; fi
  if [ -s "$t" ] && [ -n "$(tail -c 1 "$t")" ]; then echo >> "$t"; fi
  printf '%s\n' "$b" >> "$t"
  mv -f "$t" "$f"
  echo '@@dt changed block arch-list written'
fi
else
  echo '@@dt unchanged no activate script at /root/venv_sglang211/bin/activate'
fi
""",
    "sampling-backend-fallback": r"""
set -e
dt_in_root() { … }
d="$(dt_in_root '/srv/fake hosts/ct200' /etc/systemd/system/sglang.service.d)"
f="$d"/50-detective-tui-sampling.conf
c='# Written by detective-tui (fix sampling-backend-fallback). Delete this file to undo.
[Service]
ExecStart=
ExecStart="/root/venv_sglang211/bin/python3" "-m" "sglang.launch_server" "--model-path" "/models/k2" "--tp" "8" "--sampling-backend" "pytorch"'
if [ -f "$f" ] && [ "$(cat "$f")" = "$c" ]; then
  echo '@@dt unchanged 50-detective-tui-sampling.conf already in place'
else
  if [ ! -d "$d" ]; then mkdir -p "$d"; : > "$d"/.detective-tui-20261129-120000.dir; fi
  t="$f".detective-tui-20261129-120000.tmp
  if [ -f "$f" ]; then
    cp -p "$f" "$t"
    mv -f "$t" "$f".detective-tui-20261129-120000.bak
    cp -p "$f" "$t"
  else
    : > "$f".detective-tui-20261129-120000.absent
    : > "$t"
  fi
  printf '%s\n' "$c" > "$t"
  mv -f "$t" "$f"
  echo '@@dt changed 50-detective-tui-sampling.conf written'
fi
echo '@@dt unchanged skipped systemctl daemon-reload: ct200 is a filesystem under /srv/fake hosts/ct200, not a running system: run systemctl daemon-reload on the machine that runs it'
""",
    "clear-flashinfer-jit-cache": r"""
set -e
dt_in_root() { … }
d="$(dt_in_root '/srv/fake hosts/ct200' /root/.cache/flashinfer)"
if [ -e "$d" ]; then
  mv "$d" "$d".moved-20261129-120000
  echo '@@dt changed moved /root/.cache/flashinfer to /root/.cache/flashinfer.moved-20261129-120000'
else
  echo '@@dt unchanged no cache at /root/.cache/flashinfer'
fi
""",
}


def plan_for(fix_id: str, facts: Facts | None = None, host: Host | None = None, **params: str):
    host = host or HOSTS.get(fix_id, CT200)
    chosen = params or PARAMS[fix_id]
    return build_plan(facts or ct200_facts(), host, fix_id, chosen, stamp=STAMP)


@pytest.mark.parametrize("fix_id", list(GOLDEN))
def test_reference_host_dry_run_commands(fix_id: str) -> None:
    plan = plan_for(fix_id)
    assert shown(plan) == GOLDEN[fix_id].strip("\n")


def test_restart_on_a_root_prefixed_host_never_runs_this_machines_systemctl() -> None:
    plan = restart_plan(CT200, ("sglang.service",), sudo=False, stamp=STAMP)
    assert "\n-----\n".join(plan.preview_commands()) == (
        """set -e
echo '@@dt unchanged skipped restarting sglang.service: ct200 is a filesystem under /srv/fake hosts/ct200, not a running system: restart sglang.service on the machine that runs it'"""
    )


def test_without_a_root_prefix_systemd_is_asked_where_it_runs() -> None:
    host = Host(name="ct200", ssh="root@10.1.2.200")
    plan = restart_plan(host, ("sglang.service", "my app.service"), sudo=False, stamp=STAMP)
    assert "\n-----\n".join(plan.preview_commands()) == (
        """set -e
if [ -d /run/systemd/system ]; then
  systemctl restart sglang.service
  echo '@@dt changed restarted sglang.service'
else
  echo '@@dt unchanged skipped restarting sglang.service: systemd is not running here'
fi
-----
set -e
if [ -d /run/systemd/system ]; then
  systemctl restart 'my app.service'
  echo '@@dt changed restarted my app.service'
else
  echo '@@dt unchanged skipped restarting my app.service: systemd is not running here'
fi"""
    )
    assert daemon_reload(host) == (
        """if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
else
  echo '@@dt unchanged skipped systemctl daemon-reload: systemd is not running here'
fi"""
    )


@pytest.mark.parametrize(
    ("os_id", "version", "arch"),
    [("ubuntu", "24.04", "x86_64"), ("debian", "12", "x86_64"), ("ubuntu", "24.04", "aarch64")],
)
@pytest.mark.parametrize("fix_id", [f for f in GOLDEN if f != "install-cuda-toolkit-apt"])
def test_only_the_apt_fix_depends_on_the_distribution(
    fix_id: str, os_id: str, version: str, arch: str
) -> None:
    facts = ct200_facts(os_id=os_id, os_version_id=version, arch=arch)
    plan = plan_for(fix_id, facts)
    assert shown(plan) == GOLDEN[fix_id].strip("\n")


def test_toolkit_plan_says_what_it_verifies_and_that_a_restart_is_needed() -> None:
    plan = plan_for("use-installed-toolkit")
    assert plan.verify_gone == (
        "flashinfer-arch-rejected",
        "nvcc-too-old-for-gpu",
        "jit-nvcc-missing",
        "nvcc-torch-major-mismatch",
    )
    assert plan.units == ("sglang.service",)
    assert plan.contexts == (SERVICE_LABEL,)
    assert plan.activate == f"{VENV}/bin/activate"
    assert any("systemctl restart sglang.service" in n for n in plan.notes)
    assert plan.needs_root and not plan.sudo


def test_a_toolkit_of_another_major_is_not_expected_to_fix_the_major_mismatch() -> None:
    facts = ct200_facts()
    facts = dataclasses.replace(
        facts,
        toolkits=(
            *facts.toolkits,
            Toolkit(
                home="/usr/local/cuda-12.9", nvcc="/usr/local/cuda-12.9/bin/nvcc", version="12.9"
            ),
        ),
    )
    plan = plan_for("use-installed-toolkit", facts, path="/usr/local/cuda-12.9")
    assert plan.verify_gone == (
        "flashinfer-arch-rejected",
        "nvcc-too-old-for-gpu",
        "jit-nvcc-missing",
    )


KEYRING = """set -e
if dpkg -s cuda-keyring >/dev/null 2>&1; then
  echo '@@dt unchanged cuda-keyring already installed'
else
  mkdir -p /var/lib/detective-tui
  : > /var/lib/detective-tui/cuda-keyring.detective-tui-20261129-120000.absent
  t=$(mktemp -d)
  curl -fsSL -o "$t"/cuda-keyring_1.1-1_all.deb https://developer.download.nvidia.com/compute/cuda/repos/REPO/cuda-keyring_1.1-1_all.deb ||
    wget -qO "$t"/cuda-keyring_1.1-1_all.deb https://developer.download.nvidia.com/compute/cuda/repos/REPO/cuda-keyring_1.1-1_all.deb
  dpkg -i "$t"/cuda-keyring_1.1-1_all.deb
  rm -rf "$t"
  echo '@@dt changed installed cuda-keyring'
fi"""


@pytest.mark.parametrize(
    ("os_id", "version", "arch", "repo"),
    [
        ("ubuntu", "22.04", "x86_64", "ubuntu2204/x86_64"),
        ("ubuntu", "24.04", "x86_64", "ubuntu2404/x86_64"),
        ("debian", "12", "x86_64", "debian12/x86_64"),
        ("ubuntu", "24.04", "aarch64", "ubuntu2404/sbsa"),
        ("debian", "12", "aarch64", "debian12/sbsa"),
    ],
)
def test_apt_uses_the_distro_repository(os_id: str, version: str, arch: str, repo: str) -> None:
    facts = ct200_facts(os_id=os_id, os_version_id=version, arch=arch)
    machine = Host(name="ct200", ssh="root@10.1.2.200")  # a running system: its own tools
    commands = plan_for("install-cuda-toolkit-apt", facts, machine).preview_commands()
    assert commands[0] == KEYRING.replace("REPO", repo)
    assert commands[1] == "set -e\napt-get update"
    install = commands[2]
    assert "apt-get install -y --no-install-recommends cuda-toolkit-13-0\n" in install
    assert " cuda-13-0" not in install and " cuda " not in install  # never the driver metapackages


@pytest.mark.parametrize(
    ("os_id", "version", "arch", "expected"),
    [
        ("rhel", "9.4", "x86_64", "use install-cuda-toolkit-pip instead"),
        ("ubuntu", "20.04", "x86_64", "this host is ubuntu 20.04"),
        ("debian", "12", "riscv64", "no repository for architecture riscv64"),
    ],
)
def test_apt_refuses_unsupported_hosts(os_id: str, version: str, arch: str, expected: str) -> None:
    facts = ct200_facts(os_id=os_id, os_version_id=version, arch=arch)
    with pytest.raises(FixError, match=expected):
        plan_for("install-cuda-toolkit-apt", facts)


def test_a_non_root_login_runs_root_steps_through_sudo_n() -> None:
    facts = ct200_facts(user="ubuntu", is_root=False, sudo_nopasswd=True)
    plan = plan_for("use-installed-toolkit", facts)
    assert plan.sudo
    unit_step, activate_step = plan.steps
    assert unit_step.needs_root and not activate_step.needs_root
    wrapped, plain = plan.preview_commands()
    unit_command = "set -e\n" + with_resolver(unit_step.command)
    assert wrapped == "sudo -n sh -c " + shlex.quote(unit_command)
    assert shlex.split(wrapped) == ["sudo", "-n", "sh", "-c", unit_command]
    assert plain == "set -e\n" + with_resolver(activate_step.command)


@pytest.mark.parametrize(
    ("fix_id", "params", "message"),
    [
        ("use-installed-toolkit", {}, "needs path="),
        (
            "use-installed-toolkit",
            {"path": "/opt/cuda-99"},
            "no CUDA toolkit was found at /opt/cuda-99",
        ),
        (
            "use-installed-toolkit",
            {"path": "/usr/local/cuda-13.0", "paht": "x"},
            "does not take paht",
        ),
        ("install-cuda-toolkit-pip", {"version": "12.8.1"}, "only CUDA 13 wheels ship an nvcc"),
        ("sampling-backend-fallback", {"engine": "trt"}, "engine=sglang or engine=vllm"),
        ("no-such-fix", {}, "unknown fix 'no-such-fix'"),
    ],
)
def test_bad_parameters_are_refused_with_a_clear_message(
    fix_id: str, params: dict[str, str], message: str
) -> None:
    with pytest.raises(FixError, match=message):
        build_plan(ct200_facts(), CT200, fix_id, params, stamp=STAMP)


@pytest.mark.parametrize("value", ["", "120", "9.0a;12.0a", "9.0a  12.0a", "12.0+PTX", "sm_120"])
def test_arch_lists_flashinfer_would_reject_at_import_are_refused(value: str) -> None:
    with pytest.raises(FixError, match="not a FlashInfer arch list"):
        plan_for("set-flashinfer-arch-list", value=value)


def test_arch_list_with_several_entries_is_accepted() -> None:
    plan = plan_for("set-flashinfer-arch-list", value="9.0a 12.0a")
    assert 'Environment="FLASHINFER_CUDA_ARCH_LIST=9.0a 12.0a"' in plan.steps[0].command


def test_without_a_service_or_venv_the_login_profile_is_used() -> None:
    facts = dataclasses.replace(
        ct200_facts(),
        contexts=(EnvContext(kind="ssh", label="ssh session"),),
        pythons=(PythonEnv(path="/usr/bin/python3", prefix="/usr", flashinfer_version="0.6.8"),),
    )
    machine = Host(name="ct200", ssh="root@10.1.2.200")
    plan = plan_for("use-installed-toolkit", facts, machine)
    (step,) = plan.steps
    assert step.title == "Set CUDA_HOME, PATH for login shells"
    assert step.command.startswith('p="$HOME"/.bash_profile; [ -f "$p" ] || p="$HOME"/.profile\n')
    assert plan.units == () and plan.activate is None
    # on a root: host $HOME is the inspecting login's home, never one of the image: not edited
    (step,) = plan_for("use-installed-toolkit", facts).steps
    assert '"$HOME"/' not in step.command and step.undo is None
    assert step.command.startswith("echo '@@dt unchanged no login profile edited: ct200 is a")


def test_pip_refuses_the_system_python() -> None:
    facts = dataclasses.replace(
        ct200_facts(),
        pythons=(PythonEnv(path="/usr/bin/python3", prefix="/usr", site_packages=("/usr/lib/x",)),),
    )
    with pytest.raises(FixError, match="not a venv"):
        plan_for("install-cuda-toolkit-pip", facts)


def test_sglang_without_a_unit_gets_advice_not_a_change() -> None:
    facts = dataclasses.replace(
        ct200_facts(),
        contexts=(
            ct200_facts().contexts[0],
            dataclasses.replace(ct200_facts().contexts[1], unit=None),
        ),
    )
    with pytest.raises(FixError, match="restart it with --sampling-backend pytorch"):
        plan_for("sampling-backend-fallback", facts)


def test_a_command_line_with_masked_secrets_is_never_copied_into_execstart() -> None:
    service = ct200_facts().contexts[1]
    masked = dataclasses.replace(service, cmdline=f"{service.cmdline} --api-key ***")
    facts = dataclasses.replace(ct200_facts(), contexts=(ct200_facts().contexts[0], masked))
    with pytest.raises(FixError, match=r"masked as secrets .*systemctl edit sglang.service"):
        plan_for("sampling-backend-fallback", facts)


def test_vllm_gets_the_environment_switch() -> None:
    facts = dataclasses.replace(
        ct200_facts(),
        contexts=(
            ct200_facts().contexts[0],
            dataclasses.replace(
                ct200_facts().contexts[1], cmdline=f"{PY} -m vllm.entrypoints.openai.api_server"
            ),
        ),
    )
    plan = plan_for("sampling-backend-fallback", facts)
    assert 'Environment="VLLM_USE_FLASHINFER_SAMPLER=0"' in plan.steps[0].command
    assert "export VLLM_USE_FLASHINFER_SAMPLER=0" in plan.steps[1].command


# -- the commands, run for real by sh against throwaway trees --------------------------------


def sh(command: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    return subprocess.run(
        ["sh", "-c", with_resolver(command)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=30,
    )


HOSTILE_TOOLKIT = "/opt/cuda 13.0;$(touch PWNED)`touch PWNED2`"
HOSTILE_VENV = "/opt/my venv $HOME;x"


def hostile_setup(tmp_path: Path) -> tuple[Host, Facts, Path, Path]:
    root = tmp_path / "fake root $USER; rm -rf ~"
    venv = Path(str(root) + HOSTILE_VENV)
    (venv / "bin").mkdir(parents=True)
    activate = venv / "bin" / "activate"
    activate.write_text('VIRTUAL_ENV="/opt/my venv $HOME;x"\nexport VIRTUAL_ENV\n')
    py = f"{HOSTILE_VENV}/bin/python3"
    label = "pid 7 sglang"
    facts = dataclasses.replace(
        ct200_facts(),
        toolkits=(
            Toolkit(home=HOSTILE_TOOLKIT, nvcc=f"{HOSTILE_TOOLKIT}/bin/nvcc", version="13.0"),
        ),
        contexts=(
            EnvContext(
                kind="process",
                label=label,
                pid=7,
                exe=py,
                unit="sglang.service",
                vars={"PATH": "/usr/bin:/bin"},
            ),
        ),
        pythons=(
            PythonEnv(path=py, prefix=HOSTILE_VENV, context=label, flashinfer_version="0.6.8"),
        ),
    )
    host = Host(name="hostile", local=True, root=str(root))
    return host, facts, root, activate


def test_hostile_paths_survive_quoting(tmp_path: Path) -> None:
    from tui.core.fixes.unitenv import parse_environment

    host, facts, root, activate = hostile_setup(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    plan = build_plan(facts, host, "use-installed-toolkit", {"path": HOSTILE_TOOLKIT}, stamp=STAMP)
    for command in plan.preview_commands():
        done = sh(command, home, tmp_path)
        assert done.returncode == 0, done.stderr
        assert "@@dt changed" in done.stdout
    assert not list(tmp_path.rglob("PWNED*"))
    dropin = root / "etc/systemd/system/sglang.service.d/50-detective-tui-cuda.conf"
    env = parse_environment([dropin.read_text()])
    assert env == {"CUDA_HOME": HOSTILE_TOOLKIT, "PATH": f"{HOSTILE_TOOLKIT}/bin:/usr/bin:/bin"}
    shown = sh(f". {shlex.quote(str(activate))}; printf '%s' \"$CUDA_HOME\"", home, tmp_path)
    assert shown.stdout == HOSTILE_TOOLKIT
    assert not list(tmp_path.rglob("PWNED*"))


def test_running_a_plan_twice_changes_nothing_and_undo_restores(tmp_path: Path) -> None:
    host, facts, root, activate = hostile_setup(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    original = activate.read_bytes()
    plan = build_plan(facts, host, "use-installed-toolkit", {"path": HOSTILE_TOOLKIT}, stamp=STAMP)
    for command in plan.preview_commands():
        sh(command, home, tmp_path)
    dropin = root / "etc/systemd/system/sglang.service.d/50-detective-tui-cuda.conf"
    after_first = (dropin.read_bytes(), activate.read_bytes())
    for command in plan.preview_commands():
        again = sh(command, home, tmp_path)
        flags = parse_flags(again.stdout)
        assert again.returncode == 0 and not flags.changed and flags.unchanged
    assert (dropin.read_bytes(), activate.read_bytes()) == after_first
    for step in reversed(plan.steps):
        assert step.undo is not None
        undone = sh(step.undo, home, tmp_path)
        assert undone.returncode == 0 and parse_flags(undone.stdout).changed
    assert activate.read_bytes() == original
    assert not dropin.exists()


def test_a_changed_parameter_replaces_the_block_instead_of_adding_one(tmp_path: Path) -> None:
    host, facts, _root, activate = hostile_setup(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    other = "/usr/local/cuda-13.0"
    facts = dataclasses.replace(
        facts, toolkits=(*facts.toolkits, Toolkit(home=other, nvcc=f"{other}/bin/nvcc"))
    )
    for path in (HOSTILE_TOOLKIT, other):
        plan = build_plan(facts, host, "use-installed-toolkit", {"path": path}, stamp=STAMP)
        assert sh(plan.preview_commands()[1], home, tmp_path).returncode == 0
    text = activate.read_text()
    assert text.count("# >>> detective-tui cuda >>>") == 1
    assert f"export CUDA_HOME={other}\n" in text


def test_jit_cache_is_moved_aside_never_deleted(tmp_path: Path) -> None:
    root = tmp_path / "r"
    cache = root / "root/.cache/flashinfer/0.6.8"
    cache.mkdir(parents=True)
    (cache / "sampling.so").write_text("old")
    host = Host(name="ct200", local=True, root=str(root))
    plan = build_plan(ct200_facts(), host, "clear-flashinfer-jit-cache", {}, stamp=STAMP)
    (step,) = plan.steps
    home = tmp_path
    assert "@@dt changed" in sh(plan.preview_commands()[0], home, tmp_path).stdout
    moved = root / f"root/.cache/flashinfer.moved-{STAMP}/0.6.8/sampling.so"
    assert moved.read_text() == "old" and not (root / "root/.cache/flashinfer").exists()
    assert "@@dt unchanged" in sh(plan.preview_commands()[0], home, tmp_path).stdout
    (root / "root/.cache/flashinfer").mkdir()
    refused = sh(step.undo or "", home, tmp_path)
    assert refused.returncode == 1 and "was rebuilt since the move" in refused.stderr
    (root / "root/.cache/flashinfer").rmdir()
    assert sh(step.undo or "", home, tmp_path).returncode == 0
    assert (cache / "sampling.so").read_text() == "old"


def test_a_file_without_a_final_newline_keeps_its_last_line(tmp_path: Path) -> None:
    host, facts, _root, activate = hostile_setup(tmp_path)
    activate.write_text("export VIRTUAL_ENV=/v")  # no newline at the end
    plan = build_plan(facts, host, "use-installed-toolkit", {"path": HOSTILE_TOOLKIT}, stamp=STAMP)
    assert sh(plan.preview_commands()[1], tmp_path, tmp_path).returncode == 0
    lines = activate.read_text().splitlines()
    assert lines[0] == "export VIRTUAL_ENV=/v"
    assert lines[1] == "# >>> detective-tui cuda >>>"


def test_a_block_that_lost_its_end_marker_is_not_edited(tmp_path: Path) -> None:
    host, facts, _root, activate = hostile_setup(tmp_path)
    damaged = "# >>> detective-tui cuda >>>\nexport CUDA_HOME=/old\nexport KEEP=me\n"
    activate.write_text(damaged)
    plan = build_plan(facts, host, "use-installed-toolkit", {"path": HOSTILE_TOOLKIT}, stamp=STAMP)
    done = sh(plan.preview_commands()[1], tmp_path, tmp_path)
    assert done.returncode == 1
    assert "block without its end marker; fix it by hand" in done.stderr
    assert str(activate) in done.stderr
    assert activate.read_text() == damaged
    # the undo acts only on what this run left (a backup, a created-marker): here nothing
    undo = sh(plan.steps[1].undo or "", tmp_path, tmp_path)
    assert undo.returncode == 0 and "nothing of this fix run in the file" in undo.stdout
    assert activate.read_text() == damaged


def test_pip_wheels_follow_torchs_cuda_minor() -> None:
    facts = ct200_facts()
    py = dataclasses.replace(facts.pythons[0], torch_cuda="13.2")
    facts = dataclasses.replace(facts, pythons=(py,))
    plan = plan_for("install-cuda-toolkit-pip", facts)
    assert plan.params == {"version": "13.2.1"}
    assert "'cuda-toolkit[nvcc,cudart,crt,nvvm,cccl]==13.2.1'" in plan.steps[0].command
    pinned = plan_for("install-cuda-toolkit-pip", facts, version="13.0.2")
    assert "==13.0.2'" in pinned.steps[0].command


@pytest.mark.parametrize("fix_id", ["install-cuda-toolkit-pip", "install-cuda-toolkit-apt"])
def test_no_cuda13_install_for_a_driver_that_cannot_run_it(fix_id: str) -> None:
    driver = DriverInfo(state="ok", driver_version="570.172.08", driver_cuda="12.8")
    facts = dataclasses.replace(ct200_facts(), driver=driver)
    with pytest.raises(FixError, match=re.escape("driver 570.172.08 runs CUDA 12.8 at most")):
        plan_for(fix_id, facts)
    ok = dataclasses.replace(facts, driver=dataclasses.replace(driver, driver_cuda="13.0"))
    assert plan_for(fix_id, ok).steps
