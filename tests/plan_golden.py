# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""A fix plan's dry-run golden on the reference host (the facts and host of ``ct200_plans``), and
how it is spelled: the plan's commands with the path resolver that every root-prefixed step starts
with (tui.core.fixes.confine, tested on its own) folded to one line."""

from __future__ import annotations

from tui.core.fixes.confine import RESOLVER

RESOLVER_LINE = "dt_in_root() { … }"


def shown(plan) -> str:
    """The plan's preview commands as one golden string."""
    return "\n-----\n".join(plan.preview_commands()).replace(RESOLVER, RESOLVER_LINE)


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
