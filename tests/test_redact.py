"""The one redaction path (tui/core/redact.py) on every syntax a secret comes in, and the
probe's own masking on the host (probes/probe.sh: is_secret, redact_line) agreeing with it."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes import probe_script
from tui.core import redact as redact_module
from tui.core.redact import (
    MASK,
    RULE_NEEDS,
    RULE_STARTS,
    TEXT_RULES,
    is_secret_name,
    redact,
    redact_text,
)

MASKED = [
    # systemd: Environment= holds several assignments, quoted or not (issue 9: "Environment"
    # was taken as the variable name)
    ("Environment=HF_TOKEN=abc123 CUDA_HOME=/x", "Environment=HF_TOKEN=*** CUDA_HOME=/x"),
    ('Environment="HF_TOKEN=two words" X=1', 'Environment="HF_TOKEN=***" X=1'),
    ("Environment=A=1 \"DB_PASSWORD=p w\" 'API_KEY=k'",
     "Environment=A=1 \"DB_PASSWORD=***\" 'API_KEY=***'"),
    # env files, profiles in sh, csh, fish; `export -p`; k8s env lists; JSON and YAML
    ("export HF_TOKEN=abc", "export HF_TOKEN=***"),
    ('HF_TOKEN="a b c"', 'HF_TOKEN="***"'),
    ('declare -x OPENAI_API_KEY="k"', 'declare -x OPENAI_API_KEY="***"'),
    ("setenv GH_TOKEN ghsecret", "setenv GH_TOKEN ***"),
    ("set -gx GH_TOKEN ghsecret", "set -gx GH_TOKEN ***"),
    ("- name: HF_TOKEN\n  value: abc", "- name: HF_TOKEN\n  value: ***"),
    ('{"HF_TOKEN": "abc", "CUDA_HOME": "/x"}', '{"HF_TOKEN": "***", "CUDA_HOME": "/x"}'),
    ("aws_secret_access_key: abc", "aws_secret_access_key: ***"),
    # command lines: env words as shlex quotes them, secret flags in both forms
    ("env 'HF_TOKEN=a b' python3", "env 'HF_TOKEN=***' python3"),
    ("serve --api-key abc --port 1", "serve --api-key *** --port 1"),
    ("serve --token 'a b' --hf-token=xyz", "serve --token '***' --hf-token=***"),
    # credential shapes anywhere
    ("postgres://u:pw@db/x", "postgres://***@db/x"),
    ("https://KEY:SECRET@host/p", "https://***@host/p"),
    ("https://u:p@ss@host/p", "https://***@host/p"),
    ("git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/x", "git clone https://***@github.com/x"),
    ("Authorization: Bearer abc.def.ghi", "Authorization: *** ***"),
    ("curl -H 'x: Bearer abcdefghijkl'", "curl -H 'x: Bearer ***'"),
    ("t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "t=***"),
    ("repo hf_abcdefghijklmnopqrstuvwx", "repo ***"),
    ("key sk-proj-abcdefghijklmnopqrstuv", "key ***"),
    ("id AKIAABCDEFGHIJKLMNOP", "id ***"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
     "-----BEGIN PRIVATE KEY----- *** -----END PRIVATE KEY-----"),
]  # fmt: skip

UNCHANGED = [
    "CUDA_HOME=/usr/local/cuda-12.8 PATH=/usr/local/cuda/bin:/usr/bin",
    "TOKENIZERS_PARALLELISM=false",
    "serve --tokenizer-path /models/tok --max-total-tokens 4096 --max-prefill-tokens 8192",
    "key_type=ssh-ed25519 fingerprint=SHA256:abc",
    "basic functionality is fine",
    "https://host:8080/path@x",
    "/etc/passwd: No such file or directory",
    "ssh://git@github.com/x",
    "PWD=/root OLDPWD=/tmp",
    "Environment=CUDA_VISIBLE_DEVICES=0,1",
]


@pytest.mark.parametrize(("text", "expected"), MASKED)
def test_every_syntax_is_masked(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize("text", UNCHANGED)
def test_what_is_not_secret_is_left_alone(text: str) -> None:
    assert redact_text(text) == text


@given(st.text(alphabet="AB_=:/ -'\"\nexport HF_TOKEN sk- @", max_size=60))
@settings(max_examples=300, deadline=None)
def test_redacting_twice_changes_nothing_more(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once


def test_structures_mask_values_under_secret_keys_and_after_secret_flags() -> None:
    value = {
        "vars": {"HF_TOKEN": "abc", "SGLANG_DB_URL": "postgres://u:pw@db/x", "CUDA_HOME": "/x"},
        "argv": ["python", "-m", "sglang.launch_server", "--api-key", "abc", "--port", "1"],
        "password": "p",
        "packages": {"authlib": "1.3.0"},
        "key_type": "ssh-ed25519",
    }
    assert redact(value) == {
        "vars": {"HF_TOKEN": MASK, "SGLANG_DB_URL": "postgres://***@db/x", "CUDA_HOME": "/x"},
        "argv": ["python", "-m", "sglang.launch_server", "--api-key", MASK, "--port", "1"],
        "password": MASK,
        "packages": {"authlib": "1.3.0"},
        "key_type": "ssh-ed25519",
    }


# -- the probe's masking agrees ---------------------------------------------------------------

NAMES = [
    "HF_TOKEN", "hfToken", "HUGGING_FACE_HUB_TOKEN", "--api-key", "--hf-token", "--token",
    "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "DB_PASSWORD", "PGPASSWORD", "X_PASSWD",
    "DB_PASS", "GITHUB_PAT", "MYSQL_PWD", "SSH_AUTH_SOCK", "OAUTH_CLIENT", "Authorization",
    "credentials_file", "SESSION_COOKIE", "KEY", "--key", "PRIVATEKEY",
    "TOKENIZER", "TOKENIZERS_PARALLELISM", "--tokenizer-path", "--max-total-tokens",
    "VLLM_MAX_TOKENS", "key_type", "PWD", "PATH", "PAT", "PATCH", "PASSPORT", "AUTHOR",
    "monkey", "--ssl-keyfile", "SGLANG_KEYFILE", "private_key_path", "CUDA_HOME", "--", "a--b",
    # camelCase, part by part (issue 19)
    "apiKey", "awsSecretAccessKey", "accountKey", "AccountKey", "HFToken", "dbPass", "githubPat",
    "--apiKey", "S3KEY", "keyType", "maxTokens", "tokenizerName", "authorName", "compatPath",
    "publicKeyring", "Passport",
]  # fmt: skip
CAMEL_SECRET = {"apiKey", "awsSecretAccessKey", "accountKey", "AccountKey", "HFToken", "dbPass",
                "githubPat", "--apiKey", "S3KEY"}  # fmt: skip
CAMEL_DATA = {"keyType", "maxTokens", "tokenizerName", "authorName", "compatPath",
              "publicKeyring", "Passport"}  # fmt: skip


def test_camelcase_names_are_split_into_parts() -> None:
    assert {n for n in CAMEL_SECRET | CAMEL_DATA if is_secret_name(n)} == CAMEL_SECRET


def probe_functions() -> str:
    """is_secret and redact_line (and what they call) cut out of the real probe."""
    script = probe_script()
    return script[script.index("maybe_secret() {") : script.index("# ---- toolkit candidates")]


def sh_is_secret(names: list[str]) -> list[bool]:
    loop = 'while IFS= read -r n; do if is_secret "$n"; then echo 1; else echo 0; fi; done'
    out = subprocess.run(
        ["sh", "-c", probe_functions() + loop], input="\n".join(names) + "\n",
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return [flag == "1" for flag in out]


def test_the_probe_judges_names_as_the_redaction_path_does() -> None:
    assert sh_is_secret(NAMES) == [is_secret_name(n) for n in NAMES]


@given(st.lists(st.from_regex(r"-{0,2}[A-Za-z][A-Za-z0-9_-]{0,24}", fullmatch=True), max_size=40))
@settings(max_examples=25, deadline=None)
def test_the_probe_agrees_on_generated_names(names: list[str]) -> None:
    names = [n.replace("\n", "") for n in names if n.strip()] + ["API_KEY", "x_token", "Tokens"]
    assert sh_is_secret(names) == [is_secret_name(n) for n in names]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('export HF_TOKEN="a b c" X=1', 'export HF_TOKEN="***" X=1'),
        ('"DB_PASSWORD=two words" CUDA_HOME=/x', '"DB_PASSWORD=***" CUDA_HOME=/x'),
        ("API_KEY='q' Y=2", "API_KEY='***' Y=2"),
        ("export VLLM_S3_ID=AKIAABCDEFGHIJKLMNOP", "export VLLM_S3_ID=***"),
        (
            "export hfToken=plain awsSecretAccessKey=v X=1",
            "export hfToken=*** awsSecretAccessKey=*** X=1",
        ),
        ("SGLANG_URL=https://u:pw@h/x", "SGLANG_URL=https://***@h/x"),
        ("export CUDA_HOME=/usr/local/cuda-12.8", "export CUDA_HOME=/usr/local/cuda-12.8"),
        ("PATH=/home/sk-user/bin:$PATH", "PATH=/home/sk-user/bin:$PATH"),
        # bare tokens in a log line (no NAME=): before, they left the host as they were
        (
            "Using token hf_abcdefghijklmnopqrstuvwxyz0123456789 from the cache",
            "Using token *** from the cache",
        ),
        ("(hf_abcdefghijklmnopqrstuvwxyz0123456789), next", "(***), next"),
        ("key sk-proj-abcdefghijklmnopqrstuvwx1234 rejected", "key *** rejected"),
        ("aws AKIAABCDEFGHIJKLMNOP.", "aws ***."),
        ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh ***"),
        ("ngc nvapi-abcdefghijklmnopqrstuvwx_yz01", "ngc ***"),
        ("slack xoxb-1234567890-abcdefghij ok", "slack *** ok"),
        ("Authorization: Bearer abcdefgh.ijklmnop.qrst", "Authorization: Bearer ***"),
        (
            "curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' x",
            "curl -H 'Authorization: Basic ***' x",
        ),
        ("hf_short and /home/sk-user/bin stay", "hf_short and /home/sk-user/bin stay"),
        (
            "a sk-learn-0.24 wheel, xhf_abcdefghijklmnopqrstuvwxyz012",
            "a sk-learn-0.24 wheel, xhf_abcdefghijklmnopqrstuvwxyz012",
        ),
    ],
)
def test_the_probe_masks_profile_and_unit_lines_with_quoting_kept(line: str, expected: str) -> None:
    loop = 'IFS= read -r l; redact_line "$l"; printf "%s\\n" "$_rl"'
    out = subprocess.run(
        ["sh", "-c", probe_functions() + loop], input=line + "\n",
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert out == expected + "\n"
    assert redact_text(line) == redact_text(out.rstrip("\n"))  # the client agrees


@pytest.mark.parametrize("source", sorted(RULE_NEEDS), ids=lambda s: s[:24])
def test_each_rule_skipped_without_its_literal_needs_it_in_every_match(source: str) -> None:
    """A rule runs only on text holding one of its RULE_NEEDS literals, and one of
    RULE_STARTS only where one stands: every text the pattern matches holds one (begins with
    one), so no secret is left for want of a pass (samples drawn from the pattern itself)."""
    (pattern,) = [p for p, _ in TEXT_RULES if p.pattern == source]
    needs = RULE_NEEDS[source]

    @settings(max_examples=40, database=None, derandomize=True)
    @given(st.from_regex(pattern, fullmatch=True))
    def check(value: str) -> None:
        assert any(n in value for n in needs), value
        assert source not in RULE_STARTS or value.startswith(needs), value

    check()


def test_skipping_rules_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe script (it names every token prefix) and texts holding each rule's shape,
    alone and together, redact the same with every rule run on every text."""
    shapes = ["hf_" + "a" * 24, "xhf_" + "a" * 24, "sk-" + "b" * 24, "disk-" + "b" * 24,
              "AKIA" + "C" * 16, "ASIA" + "C" * 16 + "x", "hf_a hf_" + "d" * 20, "https://u:pw@h/x",
              "eyJabcd.efgh.ijk", "xoxb-" + "1" * 12, "-----BEGIN RSA PRIVATE KEY-----\nk\n"
              "-----END RSA PRIVATE KEY-----", "Authorization: Bearer abcdefgh1"]  # fmt: skip
    texts = [probe_script(), "\n".join(shapes), *(f"a {x} b" for x in shapes), "no secrets"]
    guarded = [redact_text(t) for t in texts]
    redact_module._REMEMBERED.clear()  # the probe script's redaction is kept
    every_rule = tuple((p, r, None, False) for p, r in TEXT_RULES)
    monkeypatch.setattr(redact_module, "_RULES", every_rule)
    assert [redact_text(t) for t in texts] == guarded


_FRAGMENTS = ["hf_", "sk-", "AKIA", "ASIA", "AIza", "xoxb-", "ghp_", "glpat-", "nvapi-", "eyJ",
              "-----BEGIN ", "://", "a", "Z9", "_", "-", ".", " ", "\n", "x" * 20, "A" * 16,
              "é"]  # fmt: skip


@settings(max_examples=200, database=None, derandomize=True)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=30).map("".join))
def test_rules_tried_where_their_literal_stands_mask_as_a_full_pass(text: str) -> None:
    """``_sub_where`` against ``pattern.sub`` on texts built from the literals and what
    surrounds them (boundaries, overlaps, several matches on a line)."""
    for pattern, replacement, needs, starts in redact_module._RULES:
        if starts:
            expected = pattern.sub(replacement, text)
            assert redact_module._sub_where(pattern, replacement, text, needs) == expected
