"""A serving process's arguments, exactly: probe (`arg` records) → facts (`argv`) → the SGLang
unit fix's ``ExecStart=`` → systemd's own word splitting → the same argv at the next start."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SSHEnv
from ct200_plans import CT200, STAMP, ct200_facts
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from plan_golden import GOLDEN
from plan_golden import shown as plan_shown

from probes import probe_env, probe_script
from tui.core.facts import EnvContext, Facts
from tui.core.facts.build import FactBuilder, facts_from_output
from tui.core.facts.probe_records import unescape_arg, unescape_field
from tui.core.fixes import FixError, build_plan
from tui.core.fixes.restart import restart_plan
from tui.core.fixes.unitenv import parse_exec_argv
from tui.core.hosts import Host
from tui.core.redact import is_secret_name
from tui.core.run.fix_executor import apply_plan
from tui.core.run.fix_render import outcome_text
from tui.core.run.runner import Session
from tui.core.systemd_syntax import exec_start_value, quote_exec_arg, split_exec_start
from tui.demo import fakehost
from tui.demo.fakehost import FakeHost

VENV = "/root/venv_sglang211"
PY = f"{VENV}/bin/python3"
SERVER = (PY, "-m", "sglang.launch_server")
# every kind of argument a shell, a record line or a unit file could get wrong
AWKWARD = (
    *SERVER,
    "--model-path",
    "/models/My Model",
    "--chat-template",
    "{{ messages }}\n\t{% if x %}'single' \"double\"{% endif %}",
    "--json-model-override-args",
    '{"rope": "$HOME", "ratio": "100%", "sep": ";", "re": "a\\\\d+"}',
    "--served-model-name",
    "",
    "--tp",
    "8",
    "Ünïcødé ✓",
    "trailing space ",
    "--api-key",
    "sk-argv-secret",
    "--hf-token=hf_argv_secret",
    "--tokenizer-path",
    "/models/tok",
)
AWKWARD_SEEN = tuple(
    {"sk-argv-secret": "***", "--hf-token=hf_argv_secret": "--hf-token=***"}.get(a, a)
    for a in AWKWARD
)
# the same, without secrets: what the unit fix can copy
COPYABLE = (*AWKWARD[: AWKWARD.index("--api-key")], "--tokenizer-path", "/models/tok")


def with_server_argv(spec: fakehost.FakeHostSpec, argv: tuple[str | bytes, ...]):
    main, *workers = spec.processes
    return dataclasses.replace(spec, processes=(dataclasses.replace(main, argv=argv), *workers))


def run_probe(fake: FakeHost, shell: str = "sh", lang: str = "C") -> tuple[Facts, str]:
    env = {"SHELL": "/bin/sh", "LANG": lang, **fake.env}
    env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True, step_timeout_s=5))
    proc = subprocess.run(
        [shutil.which(shell) or shell, "-s"],
        input=probe_script().encode(),
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    raw = proc.stdout.decode("utf-8", "replace")
    return facts_from_output(raw), raw


def server(facts: Facts) -> EnvContext:
    (ctx,) = [c for c in facts.contexts if c.pid == 4242]
    return ctx


def build(tmp_path: Path, argv: tuple[str | bytes, ...]) -> FakeHost:
    spec = with_server_argv(fakehost.reference_ct200(), argv)
    return fakehost.build_fake_host(tmp_path / "odd dir $HOME;x" / "root", spec)


# --- the probe ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("shell", "lang"), [("sh", "C"), ("bash", "C"), ("bash", "C.UTF-8")])
def test_arguments_arrive_exactly_with_secrets_masked(
    tmp_path: Path, shell: str, lang: str
) -> None:
    facts, raw = run_probe(build(tmp_path, AWKWARD), shell, lang)
    ctx = server(facts)
    assert ctx.argv == AWKWARD_SEEN and ctx.argv_note is None
    assert "argv-secret" not in raw and "argv_secret" not in raw
    assert ctx.cmdline == " ".join(AWKWARD_SEEN)
    # the record for display carries the same arguments escaped (and, as every field, escaped
    # once more on the wire)
    (line,) = [ln for ln in raw.splitlines() if ln.startswith("@@DT1\tctxkv\t2\tcmdline\t")]
    display = unescape_field(line)
    assert "{{ messages }}\\012\\011{% if x %}" in display
    assert "--api-key *** --hf-token=*** --tokenizer-path /models/tok" in display
    assert ctx.label == "pid 4242 sglang.launch_server"
    # every record line is printable ASCII
    arg_lines = [ln for ln in raw.splitlines() if ln.startswith("@@DT1\targ\t")]
    assert len(arg_lines) == len(AWKWARD)
    assert all(ln.isascii() and ln.replace("\t", " ").isprintable() for ln in arg_lines)


@pytest.mark.parametrize(("shell", "lang"), [("sh", "C"), ("bash", "C.UTF-8")])
def test_the_interpreter_is_still_found_from_an_escaped_argv0(
    tmp_path: Path, shell: str, lang: str
) -> None:
    """argv[0] with a backslash and non-ASCII bytes: the probe turns its escapes back into the
    path to find the interpreter (a venv whose path needs escaping)."""
    odd_venv = "/opt/vénv \\ x"
    spec = fakehost.reference_ct200()
    spec = dataclasses.replace(
        spec, venvs=(dataclasses.replace(spec.venvs[0], path=odd_venv),), inventory_pythons=()
    )
    odd_py = f"{odd_venv}/bin/python3"
    spec = with_server_argv(spec, (odd_py, "-m", "sglang.launch_server", "--tp", "8"))
    fake = fakehost.build_fake_host(tmp_path / "root", spec)
    facts, _ = run_probe(fake, shell, lang)
    ctx = server(facts)
    assert ctx.argv == (odd_py, "-m", "sglang.launch_server", "--tp", "8")
    (served,) = [p for p in facts.pythons if p.context == ctx.label]
    assert served.path == odd_py and served.exists


def test_an_argument_that_is_not_utf8_is_reported_not_guessed(tmp_path: Path) -> None:
    facts, _ = run_probe(build(tmp_path, (*SERVER, "--model-path", b"/models/\xff\xfe")))
    ctx = server(facts)
    assert ctx.argv is None
    assert ctx.argv_note == (
        "argv[4] (/models/\\377\\376) cannot be carried exactly: byte 8 is not part of UTF-8 text"
    )
    with pytest.raises(FixError, match=r"argv\[4\] .* not part of UTF-8 text.*systemctl edit"):
        build_plan(facts, Host(name="ct200", root="/x"), "sampling-backend-fallback", {})


def test_a_command_line_over_64_kib_keeps_its_display_but_no_arguments(tmp_path: Path) -> None:
    template = "x" * 70_000
    facts, raw = run_probe(build(tmp_path, (*SERVER, "--chat-template", template, "--tp", "8")))
    ctx = server(facts)
    assert ctx.argv is None and "longer than 65536 bytes" in (ctx.argv_note or "")
    assert "\targ\t" not in raw
    assert (ctx.cmdline or "").startswith(f"{PY} -m sglang.launch_server --chat-template xxx")
    with pytest.raises(FixError, match="longer than 65536 bytes"):
        build_plan(facts, Host(name="ct200", root="/x"), "sampling-backend-fallback", {})


def test_a_stream_cut_within_the_arguments_leaves_them_unknown(tmp_path: Path) -> None:
    _, raw = run_probe(build(tmp_path, AWKWARD))
    lines = raw.splitlines()
    last_arg = max(i for i, ln in enumerate(lines) if ln.startswith("@@DT1\targ\t"))
    builder = FactBuilder()
    for line in lines[:last_arg]:
        builder.feed(line)
    ctx = server(builder.facts())
    assert ctx.argv is None and ctx.argv_note == "the probe's output ended within its arguments"


def sh_is_secret(name: str) -> bool:
    """probe.sh's is_secret: the same judgement as the one redaction path
    (tests/test_redact.py checks that they agree)."""
    return is_secret_name(name)


def masked(argv: tuple[str, ...]) -> tuple[str, ...]:
    """What the probe sends: a secret flag's value, and a secret --flag=value's value, as ***."""
    out, prev = [argv[0]], ""
    for a in argv[1:]:
        if (
            prev.startswith("--")
            and "=" not in prev[2:]
            and not a.startswith("-")
            and sh_is_secret(prev)
        ):
            a = "***"
        if a.startswith("--") and "=" in a[2:] and sh_is_secret(a.split("=", 1)[0]):
            a = a.split("=", 1)[0] + "=***"
        out.append(a)
        prev = a
    return tuple(out)


@pytest.fixture(scope="module")
def roundtrip_host(tmp_path_factory: pytest.TempPathFactory) -> FakeHost:
    spec = fakehost.reference_ct200()
    spec = dataclasses.replace(spec, inventory_pythons=())
    return fakehost.build_fake_host(tmp_path_factory.mktemp("argv") / "root", spec)


ARG_TEXT = st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)))
ARG = st.one_of(
    ARG_TEXT,
    st.sampled_from(["--api-key", "--hf-token", "--tokenizer", "--x-token", "-m", "--", ""]),
    st.builds(lambda v: f"--hf-token={v}", ARG_TEXT),
)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(args=st.lists(ARG, max_size=8), shell=st.sampled_from(["sh", "bash"]))
@example(args=["\\", "\\\\n", "%%", "$$", "\r\n", "\x85\u2028", " ", ""], shell="sh")
@example(args=["--api-key", "", "--api-key", "-x", "--hf-token=", "--tokenizer", "t"], shell="bash")
def test_any_argv_round_trips(roundtrip_host: FakeHost, args: list[str], shell: str) -> None:
    argv = (*SERVER, *args)
    (roundtrip_host.root / "proc/4242/cmdline").write_bytes(
        b"".join(a.encode() + b"\0" for a in argv)
    )
    facts, _ = run_probe(roundtrip_host, shell)
    assert server(facts).argv == masked(argv)


# --- the record escaping, on its own --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "arg"),
    [("a b", "a b"), ("\\\\", "\\"), ("\\011\\012", "\t\n"), ("\\303\\274", "ü"), ("", "")],
)
def test_unescape_arg(text: str, arg: str) -> None:
    assert unescape_arg(text) == arg


@pytest.mark.parametrize("text", ["\\", "\\x41", "\\8", "\\400", "é", "\\377"])
def test_unescape_arg_refuses_what_the_probe_never_sends(text: str) -> None:
    with pytest.raises(ValueError):
        unescape_arg(text)


def test_facts_json_round_trip_and_old_json_without_argv() -> None:
    facts = dataclasses.replace(
        ct200_facts(),
        contexts=(
            ct200_facts().contexts[0],
            dataclasses.replace(ct200_facts().contexts[1], argv=COPYABLE),
            EnvContext(kind="process", label="pid 7", argv_note="its command line is longer"),
        ),
    )
    assert Facts.from_json(facts.to_json()) == facts
    old = facts.to_json()
    for ctx in old["contexts"]:
        del ctx["argv"], ctx["argv_note"]
    assert Facts.from_json(old).contexts[1].argv is None


# --- ExecStart= quoting against systemd's splitting -----------------------------------------------


@pytest.mark.parametrize(
    ("value", "argv"),
    [
        ('/bin/x "a b" c\\ d', ["/bin/x", "a b", "c\\ d"]),  # "\\s" is a blank
        ("/bin/x 'it''s' \"q\\\"\"", ["/bin/x", "its", 'q"']),
        ("/bin/x \\t\\x41\\101\\u00fc\\303\\274 \\s", ["/bin/x", "\tAAüü", " "]),
        ("/bin/x \\d 'a\\'b'", ["/bin/x", "\\d", "a'b"]),  # unknown escapes are kept
        ("/bin/x %%i %n $$HOME ${X}", ["/bin/x", "%i", "%n", "$HOME", "${X}"]),
        ('/bin/x "" ";" \\; ; /bin/y', ["/bin/x", "", ";", ";"]),
        ("-@/bin/x name arg", ["name", "arg"]),
        (":/bin/x $$", ["/bin/x", "$$"]),
        ("  /bin/x  ", ["/bin/x"]),
    ],
)
def test_split_exec_start_follows_systemd(value: str, argv: list[str]) -> None:
    assert split_exec_start(value) == argv


@pytest.mark.parametrize("value", ['/bin/x "open', "/bin/x 'open", "/bin/x \\377"])
def test_split_exec_start_rejects_what_systemd_rejects(value: str) -> None:
    with pytest.raises(ValueError):
        split_exec_start(value)


@settings(max_examples=300)
@given(args=st.lists(ARG_TEXT, max_size=6))
@example(args=["%", "$", "\\", '"', "'", ";", "", "\t\n\r\x7f\x85\u2028\U0001f600", "%%$$"])
def test_quoted_words_split_back_to_the_same_argv(args: list[str]) -> None:
    argv = ["/usr/bin/python3", *args]
    value = exec_start_value(argv)
    assert "\n" not in value and "\r" not in value
    assert split_exec_start(value) == argv


def test_quoting_of_one_word() -> None:
    assert quote_exec_arg('100% $HOME "x"\t\\') == '"100%% $$HOME \\"x\\"\\t\\\\"'


@pytest.mark.parametrize(
    "exe", ["venv/bin/python3", "/a/$b/python3", "/a\\b", "-/bin/x", "/bin/", ""]
)
def test_an_executable_systemd_would_not_run_by_that_name_is_refused(exe: str) -> None:
    with pytest.raises(ValueError):
        exec_start_value([exe, "-m", "sglang"])


def test_a_bare_executable_name_is_written_for_systemd_to_look_up() -> None:
    assert exec_start_value(["python3", "-m", "sglang"]) == '"python3" "-m" "sglang"'


# --- the SGLang unit fix ----------------------------------------------------------------------


def facts_with_argv(argv: tuple[str, ...], cmdline: str | None = None) -> Facts:
    base = ct200_facts()
    service = dataclasses.replace(base.contexts[1], argv=argv, cmdline=cmdline or " ".join(argv))
    return dataclasses.replace(base, contexts=(base.contexts[0], service))


def test_dry_run_writes_each_argument_quoted_exactly() -> None:
    facts = facts_with_argv(COPYABLE)
    plan = build_plan(facts, CT200, "sampling-backend-fallback", {}, stamp=STAMP)
    line = (
        'ExecStart="/root/venv_sglang211/bin/python3" "-m" "sglang.launch_server" "--model-path"'
        ' "/models/My Model" "--chat-template" "{{ messages }}\\n\\t{%% if x %%}\'single\''
        ' \\"double\\"{%% endif %%}" "--json-model-override-args" "{\\"rope\\": \\"$$HOME\\",'
        ' \\"ratio\\": \\"100%%\\", \\"sep\\": \\";\\", \\"re\\": \\"a\\\\\\\\d+\\"}"'
        ' "--served-model-name" "" "--tp" "8" "Ünïcødé ✓" "trailing space "'
        ' "--tokenizer-path" "/models/tok" "--sampling-backend" "pytorch"'
    )
    golden = GOLDEN["sampling-backend-fallback"]
    old_line = next(ln for ln in golden.splitlines() if ln.startswith('ExecStart="'))
    # the file's text is one shlex-quoted word that ends on this line: its single quotes are
    # closed and reopened
    expected = golden.replace(old_line, line.replace("'", "'\"'\"'") + "'")
    shown = plan_shown(plan)
    assert shown == expected.strip("\n")
    assert split_exec_start(line[len("ExecStart=") :]) == [
        *COPYABLE,
        "--sampling-backend",
        "pytorch",
    ]


def test_an_existing_sampling_flag_is_replaced_not_doubled() -> None:
    argv = (*SERVER, "--sampling-backend", "flashinfer", "--tp", "8", "--sampling-backend=x")
    plan = build_plan(facts_with_argv(argv), CT200, "sampling-backend-fallback", {}, stamp=STAMP)
    assert (
        'ExecStart="/root/venv_sglang211/bin/python3" "-m" "sglang.launch_server" "--tp" "8"'
        ' "--sampling-backend" "pytorch"'
    ) in plan.steps[0].command


def test_masked_secrets_in_argv_are_never_copied() -> None:
    facts = facts_with_argv((*SERVER, "--api-key", "***"), cmdline=f"{PY} -m sglang.launch_server")
    with pytest.raises(FixError, match=r"masked as secrets .*systemctl edit sglang.service"):
        build_plan(facts, CT200, "sampling-backend-fallback", {}, stamp=STAMP)


def test_an_argv0_systemd_cannot_run_by_name_is_refused_with_the_reason() -> None:
    facts = facts_with_argv(("venv/bin/python3", "-m", "sglang.launch_server"))
    with pytest.raises(FixError, match="neither an absolute path nor a bare file name"):
        build_plan(facts, CT200, "sampling-backend-fallback", {}, stamp=STAMP)


def test_the_engine_is_read_from_whole_arguments() -> None:
    """A chat template that mentions vllm is one argument, not the word "vllm": the SGLang
    server gets the ExecStart fix. Facts without argv (an older probe) still split the
    displayed command line, and see a vLLM server."""
    argv = (PY, "/opt/serve.py", "--chat-template", "answer as vllm would")
    plan = build_plan(facts_with_argv(argv), CT200, "sampling-backend-fallback", {}, stamp=STAMP)
    assert plan.exec_units == ("sglang.service",)
    old = dataclasses.replace(
        ct200_facts(),
        contexts=(
            ct200_facts().contexts[0],
            dataclasses.replace(ct200_facts().contexts[1], cmdline=" ".join(argv)),
        ),
    )
    plan = build_plan(old, CT200, "sampling-backend-fallback", {}, stamp=STAMP)
    assert plan.exec_units == () and "VLLM_USE_FLASHINFER_SAMPLER=0" in plan.steps[0].command


# --- executed over the real loopback sshd ------------------------------------------------------


@pytest.mark.sshd
async def test_the_unit_restarts_with_the_same_argv_plus_the_flag(
    tmp_path: Path, ssh_env: SSHEnv
) -> None:
    spec = with_server_argv(fakehost.reference_ct200(), COPYABLE)
    fake = fakehost.build_fake_host(tmp_path / "root", spec)
    host = Host(
        name="ct200",
        ssh=ssh_env.alias,
        root=str(fake.root),
        simulate="tree",
        env=fake.env,
        python=fake.pythons,
    )
    expected = (*COPYABLE, "--sampling-backend", "pytorch")
    dropin = fake.root / "etc/systemd/system/sglang.service.d/50-detective-tui-sampling.conf"
    unit = fake.root / "etc/systemd/system/sglang.service"
    async with Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config) as s:
        before = (await s.probe(host)).facts
        assert before is not None and server(before).argv == COPYABLE
        plan = build_plan(before, host, "sampling-backend-fallback", {})
        outcome = await apply_plan(s, host, plan, before=before)
        assert outcome.ok, outcome_text(outcome)
        assert outcome.resolved == ("flashinfer-arch-rejected",)
        # systemd's rules applied to the unit file and the drop-in give the argv back
        assert parse_exec_argv([unit.read_text(), dropin.read_text()]) == expected

        restart = restart_plan(host, outcome.pending_restart, sudo=False, stamp="r")
        assert (await apply_plan(s, host, restart, record_undo=False)).applied
        assert (fake.root / "proc/4242/cmdline").read_bytes() == b"".join(
            a.encode() + b"\0" for a in expected
        )
        after = (await s.probe(host)).facts
        assert after is not None and server(after).argv == expected
