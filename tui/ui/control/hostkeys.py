"""Host-key trust: a probe refused for an unknown, changed or revoked key opens that key's
dialog, one at a time; an accepted key is added to known_hosts and the host probed again.

Message handlers here follow Textual's naming convention (``_on_<message>``), not ``@on``: only
classes built by Textual's metaclass collect ``@on`` handlers, and this mixin is a plain class.
"""

from __future__ import annotations

import asyncio

from tui.core.records.decision import Decision, record_decision
from tui.ui.fleet_state import HostState
from tui.ui.screens.hostkey import HostKeyChangedScreen, HostKeyRevokedScreen, HostKeyScreen

KEY_REFUSALS = ("hostkey-unknown", "hostkey-changed", "hostkey-revoked")  # each has a dialog


class HostKeyControl:
    """``DetectiveApp``'s key dialogs (its ``_key_prompts`` and ``_prompting``)."""

    def _key_dialog_args(self, state: HostState) -> tuple[str, str, str, str, str, str]:
        """(host, known_hosts name, key type, fingerprint, known_hosts file, what known_hosts
        says about it) for a key dialog."""
        result = state.result
        key = result.hostkey if result else None
        note = result.hostkey_note if result else ""
        known_hosts = str(self.session.known_hosts)
        if key is None:
            return state.name, state.host.target, "", "", known_hosts, note
        where = key.host if key.port == 22 else f"[{key.host}]:{key.port}"
        return state.name, where, key.key_type, key.fingerprint, known_hosts, note

    def _next_key_prompt(self) -> None:
        if self._prompting or not self._key_prompts:
            return
        state = self._key_prompts.pop(0)
        self._prompting = True
        if state.status in ("hostkey-changed", "hostkey-revoked"):  # never offered for trust
            dialog = (
                HostKeyChangedScreen if state.status == "hostkey-changed" else HostKeyRevokedScreen
            )
            self.push_screen(
                dialog(*self._key_dialog_args(state)), lambda _: self._key_prompt_done()
            )
        else:
            self.push_screen(
                HostKeyScreen(*self._key_dialog_args(state)),
                lambda accepted: self._key_decided(state, bool(accepted)),
            )

    def _key_prompt_done(self) -> None:
        self._prompting = False
        self._next_key_prompt()

    def _key_decided(self, state: HostState, accepted: bool) -> None:
        _, target, key_type, fingerprint, _, _ = self._key_dialog_args(state)
        details = {"target": target, "key_type": key_type, "fingerprint": fingerprint}
        answer = "yes" if accepted else "no"
        trusted = Decision.about("trust-host-key", answer, [state.name], details=details)
        record_decision(self.session, trusted)
        if accepted:
            self.run_worker(
                self._trust(state), name=f"trust {state.name}", group="trust", exit_on_error=False
            )
        self._key_prompt_done()

    async def _trust(self, state: HostState) -> None:
        from tui.core.run.runner import add_known_host

        key = state.result.hostkey if state.result else None
        if key is None:
            raise ValueError(f"{state.name}: the probe result carries no host key to trust")
        known_hosts = self.session.known_hosts
        await asyncio.to_thread(add_known_host, state.host, key, known_hosts)
        self.notify(f"Key added to {known_hosts}; probing {state.name} again.")
        self.request_probe((state.name,))
