"""The benchmark host: this machine reached over a loopback sshd as a GPU server is reached, for
``bench/bench_probe.py`` and its test. No ``root:`` prefix, so the probe really runs the login
shell and ``nvidia-smi`` under its trust rule, as it would on a server.

What the sessions of its sshd get (a client of the product: built from ``tui.demo.fakehost``'s
reference CT200 tree, nothing in ``tui/`` knows about it):
- **a login shell with a real profile**: root's passwd shell (``/bin/bash -il``) reads this
  machine's own ``/etc/profile`` and ``/etc/bash.bashrc`` (Debian 12's), then ``$HOME/.profile``
  and ``$HOME/.bashrc``: byte copies of Debian 12's ``/etc/skel/.profile`` and
  ``/etc/skel/.bashrc`` (bash 5.2.15-2+b8: ``bench/host/``), the latter followed by what a GPU
  server's root account adds — Ubuntu's skel ``lesspipe`` line (commented out in Debian's), a
  sourced ``~/.cuda-env.sh`` written as NVIDIA's CUDA installation guide's post-installation
  actions write ``PATH`` and ``LD_LIBRARY_PATH``, a ``~/.bash_aliases`` (sourced by the skel
  file), the activation of a real ``python -m venv`` venv (the serving venv, with CT200's
  dist-infos) and a ``$(hostname -s)``;
- **an ``nvidia-smi`` stand-in** first on the session's ``PATH`` (``/usr/local/nvidia/bin`` of
  the tree, as in NVIDIA's containers) that waits ``smi_delay_s`` before printing CT200's
  captured outputs. That delay stands for NVML's initialisation, which no file in
  ``../shared`` has measured: it is a parameter, not a figure;
- **a serving process**: the venv's ``python3 -m sglang.launch_server …`` (a stand-in module
  that sleeps) with CT200's environment (``CUDA_HOME`` = the tree's CUDA 12.8);
- a private PID and mount namespace (``unshare``): ``/proc`` holds only the sshd, the serving
  process and the sessions (no other process of this shared machine is discovered), and
  ``/proc/driver`` is the tree's (CT200's driver 580.95.05 version file);
- a ``TMPDIR`` of its own (``tmp/`` beside the tree): the probe sweeps the temp dir it picks of
  ``detective-tui.PID.*`` dirs whose PID is gone, and from inside a PID namespace every other
  probe's PID looks gone — with ``/tmp`` it would remove the live dirs of probes running
  outside.

The tree lies under a private ``mkdtemp`` dir (0700, in the sticky ``/tmp``) with every file
and directory not writable by group or others, so the trust rule lets the probe run its
programs. Each run of the ``.bashrc`` and of the stand-in appends a line to a file under
``marks/`` (shell builtins: no process of their own), so a measurement can prove it measured a
host that ran them.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from sshd import SSHD, start_sshd

from tui.demo.fakehost import NVIDIA_SMI_SHIM, build_fake_host, reference_ct200

SKEL = Path(__file__).resolve().parents[1] / "bench" / "host"
UNSHARE = shutil.which("unshare")
VENV = "/root/venv_sglang211"  # CT200's serving venv, under the tree
CUDA = "/usr/local/cuda-12.8"  # CT200's only toolkit, under the tree
SMI_DIR = "/usr/local/nvidia/bin"
SERVING_ARGV = ("-m", "sglang.launch_server", "--model-path", "/models/Kimi-K2.6", "--tp", "8",
                "--port", "30000")  # fmt: skip
_SERVER = "import signal, time\nsignal.signal(signal.SIGTERM, lambda *_: exit())\ntime.sleep(1e5)\n"
_SMI_DATA = 'd="${0%/*}/../share/detective-tui-fake/nvidia-smi"'

SERVER_RC = """
# ---- added on the GPU server (the skel file above is Debian 12's, unchanged) ----
# Ubuntu's /etc/skel/.bashrc runs this line; Debian's has it commented out
[ -x /usr/bin/lesspipe ] && eval "$(SHELL=/bin/sh lesspipe)"
# the CUDA toolkit, as NVIDIA's installation guide's post-installation actions set it
[ -f "$HOME/.cuda-env.sh" ] && . "$HOME/.cuda-env.sh"
# the serving venv
. "$HOME/venv_sglang211/bin/activate"
export HF_HOME="$HOME/.cache/huggingface"
export HOST_SHORT="$(hostname -s)"
printf '%s\\n' "$$" >>{mark}
"""
CUDA_ENV = """export CUDA_HOME={cuda}
export PATH=$CUDA_HOME/bin${{PATH:+:${{PATH}}}}
export LD_LIBRARY_PATH=$CUDA_HOME/lib64${{LD_LIBRARY_PATH:+:${{LD_LIBRARY_PATH}}}}
"""
ALIASES = (
    "alias gpus='nvidia-smi --query-gpu=index,name,memory.used --format=csv'\nalias ll='ls -alF'\n"
)

# in the namespace: the tree's /proc/driver, the serving process (a child of the sshd), the sshd
NAMESPACE = """set -e
mount --bind "$1" /proc/driver
shift
eval "$1" '</dev/null >/dev/null 2>&1 &'

shift
exec "$@"
"""


def bench_host_problem() -> str | None:
    """None when a bench host can run here (root, ``unshare`` with PID and mount namespaces),
    else why not."""
    if UNSHARE is None:
        return "unshare (util-linux) is not installed"
    proc = subprocess.run(
        [UNSHARE, "-p", "-f", "--kill-child", "--mount-proc", "true"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        return f"no private PID namespace here (needs root): {proc.stderr.strip()}"
    return None


class NamespacedSSHD(SSHD):
    """An sshd under ``unshare --fork --kill-child``, which ignores TERM while it waits: it is
    killed, and its namespace (the sshd, the serving process, any session) goes with it."""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@dataclass(frozen=True)
class BenchHost:
    """A built bench host: ``root`` the tree (its host paths are ``root`` + CT200's paths),
    ``home`` the account's HOME, ``marks`` the counter files' dir."""

    root: Path
    home: Path
    marks: Path
    tmp: Path
    smi_delay_s: float

    @property
    def python(self) -> str:
        return str(self.root) + VENV + "/bin/python3"

    @property
    def session_path(self) -> str:
        """The ssh session's PATH: the stand-in's dir, then Debian's root PATH."""
        return f"{self.root}{SMI_DIR}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    def runs(self, what: str) -> int:
        """How many times ``what`` (``login`` — the ``.bashrc`` — or ``nvidia-smi``) ran."""
        mark = self.marks / what
        return len(mark.read_text().splitlines()) if mark.exists() else 0

    def serving_command(self) -> str:
        """The serving process, started in the namespace: CT200's environment, tree paths."""
        cuda = str(self.root) + CUDA
        env = {
            "PATH": f"{cuda}/bin:{self.root}{VENV}/bin:/usr/local/bin:/usr/bin:/bin",
            "CUDA_HOME": cuda,
            "HOME": str(self.home),
            "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
            "HF_TOKEN": "hf_bench_secret_value",
            "LANG": "C.UTF-8",
        }
        return shlex.join(["env", "-i", *(f"{k}={v}" for k, v in env.items()), self.python,
                           *SERVING_ARGV])  # fmt: skip

    def start_sshd(self, workdir: Path) -> SSHD:
        """A loopback sshd in a private PID and mount namespace whose sessions are this host's
        (HOME, PATH, TMPDIR); it ends with the namespace, the serving process with it."""
        if UNSHARE is None:
            raise RuntimeError("unshare (util-linux) is not installed")
        namespace = [UNSHARE, "-p", "-f", "--kill-child", "--mount-proc"]
        drv = str(self.root / "proc" / "driver")
        wrapper = [*namespace, "sh", "-c", NAMESPACE, "bench-host", drv, self.serving_command()]
        server = start_sshd(
            workdir,
            extra=f"SetEnv HOME={self.home} PATH={self.session_path} TMPDIR={self.tmp}\n",
            wrapper=wrapper,
        )
        return NamespacedSSHD(server.dir, server.port, server.host_key, server.client_key,
                              server.proc)  # fmt: skip


def _stand_in_smi(root: Path, marks: Path, delay_s: float) -> None:
    if _SMI_DATA not in NVIDIA_SMI_SHIM:
        raise RuntimeError(
            "tui.demo.fakehost's nvidia-smi shim no longer finds its data as expected"
        )
    data = shlex.quote(str(root / "usr/share/detective-tui-fake/nvidia-smi"))
    head = (f"d={data}\nprintf '%s\\n' \"$*\" >>{shlex.quote(str(marks / 'nvidia-smi'))}\n"
            f"sleep {delay_s:.3f}")  # fmt: skip
    smi = root / SMI_DIR.lstrip("/") / "nvidia-smi"
    smi.parent.mkdir(parents=True)
    smi.write_text(NVIDIA_SMI_SHIM.replace(_SMI_DATA, head, 1))
    smi.chmod(0o755)


def _no_group_or_other_write(top: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode & ~0o022)
    top.chmod(top.stat().st_mode & ~0o022)


def build_bench_host(dest: Path, smi_delay_s: float = 0.2) -> BenchHost:
    """Build the bench host in ``dest`` (created, 0755; its parents must pass the trust rule)."""
    root = dest / "host"
    marks = dest / "marks"
    marks.mkdir(parents=True)
    (dest / "tmp").mkdir()
    build_fake_host(root, reference_ct200(service=False))
    home = root / "root"
    venv = home / VENV.rsplit("/", 1)[1]
    # a real venv (its own activate) over the tree's, which holds CT200's dist-infos
    subprocess.run([os.path.realpath(sys.executable), "-m", "venv", "--without-pip", str(venv)],
                   check=True, capture_output=True)  # fmt: skip
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "sglang" / "launch_server.py").parent.mkdir(exist_ok=True)
    (site / "sglang" / "__init__.py").write_text("")
    (site / "sglang" / "launch_server.py").write_text(_SERVER)
    (home / ".profile").write_bytes((SKEL / "debian12-skel.profile").read_bytes())
    rc = SERVER_RC.format(mark=shlex.quote(str(marks / "login")))
    (home / ".bashrc").write_text((SKEL / "debian12-skel.bashrc").read_text() + rc)
    (home / ".bash_aliases").write_text(ALIASES)
    (home / ".cuda-env.sh").write_text(CUDA_ENV.format(cuda=shlex.quote(str(root) + CUDA)))
    _stand_in_smi(root, marks, smi_delay_s)
    _no_group_or_other_write(dest)
    return BenchHost(root=root, home=home, marks=marks, tmp=dest / "tmp", smi_delay_s=smi_delay_s)
