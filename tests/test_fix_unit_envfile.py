# ruff: noqa: E501  (the golden shell text below is verbatim; its lines are as long as they are)
"""A unit's ``EnvironmentFile=`` overrides ``Environment=``: the verdict follows it, fixes win over it.

systemd reads the files named by ``EnvironmentFile=`` (the unit file's, then the drop-ins',
sorted by name; an empty value resets the list; ``-`` makes a file optional) and their
variables override ``Environment=`` ones, a later file winning. A drop-in with only
``Environment=`` lines therefore changes nothing on such a unit — the next-start verdict must
say so, and the fix must add an environment file of its own that is read last.

The unit-level tests run the real read script with ``sh`` against throwaway trees; the
end-to-end tests run fixes over a loopback OpenSSH sshd against a fake reference host whose
``sglang.service`` reads ``/etc/default/sglang`` (CUDA 12.8) while CUDA 13.0 is installed.
"""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import SSHEnv
from ct200_plans import CT200, CT200_TOOLS, STAMP, ct200_facts
from hypothesis import given, settings
from hypothesis import strategies as st
from plan_golden import GOLDEN, shown

from tui.core.facts import EnvContext, Facts
from tui.core.facts.parsers import environment_file_paths, environment_files
from tui.core.fixes import build_plan
from tui.core.fixes.envset import env_file_text
from tui.core.fixes.restart import restart_plan
from tui.core.fixes.undo import list_records, mark_undone, undo_plan
from tui.core.fixes.unitenv import parse_environment_file, unit_files_script, unit_start
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.run.fix_executor import apply_plan, outcome_summary
from tui.core.run.fix_render import outcome_text, preview_text
from tui.core.run.runner import Session
from tui.demo.fakehost import SYSTEMCTL_LOG, build_fake_host, fake_systemctl, reference_ct200

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


# -- parsing: the order systemd applies things in ---------------------------------------------


def write(root: Path, path: str, text: str) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def read_unit(root: Path, unit: str = UNIT):
    """The real read script, run by sh against the tree: what a fix's verdict sees."""
    script = unit_files_script(Host(name="t", root=str(root), simulate="tree"), unit)
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return unit_start(done.stdout, unit)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "host root $HOME; x"


def test_environment_file_overrides_environment(root: Path) -> None:
    write(root, UNIT_FILE, "[Service]\nEnvironment=A=unit B=unit\nEnvironmentFile=/etc/a.env\n")
    write(root, "/etc/a.env", "A=file\n")
    start = read_unit(root)
    assert start.env == {"A": "file", "B": "unit"}
    assert start.env_files == ("/etc/a.env",)
    assert start.missing_env_files == () and start.problems == ()


def test_environment_file_wins_even_when_environment_comes_later(root: Path) -> None:
    write(root, UNIT_FILE, "[Service]\nEnvironmentFile=/etc/a.env\n")
    write(root, f"etc/systemd/system/{UNIT}.d/override.conf", "[Service]\nEnvironment=A=dropin\n")
    write(root, "/etc/a.env", "A=file\n")
    assert read_unit(root).env == {"A": "file"}


def test_files_apply_in_order_unit_file_then_dropins_by_name_later_wins(root: Path) -> None:
    write(root, UNIT_FILE, "[Service]\nEnvironmentFile=/etc/1.env\n")
    write(root, f"etc/systemd/system/{UNIT}.d/20-b.conf", "[Service]\nEnvironmentFile=/etc/3.env\n")
    # a drop-in under /run sorts by name among those of /etc: 10- comes before 20-
    write(root, f"run/systemd/system/{UNIT}.d/10-a.conf", "[Service]\nEnvironmentFile=/etc/2.env\n")
    write(root, "/etc/1.env", "A=1\nB=1\nC=1\n")
    write(root, "/etc/2.env", "B=2\nC=2\n")
    write(root, "/etc/3.env", "C=3\n")
    start = read_unit(root)
    assert start.env == {"A": "1", "B": "2", "C": "3"}
    assert start.env_files == ("/etc/1.env", "/etc/2.env", "/etc/3.env")


def test_a_missing_file_with_dash_is_ignored_without_it_the_unit_would_not_start(
    root: Path,
) -> None:
    write(
        root,
        UNIT_FILE,
        "[Service]\nEnvironment=A=unit\nEnvironmentFile=-/etc/optional.env\n"
        "EnvironmentFile=/etc/required.env\n",
    )
    start = read_unit(root)
    assert start.env == {"A": "unit"}
    assert start.env_files == ()
    assert start.missing_env_files == ("/etc/required.env",)
    (problem,) = start.problems
    assert "EnvironmentFile=/etc/required.env does not exist" in problem
    assert "systemd refuses to start the unit" in problem
    assert "EnvironmentFile=-/etc/required.env" in problem


def test_an_empty_value_resets_the_list(root: Path) -> None:
    write(root, UNIT_FILE, "[Service]\nEnvironment=A=unit\nEnvironmentFile=/etc/gone.env\n")
    write(root, f"etc/systemd/system/{UNIT}.d/50-x.conf", "[Service]\nEnvironmentFile=\n")
    write(root, "/etc/gone.env", "A=file\n")
    start = read_unit(root)
    assert start.env == {"A": "unit"}
    assert start.env_files == () and start.missing_env_files == ()


def test_file_syntax_quotes_comments_export_blanks_and_globs(root: Path) -> None:
    write(
        root,
        UNIT_FILE,
        "[Unit]\nEnvironmentFile=/etc/not-service.env\n"
        "[Service]\n  EnvironmentFile =  -/etc/sglang.d/*.env\n"
        "#EnvironmentFile=/etc/commented.env\n",
    )
    write(root, "/etc/not-service.env", "A=wrong-section\n")
    write(root, "/etc/commented.env", "A=commented\n")
    write(
        root,
        "/etc/sglang.d/10-first.env",
        "# comment\n; another\nexport A='single $HOME'\nB=\"double quoted\"\nC=plain\n",
    )
    write(root, "/etc/sglang.d/20-second.env", "C=second\n")
    write(root, "/etc/sglang.d/30-not-matched.conf", "C=ignored\n")
    start = read_unit(root)
    assert start.env == {"A": "single $HOME", "B": "double quoted", "C": "second"}
    assert start.env_files == ("/etc/sglang.d/10-first.env", "/etc/sglang.d/20-second.env")


def test_hostile_file_names_are_read_not_run(root: Path, tmp_path: Path) -> None:
    name = "/etc/a b;$(touch PWNED)`touch PWNED2`.env"
    write(root, UNIT_FILE, f"[Service]\nEnvironmentFile={name}\n")
    write(root, name, "A=read\n")
    start = read_unit(root)
    assert start.env == {"A": "read"}
    assert start.env_files == (name,)
    assert not list(tmp_path.rglob("PWNED*"))


def test_the_probe_rules_for_environment_file_values() -> None:
    values = ["/etc/a", "-/etc/b", "relative/ignored", "", "/etc/c d", " -/etc/e "]
    assert environment_files(values) == (("/etc/c d", False), ("/etc/e", True))
    assert environment_file_paths(values) == ("/etc/c d", "/etc/e")


VALUES = st.text(
    alphabet=st.characters(
        codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp"), exclude_characters="\x85"
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(VALUES, min_size=1, max_size=3))
def test_our_environment_file_reads_back_unchanged(tmp_path_factory, values: list[str]) -> None:
    """What the fix writes is read back as written by the verdict's parser and by sh."""
    names = [f"DT_VAR_{i}" for i in range(len(values))]
    text = env_file_text(
        "use-installed-toolkit", UNIT, [f"{k}={v}" for k, v in zip(names, values, strict=True)]
    )
    assert parse_environment_file(text) == dict(zip(names, values, strict=True))
    path = tmp_path_factory.mktemp("env") / "x.env"
    path.write_text(text + "\n")
    shown = subprocess.run(
        [
            "sh",
            "-c",
            f". {shlex.quote(str(path))}; " + " ".join(f'printf "%s\\0" "${n}";' for n in names),
        ],
        capture_output=True,
        timeout=30,
    )
    assert shown.stdout.decode().split("\0")[:-1] == values


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


# -- for real, over sshd: the reference host whose unit reads /etc/default/sglang --------------


def fake_ct200_with_env_file(dest: Path, ssh_alias: str, env_files: dict[str, str | None]) -> Host:
    spec = reference_ct200(with_cuda13=True)
    activate = f'VIRTUAL_ENV={VENV}\nexport VIRTUAL_ENV\nPATH="$VIRTUAL_ENV/bin:$PATH"\n'
    spec = dataclasses.replace(
        spec,
        files={**spec.files, f"{VENV}/bin/activate": activate},
        unit_env_files={UNIT: env_files},
    )
    fake = build_fake_host(dest, spec)
    return Host(
        name="ct200",
        ssh=ssh_alias,
        root=str(fake.root),
        simulate="tree",
        env=fake.env,
        python=fake.pythons,
        standins=fake.standins,
    )


def session(ssh_env: SSHEnv) -> Session:
    return Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config)


def problems(facts: Facts) -> dict[str, str]:
    return {
        f.id: f.severity for f in diagnose(facts).findings if f.severity in ("critical", "warning")
    }


def service(facts: Facts) -> EnvContext:
    (ctx,) = [c for c in facts.contexts if c.pid == 4242]
    return ctx


def unit_context(facts: Facts) -> EnvContext:
    (ctx,) = [c for c in facts.contexts if c.kind == "unit"]
    return ctx


def systemctl_calls(root: Path) -> list[str]:
    log = root / SYSTEMCTL_LOG.lstrip("/")
    return log.read_text().splitlines() if log.exists() else []


async def probe(s: Session, host: Host) -> Facts:
    facts = (await s.probe(host)).facts
    assert facts is not None
    return facts


@pytest.mark.sshd
async def test_an_environment_only_dropin_is_not_called_fixed_when_a_file_overrides_it(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    """The plan shape from before: the next-start verdict now reads /etc/default/sglang, so it
    reports NOT fixed (the old verification said fixed), and a restart proves it right."""
    host = fake_ct200_with_env_file(tmp_path / "ct200", ssh_env.alias, {DEFAULTS: DEFAULTS_TEXT})
    root = Path(host.root or "")
    async with session(ssh_env) as s:
        before = await probe(s, host)
        assert unit_context(before).env_files == (DEFAULTS,)
        blind = dataclasses.replace(
            before,
            contexts=tuple(dataclasses.replace(c, env_files=()) for c in before.contexts),
        )
        plan = build_plan(blind, host, "use-installed-toolkit", {"path": NEW_CUDA})
        assert "EnvironmentFile" not in plan.steps[0].command  # today's drop-in, unchanged
        outcome = await apply_plan(s, host, plan, before=before)
        text = outcome_text(outcome)
        assert outcome.applied, text
        assert not outcome.ok, text
        assert "flashinfer-arch-rejected" in outcome.unresolved
        assert "NOT fixed: " in text and "flashinfer-arch-rejected" in text
        unit_change = next(c for c in outcome.contexts if c.label.startswith("pid 4242"))
        assert unit_change.after["CUDA_HOME"] == OLD_CUDA
        assert (root / DROPIN).is_file()
        # the probe reads unit files on its own (probe.sh): it agrees
        assert outcome.facts_after is not None
        assert unit_context(outcome.facts_after).vars["CUDA_HOME"] == OLD_CUDA

        restart = restart_plan(host, (UNIT,), sudo=False, stamp="r1")
        assert (await apply_plan(s, host, restart, record_undo=False)).applied
        live = await probe(s, host)
        assert service(live).vars["CUDA_HOME"] == OLD_CUDA
        assert problems(live)["flashinfer-arch-rejected"] == "critical"


@pytest.mark.sshd
async def test_use_installed_toolkit_wins_over_the_units_environment_file_and_undo_restores(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    host = fake_ct200_with_env_file(tmp_path / "ct200", ssh_env.alias, {DEFAULTS: DEFAULTS_TEXT})
    root = Path(host.root or "")
    unit_file_before = (root / UNIT_FILE).read_text()
    async with session(ssh_env) as s:
        before = await probe(s, host)
        assert problems(before)["flashinfer-arch-rejected"] == "critical"
        plan = build_plan(before, host, "use-installed-toolkit", {"path": NEW_CUDA})
        assert f"EnvironmentFile=-/{OUR_ENV_FILE}" in plan.steps[0].command
        outcome = await apply_plan(s, host, plan, before=before)
        text = outcome_text(outcome)
        assert outcome.ok, text
        assert [r.status for r in outcome.steps] == ["changed", "changed"]
        assert "flashinfer-arch-rejected" in outcome.resolved
        assert outcome.worst_after is None
        assert outcome.unit_problems == ()
        assert outcome.pending_restart == (UNIT,)
        unit_change = next(c for c in outcome.contexts if c.label.startswith("pid 4242"))
        assert unit_change.before["CUDA_HOME"] == OLD_CUDA
        assert unit_change.after["CUDA_HOME"] == NEW_CUDA
        assert unit_change.after["PATH"].startswith(f"{NEW_CUDA}/bin:")
        assert outcome.facts_after is not None  # probe.sh's own reading of the unit agrees
        assert unit_context(outcome.facts_after).vars["CUDA_HOME"] == NEW_CUDA
        ours = (root / OUR_ENV_FILE).read_text()
        assert parse_environment_file(ours)["CUDA_HOME"] == NEW_CUDA
        assert (root / DEFAULTS.lstrip("/")).read_text() == DEFAULTS_TEXT  # theirs untouched
        assert (root / UNIT_FILE).read_text() == unit_file_before

        again = await apply_plan(s, host, plan, before=outcome.facts_after)
        assert [r.status for r in again.steps] == ["unchanged", "unchanged"]
        assert again.record is None and again.ok

        restart = restart_plan(host, outcome.pending_restart, sudo=False, stamp="r1")
        assert (await apply_plan(s, host, restart, record_undo=False)).applied
        assert systemctl_calls(root)[-1] == f"restart {UNIT}"
        green = await probe(s, host)
        assert service(green).vars["CUDA_HOME"] == NEW_CUDA
        assert problems(green) == {}

        (record,) = list_records("ct200")
        undone = await apply_plan(
            s, host, undo_plan(record, host, sudo=False, stamp="u1"), record_undo=False
        )
        assert undone.applied, outcome_text(undone)
        mark_undone(record)
        assert "flashinfer-arch-rejected" in undone.findings_after
        assert undone.worst_after == "critical"
        assert not (root / DROPIN).exists()
        assert not (root / OUR_ENV_FILE).exists()
        assert (root / UNIT_FILE).read_text() == unit_file_before
        restart = restart_plan(host, undone.pending_restart, sudo=False, stamp="r2")
        assert undone.pending_restart == (UNIT,)
        assert (await apply_plan(s, host, restart, record_undo=False)).applied
        red = await probe(s, host)
        assert service(red).vars["CUDA_HOME"] == OLD_CUDA
        assert problems(red)["flashinfer-arch-rejected"] == "critical"


@pytest.mark.sshd
async def test_a_missing_required_environment_file_is_reported_not_called_fixed(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    host = fake_ct200_with_env_file(
        tmp_path / "ct200",
        ssh_env.alias,
        {DEFAULTS: DEFAULTS_TEXT, "/etc/default/sglang-local": None, "-/etc/default/opt": None},
    )
    root = Path(host.root or "")
    async with session(ssh_env) as s:
        before = await probe(s, host)
        plan = build_plan(before, host, "use-installed-toolkit", {"path": NEW_CUDA})
        outcome = await apply_plan(s, host, plan, before=before)
        text = outcome_text(outcome)
        assert outcome.applied and "flashinfer-arch-rejected" in outcome.resolved, text
        assert not outcome.ok
        (problem,) = outcome.unit_problems
        assert problem.startswith(
            f"{UNIT}: EnvironmentFile=/etc/default/sglang-local does not exist"
        )
        assert f"Will NOT start: {problem}" in text
        assert outcome_summary(outcome)["unit_problems"] == [problem]
    assert fake_systemctl(root, ["restart", UNIT]) == 1  # and the processes keep their env
    assert "CUDA_HOME=/usr/local/cuda-12.8" in (root / "proc/4242/environ").read_text()


def test_fake_hosts_refuse_env_files_for_a_unit_they_do_not_have(tmp_path: Path) -> None:
    spec = dataclasses.replace(
        reference_ct200(service=False), unit_env_files={UNIT: {DEFAULTS: DEFAULTS_TEXT}}
    )
    with pytest.raises(ValueError, match=r"sglang\.service, which has no unit file"):
        build_fake_host(tmp_path / "h", spec)
