"""The credential shapes issue 19 found unmasked, through the one redaction path: an NGC key
under any name, an Azure connection string's AccountKey, a camelCase key of JSON inside an
argv value, the value after ``-k``, camelCase secret names — in text, mappings and argv lists."""

from __future__ import annotations

import pytest

from tui.core.redact import redact, redact_text

NGC = "nvapi-" + "Zx8_" * 12


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"VLLM_NGC_KEY_FILE_OR_VALUE={NGC}", "VLLM_NGC_KEY_FILE_OR_VALUE=***"),
        (f"export SGLANG_MODEL_TOKEN_X={NGC} X=1", "export SGLANG_MODEL_TOKEN_X=*** X=1"),
        (f"SGLANG_REMOTE={NGC}", "SGLANG_REMOTE=***"),
        (f"curl -H 'x: {NGC}' https://h", "curl -H 'x: ***' https://h"),
        (
            "AZURE=DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=q+/w==;"
            "EndpointSuffix=core.windows.net",
            "AZURE=DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=***;"
            "EndpointSuffix=core.windows.net",
        ),
        (
            "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=r;SharedAccessKey=abc=",
            "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=r;SharedAccessKey=***",
        ),
        (
            '--s3-config {"accessKey": "plain-value", "secret_key": "v2", "region": "eu"}',
            '--s3-config {"accessKey": "***", "secret_key": "***", "region": "eu"}',
        ),
    ],
)
def test_the_shapes_are_masked_in_text(text: str, expected: str) -> None:
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("export hfToken=plain awsSecretAccessKey='a b' region=eu",
         "export hfToken=*** awsSecretAccessKey='***' region=eu"),
        ("serve --apiKey plain --maxTokens 8", "serve --apiKey *** --maxTokens 8"),
        ('{"awsSecretAccessKey": "plain", "modelName": "m"}',
         '{"awsSecretAccessKey": "***", "modelName": "m"}'),
    ],
)  # fmt: skip
def test_camelcase_names_are_masked_in_text(text: str, expected: str) -> None:
    assert redact_text(text) == expected


def test_camelcase_mapping_keys_are_masked_and_data_keys_stay() -> None:
    value = {"hfToken": "plain", "awsSecretAccessKey": "v", "keyType": "rsa", "author": "a"}
    assert redact(value) == {"hfToken": "***", "awsSecretAccessKey": "***", "keyType": "rsa",
                             "author": "a"}  # fmt: skip


def test_the_shapes_are_masked_in_argv_lists() -> None:
    argv = [
        "/venv/bin/python3",
        "-m",
        "sglang.launch_server",
        "--model-loader-extra-config",
        '{"accessKey": "plain-value", "bucket": "models"}',
        "-k",
        "plain-key-value",
        "--api-base",
        NGC,
    ]
    assert redact({"argv": argv})["argv"] == [
        "/venv/bin/python3",
        "-m",
        "sglang.launch_server",
        "--model-loader-extra-config",
        '{"accessKey": "***", "bucket": "models"}',
        "-k",
        "***",
        "--api-base",
        "***",
    ]


@pytest.mark.parametrize(
    "argv",
    [
        ["curl", "-k", "https://h/x"],  # -k without a value: the URL stays
        ["tool", "-k", "/etc/key/path"],
        ["tool", "-k", "--verbose"],
    ],
)
def test_what_follows_k_stays_when_it_is_no_key(argv: list[str]) -> None:
    assert redact(argv) == argv
