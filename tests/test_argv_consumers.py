"""What reads a serving process's command line uses its exact arguments when the probe has them.

A venv path with a space or a chat template that mentions a flag must not be misread the way a
command line split at blanks would be.
"""

from __future__ import annotations

from tui.core.facts import EnvContext, Facts, PythonEnv
from tui.core.findings.flashinfer_arch_rejected import sampler_off as _sampler_off
from tui.core.fixes.env_targets import serving_contexts
from tui.core.fixes.simulate import serves as _serves
from tui.core.rules.subject import Subject

VENV = "/opt/my venv"
ARGV = (f"{VENV}/bin/python3", "-m", "sglang.launch_server", "--port", "30000")


def _process(argv: tuple[str, ...] | None, cmdline: str | None = None) -> EnvContext:
    return EnvContext(
        kind="process",
        label="pid 7 sglang.launch_server",
        pid=7,
        exe="/usr/bin/python3.12",  # the venv's symlink resolved: says nothing about the venv
        argv=argv,
        cmdline=" ".join(argv) if argv is not None else cmdline,
    )


def _facts(ctx: EnvContext) -> tuple[Facts, PythonEnv]:
    py = PythonEnv(path=f"{VENV}/bin/python3", prefix=VENV, context="ssh session")
    return Facts(contexts=(ctx,), pythons=(py,)), py


def test_argv0_and_words_prefer_the_exact_arguments() -> None:
    exact = _process(ARGV)
    assert exact.argv0 == f"{VENV}/bin/python3" and exact.words == ARGV
    old = _process(None, cmdline="/usr/bin/python3 -m vllm.entrypoints.openai.api_server")
    assert old.argv0 == "/usr/bin/python3" and old.words[1:] == ("-m", old.words[2])
    assert _process(None).argv0 is None and _process(None).words == ()


def test_a_venv_path_with_a_space_still_identifies_the_server() -> None:
    ctx = _process(ARGV)
    facts, py = _facts(ctx)
    assert serving_contexts(facts, py) == (ctx,)
    assert _serves(facts, ctx, py)


def _subject(ctx: EnvContext) -> Subject:
    return Subject(
        python=None,
        context=ctx,
        devices=(),
        replay_in=None,
        trace=None,
        jit_nvcc=None,
        jit_origin="",
        jit_toolkit=None,
    )


def test_the_sampler_flag_is_read_from_whole_arguments() -> None:
    assert _sampler_off(_subject(_process((*ARGV, "--sampling-backend", "pytorch"))))
    assert _sampler_off(_subject(_process((*ARGV, "--sampling-backend=pytorch"))))
    template = (*ARGV, "--chat-template", "say --sampling-backend pytorch")
    assert not _sampler_off(_subject(_process(template)))
    assert not _sampler_off(_subject(_process((*ARGV, "--sampling-backend", "flashinfer"))))
