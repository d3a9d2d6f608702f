"""``LineRedactor``: a command's output redacted a line at a time while the host works is the
output redacted whole (``redact_text``), on real probe outputs and on every shape a rule may
match over several lines; the whole text's redaction afterwards is a lookup, not a second pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakehost_runs import probe_tree
from secret_corpus import ARGV_TAIL, JWT, PROCESS_ENV, corpus_host, leaks

from tui.core import redact
from tui.core.redact import LineRedactor, redact_text
from tui.demo import fakehost


def by_lines(text: str) -> tuple[str, LineRedactor]:
    lines = LineRedactor()
    for line in text.split("\n")[:-1]:
        lines.add(line)
    return lines.text(text), lines


def test_a_probe_output_redacted_by_lines_is_the_output_redacted_whole(tmp_path: Path) -> None:
    output = probe_tree(fakehost.build_fake_host(tmp_path / "ct200", fakehost.reference_ct200()))
    assert len(output) > redact.REMEMBERED_CHARS and "@@DT1\tend" in output
    done, lines = by_lines(output)
    assert not lines.whole  # no rule of this output spans lines: redacted as it came
    assert done == redact._redact_text(output)
    assert redact_text(output) is done  # remembered: the transcript's redaction is a lookup


def test_the_secret_corpus_probed_and_redacted_by_lines_leaks_nothing(tmp_path: Path) -> None:
    output = probe_tree(corpus_host(tmp_path / "corpus"))  # the host masked what it knew
    assert "SGLANG_API_KEY" in output and "***" in output
    done, _ = by_lines(output)
    assert done == redact._redact_text(output) and leaks(done) == []


# (``Authorization: Bearer`` may go on over a newline: in OVER_LINES)
SINGLE_LINE = [f"{k}={v}" for k, v in PROCESS_ENV.items() if k != "VLLM_EXTRA_HEADER"] + [
    " ".join(a for a in ARGV_TAIL if 'key"' not in a), f"token {JWT}",
    "url https://u:zq81pw@h/x", "set -x HF_TOKEN zq81fish", '{"HF_TOKEN": "zq81json"}',
    "PATH=/usr/bin\r tail",
]  # fmt: skip
# shapes a rule matches over a newline: each makes the redactor redact the whole text
OVER_LINES = [
    "-----BEGIN OPENSSH PRIVATE KEY-----\nzq81keybody\n-----END OPENSSH PRIVATE KEY-----",
    "proxy-authorization:\n  basic zq81basicvalue",
    "Bearer\nzq81bearervalue0123",
    '{"accessKey":\n  "zq81access"}',
    '"secret_key": "zq81 over\ntwo lines"',
    "env:\n- name: HF_TOKEN\n  value: zq81k8s",
    "a line ending in CR\r\nnext",
]


@pytest.mark.parametrize("shape", OVER_LINES)
def test_a_secret_over_lines_is_masked_as_in_the_whole_text(shape: str) -> None:
    filler = "\n".join(SINGLE_LINE) * 20
    text = f"{filler}\n{shape}\n{filler}\n"
    done, lines = by_lines(text)
    assert lines.whole
    assert done == redact._redact_text(text)


def test_single_line_shapes_are_redacted_as_they_come() -> None:
    text = "\n".join(SINGLE_LINE * 20) + "\n"
    done, lines = by_lines(text)
    assert not lines.whole
    assert done == redact._redact_text(text) and done.count("***") >= 20 * len(PROCESS_ENV)


def test_a_short_output_is_redacted_once_when_complete() -> None:
    text = "\n".join(SINGLE_LINE) + "\n"
    assert len(text) < redact.REMEMBERED_CHARS
    done, lines = by_lines(text)
    assert lines.done == [] and done == redact._redact_text(text)


def test_a_text_other_than_the_lines_added_is_redacted_whole() -> None:
    lines = LineRedactor()
    for line in SINGLE_LINE * 20:
        lines.add(line)
    other = "\n".join(SINGLE_LINE * 20) + "\n[detective-tui: 12 more characters not kept]\n"
    assert lines.text(other) == redact._redact_text(other)
    assert other not in redact._REMEMBERED
