"""Command palette (ctrl+p): the current screen's key bindings, then one command per host,
per finding and per proposed fix, built from the fleet state at the moment the palette opens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

Command = tuple[str, str, Callable[[], object]]


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
            for finding in state.diagnosis.findings:
                yield (
                    f"{name}: {finding.title}",
                    f"{finding.severity} · {finding.id}",
                    partial(app.open_host, name, finding.id),
                )
                if read_only:
                    continue
                for fix in finding.fixes:
                    resolves = ", ".join(fix.resolves) or "nothing by itself"
                    yield (
                        f"Fix {name}: {fix.title}",
                        f"{fix.id} for {finding.id} · resolves {resolves}",
                        partial(app.request_fix, name, fix.id, dict(fix.params), finding.python),
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
