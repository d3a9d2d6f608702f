"""Probe scheduling: at most ``concurrency`` probes at a time, their streamed progress
buffered and applied to ``DetectiveApp.fleet`` every ``FLUSH_INTERVAL_S``.

Message handlers here follow Textual's naming convention (``_on_<message>``), not ``@on``: only
classes built by Textual's metaclass collect ``@on`` handlers, and this mixin is a plain class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tui.core.hosts import Host
from tui.ui.control.hostkeys import KEY_REFUSALS
from tui.ui.fleet_state import queued
from tui.ui.messages import ProbeActivity, ProbeFinished, ProbeRequested

FLUSH_INTERVAL_S = 0.25  # how often streamed probe progress reaches the screens

# ProbeResult.error_kind values, which are also HostState statuses
ERROR_KINDS = frozenset(
    {
        "unreachable",
        "hostkey-unknown",
        "hostkey-changed",
        "hostkey-revoked",
        "timeout",
        "bad-inventory",
    }
)


class ProbeControl:
    """``DetectiveApp``'s probing (its ``_hosts``, ``_output``, ``_pending``, ``_finished``,
    ``_slots`` and ``fleet``)."""

    def probe_output(self, name: str) -> list[str]:
        """The raw probe output lines of a host so far (the host screen's log reads this)."""
        return self._output.get(name, [])

    def request_probe(self, names: Sequence[str]) -> None:
        if self._quitting:
            return
        names = tuple(names) or self.fleet.order
        starting = [self.fleet[n] for n in names if n in self._hosts and not self.fleet[n].busy]
        if not starting:
            return
        self.fleet = self.fleet.updated(*(queued(s) for s in starting))
        for state in starting:
            self._output[state.name] = []
            self.run_worker(
                self._probe(state.host),
                name=f"probe {state.name}",
                group="probe",
                exit_on_error=False,
            )

    def _on_probe_requested(self, message: ProbeRequested) -> None:
        self.request_probe(message.names)

    def _buffer(self, name: str, **changes: Any) -> None:
        base = self._pending.get(name) or self.fleet[name]
        self._pending[name] = replace(base, **changes)
        if not self._flush_scheduled:
            self.post_message(ProbeActivity())

    def _on_progress(self, name: str, item: object) -> None:
        if isinstance(item, str):
            self._output[name].append(item.rstrip("\n"))
            self._buffer(name, status="probing", lines=len(self._output[name]))
        else:
            self._buffer(
                name,
                status="probing",
                step=getattr(item, "step", ""),
                done=getattr(item, "done", 0),
                total=getattr(item, "total", None),
            )

    async def _probe(self, host: Host) -> None:
        async with self._slots:
            self._buffer(host.name, status="connecting")
            result = await self.session.probe(host, self._on_progress)
        from tui.core.run.service import judge

        judged = await judge(self.session, result)
        self.post_message(ProbeFinished(result, judged.diagnosis))
        for note in judged.notes:  # a full disk: one warning, not one per host
            why = note.split(": ", 1)[-1]
            if why not in self._notes_said:
                self._notes_said.add(why)
                self.notify(note, severity="warning", timeout=10)

    def _on_probe_activity(self) -> None:
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        """Apply buffered progress and results at most every ``FLUSH_INTERVAL_S``: a fleet
        streaming output repaints its table a few times a second, not once per line or host."""
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.set_timer(FLUSH_INTERVAL_S, self._apply_activity)

    def _apply_activity(self) -> None:
        self._flush_scheduled = False
        pending, self._pending = self._pending, {}
        finished, self._finished = self._finished, {}
        live = [s for s in pending.values() if s.name not in finished and self.fleet[s.name].busy]
        if live or finished:
            self.fleet = self.fleet.updated(*live, *finished.values())
        for state in finished.values():
            if state.status in KEY_REFUSALS:
                self._key_prompts.append(state)
        self._next_key_prompt()

    def _on_probe_finished(self, message: ProbeFinished) -> None:
        result = message.result
        name = result.host.name
        if result.raw_lines:
            self._output[name] = list(result.raw_lines)
        status = (
            (result.error_kind if result.error_kind in ERROR_KINDS else "probe-failed")
            if result.error
            else "done"
        )
        state = replace(
            self.fleet[name],
            status=status,
            result=result,
            diagnosis=message.diagnosis,
            finished_at=self.clock(),
            lines=len(self._output[name]),
        )
        self._finished[name] = state  # shown with the next flush, like the progress
        self._schedule_flush()
