"""The unit of the environment-file tests: the reference host's sglang.service, whose
``EnvironmentFile=`` is /etc/default/sglang (CUDA 12.8) while CUDA 13.0 is installed, and the
paths of the drop-in and of the environment file a fix writes for it.
"""

from __future__ import annotations

UNIT = "sglang.service"
UNIT_FILE = f"etc/systemd/system/{UNIT}"
DEFAULTS = "/etc/default/sglang"
OLD_CUDA = "/usr/local/cuda-12.8"
NEW_CUDA = "/usr/local/cuda-13.0"
VENV = "/root/venv_sglang211"
DEFAULTS_TEXT = (
    "# SGLang server settings (read by sglang.service)\n"
    f"CUDA_HOME={OLD_CUDA}\n"
    f'PATH="{OLD_CUDA}/bin:{VENV}/bin:/usr/local/bin:/usr/bin:/bin"\n'
)
DROPIN = f"etc/systemd/system/{UNIT}.d/50-detective-tui-cuda.conf"
OUR_ENV_FILE = f"etc/detective-tui/{UNIT}.cuda.env"
