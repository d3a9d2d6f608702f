"""The Python programs the probe carries (``one_program``): one space a level instead of
unparse's four, the same program by its syntax tree, so the script fits one ``exec:`` argument."""

from __future__ import annotations

import ast
import itertools

import probes

NESTED = """
def f(xs):
    for x in xs:
        if x:
            try:
                yield "a\\n    b"
            except OSError:
                pass
    return {"k": [1, 2]}
"""


def _steps(program: str) -> set[int]:
    """By how many spaces the indentation grows where a block opens."""
    depth = [len(ln) - len(ln.lstrip(" ")) for ln in program.splitlines()]
    return {b - a for a, b in itertools.pairwise(depth) if b > a}


def test_a_program_is_indented_one_space_a_level_and_stays_the_same_program() -> None:
    tree = ast.parse(NESTED)
    short = probes.one_space(ast.unparse(tree), ast.dump(tree))
    assert ast.dump(ast.parse(short)) == ast.dump(tree)
    assert "\n    yield 'a\\n    b'" in short  # four levels, four spaces; the string untouched
    assert _steps(short) == {1}


def test_a_text_that_would_change_is_kept_as_it_was() -> None:
    tree = ast.parse(NESTED)
    text = ast.unparse(tree)
    assert probes.one_space(text, ast.dump(ast.parse("pass"))) == text


def test_the_carried_programs_are_one_space_indented() -> None:
    for program in (probes.helper_program(), probes.pyfacts_program()):
        ast.parse(program)
        assert _steps(program) == {1}
