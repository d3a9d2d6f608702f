"""Command palette (ctrl+p): the current screen's key bindings, then one command per host,
per finding and per proposed fix, built from the fleet state at the moment the palette opens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.core.findings import FixSuggestion

Command = tuple[str, str, Callable[[], object]]


@dataclass
class _FixEntry:
    fix: FixSuggestion
    python: str | None
    findings: list[str]  # the ids of the findings that propose it


class FleetCommands(Provider):
    def _binding_commands(self) -> Iterator[Command]:
        seen: set[str] = set()
        for active in self.screen.active_bindings.values():
            b = active.binding
            if not b.description or b.id is None or b.id in seen or not active.enabled:
                continue
            seen.add(b.id)
            key = self.app.get_key_display(b.with_key(b.key.split(",")[0]))
            run = partial(self.app.run_action, b.action, active.node)
            yield f"{b.description} ({key})", b.tooltip or b.description, run

    def _fleet_commands(self) -> Iterator[Command]:
        app = self.app
        read_only = getattr(app, "read_only", False)
        for state in app.fleet:
            name = state.name
            yield (
                f"Open host {name}",
                f"{state.host.target} · {state.status}",
                partial(app.open_host, name),
            )
            yield (
                f"Probe host {name}",
                "Run the probe and diagnosis again",
                partial(app.request_probe, (name,)),
            )
            if state.diagnosis is None:
                continue
            # one command per distinct fix (id and params), naming every finding proposing it
            fixes: dict[tuple[str, tuple[tuple[str, str], ...]], _FixEntry] = {}
            for finding in state.diagnosis.findings:
                yield (
                    f"{name}: {finding.title}",
                    f"{finding.severity} · {finding.id}",
                    partial(app.open_host, name, finding.id),
                )
                for fix in () if read_only else finding.fixes:
                    key = (fix.id, tuple(sorted(fix.params.items())))
                    entry = fixes.setdefault(key, _FixEntry(fix, finding.python, []))
                    entry.findings.append(finding.id)
            for entry in fixes.values():
                fix = entry.fix
                resolves = ", ".join(fix.resolves) or "nothing by itself"
                yield (  # the title holds the id: typing set-flashinfer-arch-list finds it
                    f"Fix {name}: {fix.id} — {fix.title}",
                    f"for {', '.join(entry.findings)} · resolves {resolves}",
                    partial(app.request_fix, name, fix.id, dict(fix.params), entry.python),
                )

    def _all(self) -> list[Command]:
        return [*self._binding_commands(), *self._fleet_commands()]

    async def discover(self) -> Hits:
        for title, help_text, callback in self._binding_commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._all():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
