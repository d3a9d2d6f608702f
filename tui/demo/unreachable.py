"""The demo fleet's host that never answers: a transport of its own, never a branch of the core.

``NeverAnswers`` is what ``Host.transport`` names for ``gone-dark``: every command waits
``delay_s`` (what a connection attempt costs) and then fails the way a host that cannot be
reached fails — ``Unreachable`` — so the runner, the validation, the CLI and the TUI handle it
on the same path as a real connection failure.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar, NoReturn

from tui.core.reach.sshconnect import Unreachable
from tui.core.reach.transport import Transport

NO_ANSWER = "no answer (simulated demo host)"


class NeverAnswers(Transport):
    about: ClassVar[str] = "a simulated demo host that never answers"
    delay_s: ClassVar[float] = 1.0  # tests set it lower

    async def _spawn(self, command: str) -> NoReturn:
        await asyncio.sleep(self.delay_s)
        raise Unreachable(NO_ANSWER)

    async def _run_kill(self, command: str) -> None:
        return None  # nothing ever ran
