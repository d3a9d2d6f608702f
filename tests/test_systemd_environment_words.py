"""``Environment=`` words: what a fix writes into a drop-in is read back by systemd's rules as
exactly the assignment it meant, whatever the value holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tui.core.fixes.shell import systemd_quote
from tui.core.fixes.unitenv import parse_environment
from tui.core.systemd_syntax import split_environment

VALUES = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)))


@given(VALUES)
def test_a_quoted_assignment_reads_back_exactly(value: str) -> None:
    word = systemd_quote(f"CUDA_HOME={value}")
    assert "\n" not in word and "\r" not in word  # one line in the unit file, always
    assert split_environment(word) == ([f"CUDA_HOME={value}"], None)
    assert parse_environment([f"[Service]\nEnvironment={word}\n"]) == {"CUDA_HOME": value}


def test_systemd_rules_for_environment_values() -> None:
    cases = {
        'A=1 "B=two words"': ["A=1", "B=two words"],
        "'C=single quoted' D=x\\ty": ["C=single quoted", "D=x\ty"],
        'E="%%d and $HOME"': ["E=%d and $HOME"],  # $ is not expanded in Environment=
        "F=a;b ;": ["F=a;b", ";"],  # ; is a plain character here, unlike ExecStart=
        'G="\\x41\\u00e9\\n" "H=a\\\\b"': ["G=Aé\n", "H=a\\b"],
    }
    for value, words in cases.items():
        assert split_environment(value) == (words, None), value


def test_an_unknown_escape_or_open_quote_ends_the_line_keeping_what_came_before() -> None:
    # config_parse_environ uses the strict extract_first_word: "Invalid syntax, ignoring"
    assert split_environment("A=1 B=\\d C=3") == (["A=1"], "unknown escape '\\\\d'")
    assert split_environment('A=1 "B=open') == (["A=1"], "a quote is not closed")
    assert split_environment("A=1 B=2\\")[0] == ["A=1"]


def test_an_unparsable_line_is_ignored_as_systemd_does() -> None:
    texts = ['[Service]\nEnvironment=A=1\nEnvironment=X=0 "B=unclosed\nEnvironment=C=3\n']
    assert parse_environment(texts) == {"A": "1", "X": "0", "C": "3"}
