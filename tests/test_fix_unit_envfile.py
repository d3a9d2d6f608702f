# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""A fix for a unit with an ``EnvironmentFile=`` adds an environment file of its own, read last.

A drop-in with only ``Environment=`` lines changes nothing on a unit whose environment file sets
the same variables (test_fix_unit_envfile_read.py), so each unit-env fix's plan writes its own
environment file, named in a drop-in after the unit's; a unit without environment files keeps
today's plan byte for byte. Run for real over sshd in test_fix_unit_envfile_sshd.py.
"""

from __future__ import annotations

import dataclasses

import pytest
from ct200_plans import CT200, CT200_TOOLS, STAMP, ct200_facts
from plan_golden import GOLDEN, shown
from unit_envfile_host import (
    DEFAULTS,
    NEW_CUDA,
    OLD_CUDA,
    UNIT,
    VENV,
)

from tui.core.facts import EnvContext, Facts
from tui.core.fixes import build_plan
from tui.core.run.fix_render import preview_text

# -- the plan: an environment file of the fix's own, read after the unit's ----------------------

UNIT_CONTEXT = EnvContext(
    kind="unit",
    label=f"unit {UNIT}",
    unit=UNIT,
    vars={"CUDA_HOME": OLD_CUDA},
    env_files=(DEFAULTS,),
)


def with_unit_context(facts: Facts, unit_ctx: EnvContext = UNIT_CONTEXT) -> Facts:
    return dataclasses.replace(facts, contexts=(*facts.contexts, unit_ctx))


GOLDEN_WITH_ENV_FILE = r"""
set -e
dt_in_root() { … }
d="$(dt_in_root '/srv/fake hosts/ct200' /etc/detective-tui)"
f="$d"/sglang.service.cuda.env
c='# Written by detective-tui (fix use-installed-toolkit) for sglang.service; its drop-in names this file.
CUDA_HOME=/usr/local/cuda-13.0
PATH=/usr/local/cuda-13.0/bin:/root/venv_sglang211/bin:/usr/bin:/bin'
if [ -f "$f" ] && [ "$(cat "$f")" = "$c" ]; then
  echo '@@dt unchanged sglang.service.cuda.env already in place'
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
  echo '@@dt changed sglang.service.cuda.env written'
fi
d="$(dt_in_root '/srv/fake hosts/ct200' /etc/systemd/system/sglang.service.d)"
f="$d"/50-detective-tui-cuda.conf
c='# Written by detective-tui (fix use-installed-toolkit). Delete this file and /etc/detective-tui/sglang.service.cuda.env to undo.
# sglang.service reads /etc/default/sglang, which would override Environment=; the EnvironmentFile= below is read after it, so the values here win.
[Service]
Environment="CUDA_HOME=/usr/local/cuda-13.0"
Environment="PATH=/usr/local/cuda-13.0/bin:/root/venv_sglang211/bin:/usr/bin:/bin"
EnvironmentFile=-/etc/detective-tui/sglang.service.cuda.env'
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
"""

GOLDEN_UNDO_WITH_ENV_FILE = r"""
d="$(dt_in_root '/srv/fake hosts/ct200' /etc/systemd/system/sglang.service.d)"
f="$d"/50-detective-tui-cuda.conf
rm -f "$f".detective-tui-20261129-120000.tmp
if [ -f "$f".detective-tui-20261129-120000.bak ]; then
  mv -f "$f".detective-tui-20261129-120000.bak "$f"
  rm -f "$f".detective-tui-20261129-120000.absent
  echo '@@dt changed restored the backup of 50-detective-tui-cuda.conf'
elif [ -e "$f".detective-tui-20261129-120000.absent ]; then
  rm -f "$f" "$f".detective-tui-20261129-120000.absent
  echo '@@dt changed 50-detective-tui-cuda.conf removed'
else
  echo '@@dt unchanged 50-detective-tui-cuda.conf: nothing of this fix run to undo'
fi
if [ -e "$d"/.detective-tui-20261129-120000.dir ]; then
  rm -f "$d"/.detective-tui-20261129-120000.dir
  if rmdir "$d" 2>/dev/null; then
    echo '@@dt changed removed the directory this fix run created'
  fi
fi
d="$(dt_in_root '/srv/fake hosts/ct200' /etc/detective-tui)"
f="$d"/sglang.service.cuda.env
rm -f "$f".detective-tui-20261129-120000.tmp
if [ -f "$f".detective-tui-20261129-120000.bak ]; then
  mv -f "$f".detective-tui-20261129-120000.bak "$f"
  rm -f "$f".detective-tui-20261129-120000.absent
  echo '@@dt changed restored the backup of sglang.service.cuda.env'
elif [ -e "$f".detective-tui-20261129-120000.absent ]; then
  rm -f "$f" "$f".detective-tui-20261129-120000.absent
  echo '@@dt changed sglang.service.cuda.env removed'
else
  echo '@@dt unchanged sglang.service.cuda.env: nothing of this fix run to undo'
fi
if [ -e "$d"/.detective-tui-20261129-120000.dir ]; then
  rm -f "$d"/.detective-tui-20261129-120000.dir
  if rmdir "$d" 2>/dev/null; then
    echo '@@dt changed removed the directory this fix run created'
  fi
fi
echo '@@dt unchanged skipped systemctl daemon-reload: ct200 is a filesystem under /srv/fake hosts/ct200, not a running system: run systemctl daemon-reload on the machine that runs it'
"""


def envfile_plan(fix_id: str = "use-installed-toolkit", facts: Facts | None = None, **params: str):
    chosen = params or ({"path": NEW_CUDA} if fix_id == "use-installed-toolkit" else {})
    host = CT200_TOOLS if fix_id == "install-cuda-toolkit-apt" else CT200
    return build_plan(facts or with_unit_context(ct200_facts()), host, fix_id, chosen, stamp=STAMP)


def test_dry_run_for_a_unit_with_an_environment_file() -> None:
    plan = envfile_plan()
    assert shown(plan) == GOLDEN_WITH_ENV_FILE.strip("\n")
    assert plan.steps[0].undo == GOLDEN_UNDO_WITH_ENV_FILE.strip("\n")
    assert plan.steps[0].changes == (
        "adds the drop-in /etc/systemd/system/sglang.service.d/50-detective-tui-cuda.conf "
        "(CUDA_HOME=/usr/local/cuda-13.0; PATH=/usr/local/cuda-13.0/bin:/root/venv_sglang211/bin:/usr/bin:/bin) "
        "and the environment file /etc/detective-tui/sglang.service.cuda.env it names, with the same "
        "values: the unit reads /etc/default/sglang, which would override Environment=, and "
        "/etc/detective-tui/sglang.service.cuda.env is read after it; reloads systemd; "
        "sglang.service uses them from its next restart"
    )
    assert "the unit reads /etc/default/sglang, which would override Environment=" in preview_text(
        plan
    )


def test_a_unit_without_environment_files_keeps_todays_plan_byte_for_byte() -> None:
    plain = dataclasses.replace(UNIT_CONTEXT, env_files=())
    for fix_id in (
        "use-installed-toolkit",
        "set-flashinfer-arch-list",
        "sampling-backend-fallback",
    ):
        params = {"value": "12.0a"} if fix_id == "set-flashinfer-arch-list" else {}
        plan = envfile_plan(fix_id, with_unit_context(ct200_facts(), plain), **params)
        assert shown(plan) == GOLDEN[fix_id].strip("\n")


@pytest.mark.parametrize(
    ("fix_id", "params", "line"),
    [
        ("set-flashinfer-arch-list", {"value": "12.0a"}, "FLASHINFER_CUDA_ARCH_LIST=12.0a"),
        (
            "install-cuda-toolkit-pip",
            {},
            "CUDA_HOME=/root/venv_sglang211/lib/python3.12/site-packages/nvidia/cu13",
        ),
        ("install-cuda-toolkit-apt", {}, "CUDA_HOME=/usr/local/cuda-13.0"),
    ],
)
def test_every_unit_env_fix_adds_its_own_environment_file(
    fix_id: str, params: dict[str, str], line: str
) -> None:
    plan = envfile_plan(fix_id, **params)
    (unit_step,) = [s for s in plan.steps if "sglang.service.d" in s.command]
    name = unit_step.command.split("/50-detective-tui-", 1)[1].split(".conf", 1)[0]
    assert f"EnvironmentFile=-/etc/detective-tui/sglang.service.{name}.env" in unit_step.command
    assert f"\n{line}" in unit_step.command
    assert "which would override Environment=" in unit_step.changes


def test_the_vllm_sampling_switch_adds_its_own_environment_file_too() -> None:
    base = ct200_facts()
    vllm = dataclasses.replace(
        base.contexts[1], cmdline=f"{VENV}/bin/python3 -m vllm.entrypoints.openai.api_server"
    )
    facts = with_unit_context(dataclasses.replace(base, contexts=(base.contexts[0], vllm)))
    plan = envfile_plan("sampling-backend-fallback", facts)
    command = plan.steps[0].command
    assert "EnvironmentFile=-/etc/detective-tui/sglang.service.sampling.env" in command
    assert "\nVLLM_USE_FLASHINFER_SAMPLER=0" in command
