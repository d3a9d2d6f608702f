"""A corpus of secret shapes planted on hosts (issue 9 (e)): values under secret names, URL
credentials, bearer tokens and JWTs, ``hf_``/``sk-``/``AKIA`` tokens under harmless names, and
``--api-key``/``--token`` flags, written into a serving process's argv and environment, a
systemd unit (``Environment=`` in systemd's syntax), its ``EnvironmentFile``, and login
profiles. ``leaks(text)`` names every planted value found in ``text``: tests push the hosts
through every output and require none.

Each value carries ``zq81``/``ZQ81`` so a leak is found even when only part of it survives."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path

from tui.demo import fakehost
from tui.demo.fakehost import FakeHost

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzcTgxIjoxfQ.zq81jwtsignature"

# a serving process's environment: secret names, and secret shapes under harmless names
PROCESS_ENV: Mapping[str, str] = {
    "HF_TOKEN": "hf_zq81EnvTokenValue0000000000",
    "SGLANG_API_KEY": "zq81-api-key-env",
    "DB_PASSWORD": "zq81-env-password",
    "SGLANG_DB_URL": "postgres://dbuser:zq81dbpw@db.internal/x",
    "VLLM_REMOTE_URL": "https://ZQ81KEYID:ZQ81SECRET@storage.internal/p",
    "VLLM_EXTRA_HEADER": "Authorization: Bearer zq81bearer0123456789",
    "SGLANG_SESSION": JWT,
    "SGLANG_MODEL_REPO": "hf_zq81RepoTokenValue00000000",
    "VLLM_FALLBACK": "sk-proj-zq81fallbackvalue000000",
    "VLLM_S3_ID": "AKIAZQ81ABCDEFGHIJKL",
    "SGLANG_EXTRA_ARGS": "--port 1 --api-key zq81-args-in-a-value --hf-token=zq81-args-eq",
}

# its arguments: values after secret flags, --flag=value, a token-shaped positional value
ARGV_TAIL: tuple[str, ...] = (
    "--api-key",
    "zq81-flag-api-key",
    "--token",
    "zq81-flag-token",
    "--hf-token=zq81-flag-eq",
    "--served-model-name",
    "sk-zq81positional000000000000",
    "--model-url",
    "https://argvuser:zq81argvurlpw@models.internal/m",
    '--engine-config={"api_key": "zq81-json-in-argv", "tp": 2}',
)

# a systemd unit's Environment= lines, in systemd's syntax
UNIT_ENVIRONMENT = (
    'Environment=HF_TOKEN=zq81-unit-token "DB_PASSWORD=zq81 unit-words" CUDA_DEVICE_ORDER=PCI\n'
    'Environment="SGLANG_DB_URL=postgres://u:zq81unitdbpw@db/x"\n'
)

# an EnvironmentFile= file of that unit
ENV_FILE = (
    "export OPENAI_API_KEY=zq81-envfile-key\n"
    'B_SECRET="zq81 envfile-words"\n'
    "VLLM_ENDPOINT=https://ZQ81EFKEY:ZQ81EFSECRET@h.internal/x\n"
)

# login profiles (sh syntax; the probe reads these under a root prefix, or a login shell runs them)
PROFILE = (
    "export GH_TOKEN=zq81-profile-token\n"
    "export SGLANG_URL=https://u:zq81profilepw@h.internal\n"
    f"export VLLM_SESSION={JWT}\n"
    "export VLLM_S3_ID=AKIAZQ81PROFILEKEY00\n"
)

UNIT = "sglang.service"


def corpus_host(dest: Path) -> FakeHost:
    """The reference host (tui.demo.fakehost) with the corpus planted: its serving process's
    argv and environment, its unit's Environment= lines and EnvironmentFile, login profiles."""
    spec = fakehost.reference_ct200(with_cuda13=True)
    server = spec.processes[0]
    server = dataclasses.replace(
        server, argv=(*server.argv, *ARGV_TAIL), environ={**server.environ, **PROCESS_ENV}
    )
    files = dict(spec.files)
    unit_path = f"/etc/systemd/system/{UNIT}"
    files[unit_path] = files[unit_path].replace("[Service]\n", "[Service]\n" + UNIT_ENVIRONMENT)
    files["/etc/profile.d/corpus.sh"] = PROFILE
    files["/root/.bashrc"] = files["/root/.bashrc"] + PROFILE
    spec = dataclasses.replace(
        spec,
        processes=(server, *spec.processes[1:]),
        files=files,
        unit_env_files={UNIT: {"/etc/default/sglang": ENV_FILE}},
    )
    return fakehost.build_fake_host(dest, spec)


_MARK = re.compile(r"zq81[A-Za-z0-9_.-]*|ZQ81[A-Za-z0-9_.-]*|two-words|unit-words|envfile-words")


def leaks(text: str) -> list[str]:
    """Every fragment of a planted value in ``text`` (none: nothing leaked)."""
    return sorted(set(_MARK.findall(text)))
