"""stdout, stderr messages and result files of every headless command: the one way results
leave it.

Everything goes through ``tui.core.redact.redact``: JSON values (``write_json``), text
(``write_text``, ``write_file``, ``say``, ``warn``); Rich renderables are built from redacted
values by the callers and printed on ``console()``. A reader that goes away (``… | head``) raises
``BrokenPipeError`` from every one of them — Rich's own Console would exit 1 instead — so
``tui.cli`` exits 141 for every command.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.core.durable import write_bytes
from tui.core.redact import redact, redact_text

if TYPE_CHECKING:  # Rich loads for the commands that draw with it, not for JSON and text
    from rich.console import Console


def write_json(value: Any) -> None:
    """``value`` as indented JSON on stdout, redacted."""
    json.dump(redact(value), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def write_text(text: str) -> None:
    """Text (a report, a table) on stdout as it is, redacted."""
    sys.stdout.write(redact_text(text))


def write_file(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Text into ``path``, redacted, replacing it atomically (temp file in the same directory,
    fsync, rename): a reader sees the old file or the new one, never half of one.
    ``DurableWriteError`` names the file and the reason (a missing directory, a full disk)."""
    write_bytes(path, redact_text(text).encode(), mode=mode, make_parents=False)


def write_markdown(text: str) -> None:
    """A Markdown report on stdout, redacted: rendered on a terminal (a heading, not "### …";
    the tables drawn), as it is when piped or redirected (a file keeps its Markdown)."""
    if not sys.stdout.isatty():
        write_text(text)
        return
    from rich.markdown import Markdown

    console(soft_wrap=False).print(Markdown(redact_text(text)))


def say(text: str = "") -> None:
    """One line on stdout, redacted, flushed (progress a person watches)."""
    sys.stdout.write(redact_text(text) + "\n")
    sys.stdout.flush()


def warn(text: str) -> None:
    """One line on stderr, redacted."""
    print(redact_text(text), file=sys.stderr, flush=True)


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:  # Rich would raise SystemExit(1)
            raise BrokenPipeError

    return _Console


def console(**kwargs: Any) -> Console:
    """A Rich console on stdout whose broken pipe is a ``BrokenPipeError``."""
    return _console_class()(**kwargs)


def progress_line(console: Console | None, line: str) -> None:
    """One line of a command's progress on stderr: on ``console`` (``stderr_console``'s, or a
    live display's) as plain text, or without a console as a plain line (``warn``)."""
    if console is None:
        warn(line)
    else:
        console.print(line, highlight=False, markup=False)


def stderr_console() -> Console | None:
    """A Rich console for progress on stderr when it may be a terminal (or Rich is told it
    is: ``TTY_COMPATIBLE``, ``FORCE_COLOR``); None for a pipe or a file, whose plain lines
    (``warn``) need no Rich."""
    if not sys.stderr.isatty() and not {"TTY_COMPATIBLE", "FORCE_COLOR"} & os.environ.keys():
        return None
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)
