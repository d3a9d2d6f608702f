"""Secrets stay home (issue 18): inventory ``env`` reaches the host on stdin, never in a command
line another local user can read (``/proc/PID/cmdline``, sampled during a real probe over the
real sshd); ``probe-script`` leaves secret values out unless asked to embed them."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import SSHEnv
from exec_engines import KUBECTL, calls, install_shim, tree_host
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from secret_corpus import corpus_host, leaks

from probes import probe_env, probe_script
from tui.cli import main
from tui.core.hosts import SCRIPT_WORD, Host
from tui.core.reach.transport import script_with_env
from tui.core.redact import TEXT_RULES, redact_text
from tui.core.run.runner import Session
from tui.demo.fakehost import build_fake_host, reference_ct200

TOKEN = "hf_sampledFromTheProcessTable0123456789"
PASSWORD = "pw-in-the-index-url-4242"
ENV = {"HF_TOKEN": TOKEN, "PIP_INDEX_URL": f"https://user:{PASSWORD}@pypi.example/simple"}


def sample_cmdlines(stop: threading.Event, seen: list[bytes]) -> None:
    """Every command line on this machine, over and over, until ``stop``."""
    proc = Path("/proc")
    while not stop.is_set():
        for entry in proc.iterdir():
            if entry.name.isdigit():
                try:
                    seen.append((entry / "cmdline").read_bytes())
                except OSError:
                    continue


@pytest.mark.sshd
async def test_env_never_reaches_a_command_line(ssh_env: SSHEnv) -> None:
    stop, seen = threading.Event(), []
    sampler = threading.Thread(target=sample_cmdlines, args=(stop, seen), daemon=True)
    sampler.start()
    try:
        async with Session(known_hosts=ssh_env.known_hosts, ssh_config=ssh_env.ssh_config) as s:
            host = Host(name="shared", ssh=ssh_env.alias, env=ENV)
            result = await s.probe(host)
            echoed = await s.run_script(host, 'printf "%s\\n" "$HF_TOKEN"', env=ENV)
            py = await s.run_script(
                host,
                "import os; print(os.environ['PIP_INDEX_URL'])",
                env=ENV,
                interpreter="python3 -",
            )
    finally:
        stop.set()
        await asyncio.to_thread(sampler.join, 10)
    assert result.facts is not None and result.facts.probe.complete, result.error
    # the variables arrived, for sh and for another interpreter …
    assert echoed.output == f"{TOKEN}\n" and py.output == f"{ENV['PIP_INDEX_URL']}\n"
    # … while the probe's own processes were sampled, and none carried them
    assert any(b"sh\0-s\0" in c or b"@@detective-tui-pgid" in c for c in seen)
    assert len(seen) > 100
    leaked = [c for c in seen if TOKEN.encode() in c or PASSWORD.encode() in c]
    assert not leaked, leaked[:3]
    assert TOKEN not in result_command(result.raw_lines)


def result_command(lines: tuple[str, ...]) -> str:
    return "\n".join(lines)


async def test_env_never_reaches_a_command_line_through_exec_or_with_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``exec:`` transport (whose script is an argument) and a script given as an argument
    with ``stdin=``: the variables still arrive, on stdin, and no command line carries them."""
    shim = install_shim(tmp_path, "kubectl", KUBECTL, monkeypatch)
    tree = build_fake_host(tmp_path / "ct200", reference_ct200())
    words = (str(shim), "exec", "-i", "-n", "ml", "ct200", "--", "sh", "-c", SCRIPT_WORD)
    pod = tree_host(tree, Host(name="ct200", exec=words, env=ENV))
    stop, seen = threading.Event(), []
    sampler = threading.Thread(target=sample_cmdlines, args=(stop, seen), daemon=True)
    sampler.start()
    try:
        async with Session() as s:
            result = await s.probe(pod)
            echoed = await s.run_script(pod, 'printf "%s\\n" "$HF_TOKEN"', env=ENV)
            here = Host(name="here", local=True)
            piped = await s.run_script(
                here, 'read l; printf "%s|%s\\n" "$l" "$HF_TOKEN"', env=ENV,
                stdin="from stdin\n", interpreter="sh -c",
            )  # fmt: skip
            exec_piped = await s.run_script(
                pod, 'cat; printf "%s\\n" "$PIP_INDEX_URL"', env=ENV, stdin="x\n",
                interpreter="sh -c",
            )  # fmt: skip
    finally:
        stop.set()
        await asyncio.to_thread(sampler.join, 10)
    assert result.facts is not None and result.facts.probe.complete, result.error
    assert echoed.output == f"{TOKEN}\n", echoed
    assert piped.output == f"from stdin|{TOKEN}\n", piped
    assert exec_piped.output == f"x\n{ENV['PIP_INDEX_URL']}\n", exec_piped
    assert any(b"@@detective-tui-pgid" in c for c in seen) and len(seen) > 100
    leaked = [c for c in seen if TOKEN.encode() in c or PASSWORD.encode() in c]
    assert not leaked, leaked[:3]
    logged = "\n".join(map(str, calls(tmp_path / "kubectl.log")))  # every kubectl argv
    assert "@@detective-tui-env-end" in logged and TOKEN not in logged and PASSWORD not in logged


async def test_an_exec_command_without_stdin_says_the_env_did_not_arrive() -> None:
    """An engine that does not pass stdin on (``kubectl exec`` without ``-i``): with ``env`` the
    script does not run without its variables; it stops with a clear message."""
    words = ("sh", "-c", 'exec sh -c "$0" </dev/null', SCRIPT_WORD)
    async with Session() as s:
        bare = await s.run_script(Host(name="pod", exec=words), "echo ran")
        result = await s.run_script(Host(name="pod", exec=words), "echo ran", env=ENV)
    assert bare.output == "ran\n"
    assert result.exit_status == 97 and "ran" not in result.output
    assert "did not arrive on stdin" in result.output and "kubectl exec -i" in result.output


def test_script_with_env_quotes_and_keeps_the_interpreter() -> None:
    text = script_with_env("print(1)\n", {"A": "it's $x"}, "python3 -")
    assert text.startswith("A='it'\"'\"'s $x'\nexport A\nexec python3 - <<'DT_SCRIPT_")
    tag = text.split("<<'", 1)[1].split("'", 1)[0]
    assert text.endswith(f"\nprint(1)\n{tag}\n")
    with pytest.raises(ValueError, match="not variable names"):
        script_with_env("", {"A B": "1"}, "sh -s")


def test_probe_script_leaves_secrets_out_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(
        "hosts:\n  - name: gpu1\n    ssh: gpu1\n    env:\n"
        f"      HF_TOKEN: {TOKEN}\n      PIP_INDEX_URL: {ENV['PIP_INDEX_URL']}\n"
        "      CUDA_HOME: /usr/local/cuda-12.8\n"
    )
    assert main(["--hosts", str(inventory), "probe-script", "gpu1"]) == 0
    out, err = capsys.readouterr()
    assert TOKEN not in out and PASSWORD not in out
    assert "CUDA_HOME=/usr/local/cuda-12.8" in out
    assert "HF_TOKEN" in err and "PIP_INDEX_URL" in err and "--embed-secrets" in err
    assert main(["--hosts", str(inventory), "probe-script", "gpu1", "--embed-secrets"]) == 0
    out, err = capsys.readouterr()
    assert f"HF_TOKEN={TOKEN}" in out and not err


def test_the_probe_masks_every_planted_shape_before_it_leaves_the_host(tmp_path: Path) -> None:
    """The raw records (what crosses the wire and sits in the remote temp dir), not a report:
    secret names, URL credentials in argv, a positional sk-, a JSON secret inside an argument,
    --api-key inside a SGLANG_* value, tokens under harmless names."""
    fake = corpus_host(tmp_path / "corpus")
    env = {**os.environ, **fake.env}
    env.update(probe_env(fake.pythons, root=str(fake.root), tree_exec=True, step_timeout_s=5))
    out = subprocess.run(
        ["sh", "-s"], input=probe_script(), capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "@@DT1\tctx\t" in out.stdout and "--model-url" in out.stdout
    assert leaks(out.stdout) == []


# -- one list of shapes: whatever tui.core.redact masks, the probe masks on the host ----------


def _probe_masks(values: list[str]) -> list[tuple[str, str]]:
    """Each value as the probe sends it under a harmless name (mask_value) and as an argument
    (mask_arg)."""
    script = probe_script()
    funcs = script[script.index("maybe_secret() {") : script.index("# ---- toolkit candidates")]
    loop = (
        'while IFS= read -r v; do mask_value VLLM_X "$v"; mask_arg "$v";'
        ' printf "%s\\n%s\\n" "$_mv" "$_mg"; done'
    )
    out = subprocess.run(
        ["sh", "-c", "TAB='\t'\nNL='\n'\n" + funcs + loop],
        input="".join(v + "\n" for v in values),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    return list(zip(out[0::2], out[1::2], strict=False))[: len(values)]


def _samples(pattern: re.Pattern[str]) -> list[str]:
    """Values of one TEXT_RULES shape (generated, no shrinking: a fixed, fast sample)."""
    found: list[str] = []

    @settings(
        max_examples=15,
        phases=[Phase.generate],
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],  # a shared machine under load
    )
    @given(st.from_regex(pattern, fullmatch=True))
    def draw(value: str) -> None:
        value = re.sub(r"\s", " ", value)  # one line, as records carry it
        if value.isprintable() and value.strip() == value and redact_text(value) != value:
            found.append(value)

    draw()
    return found


@pytest.mark.parametrize("pattern", [p for p, _ in TEXT_RULES], ids=lambda p: p.pattern[:24])
def test_the_probe_masks_every_shape_the_redaction_path_knows(pattern: re.Pattern[str]) -> None:
    values = _samples(pattern)
    assert values
    for value, (as_env, as_arg) in zip(values, _probe_masks(values), strict=True):
        assert as_env != value and as_arg != value, value
