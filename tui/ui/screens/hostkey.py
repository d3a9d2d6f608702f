"""Host key dialogs: trust an unknown key after reading its fingerprint; refuse a changed or a
revoked one (never offered for trust)."""

from __future__ import annotations

import shlex
from typing import ClassVar, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

ResultT = TypeVar("ResultT")


class _HostKeyDialog(ModalScreen[ResultT]):
    """What both dialogs show: which host, its target, and the key the server offered."""

    def __init__(
        self,
        host: str,
        target: str,
        key_type: str,
        fingerprint: str,
        known_hosts: str,
        note: str = "",
    ) -> None:
        super().__init__()
        self.host = host
        self.target = target
        self.key_type = key_type
        self.fingerprint = fingerprint
        self.known_hosts = known_hosts
        self.note = note  # what known_hosts says: the lines that decided, or a CA to trust

    def _key_lines(self) -> Content:
        return Content.assemble(
            ("Key type     ", "bold"),
            self.key_type or "unknown",
            "\n",
            ("Fingerprint  ", "bold"),
            (self.fingerprint or "unknown", "bold $accent"),
            "\n\n",
        )

    def _note(self) -> Content:
        return (
            Content.assemble("\n\n", (self.note.rstrip(), "italic")) if self.note else Content("")
        )


class HostKeyScreen(_HostKeyDialog[bool]):
    """Dismisses with True when the user accepts the key (it is then added to known_hosts)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "accept", "Trust key", id="hostkey.accept"),
        Binding("n,escape", "refuse", "Refuse", id="hostkey.refuse"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="-warning"):
            yield Static(
                Content.styled(f"Unknown host key for {self.host}", "bold"), classes="dialog-title"
            )
            yield Static(
                Content.assemble(
                    "The server at ",
                    (self.target, "bold"),
                    " presented a key that is not in your known_hosts.\n\n",
                    self._key_lines(),
                    "Compare it with the fingerprint the host's administrator gives you, "
                    "e.g. from ",
                    ("ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub", "italic"),
                    " run on the host itself. Trusting adds the key to ",
                    (self.known_hosts, "italic"),
                    ".",
                    self._note(),
                ),
                id="hostkey-body",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Trust and connect", variant="warning", id="accept")
                yield Button("Refuse", variant="primary", id="refuse")

    def on_mount(self) -> None:
        self.query_one("#refuse", Button).focus()

    @on(Button.Pressed, "#accept")
    def action_accept(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#refuse")
    def action_refuse(self) -> None:
        self.dismiss(False)


class HostKeyChangedScreen(_HostKeyDialog[None]):
    """A changed key is never offered for trust: this only explains the risk and the way out."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "close", "Close", id="hostkey.close")
    ]

    def compose(self) -> ComposeResult:
        remove = f"ssh-keygen -R {shlex.quote(self.target)} -f {shlex.quote(self.known_hosts)}"
        with Vertical(id="dialog", classes="-error"):
            yield Static(
                Content.styled(
                    f"HOST KEY CHANGED for {self.host} — connection refused", "bold $error"
                ),
                classes="dialog-title",
            )
            yield Static(
                Content.assemble(
                    "The key ",
                    (self.target, "bold"),
                    " presents is not the one recorded in known_hosts: someone may be "
                    "intercepting the connection, or the host was reinstalled. detective-tui "
                    "will not connect and will not replace the key.\n\n",
                    self._key_lines(),
                    "Only once the host's administrator confirms the new key, remove the old "
                    "entry outside this app, then probe again and compare the fingerprint:\n",
                    ("  " + remove, "bold"),
                    self._note(),
                ),
                id="hostkey-body",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Close", variant="primary", id="close")

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(None)


class HostKeyRevokedScreen(_HostKeyDialog[None]):
    """A key marked ``@revoked`` in known_hosts: refused, never offered for trust."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "close", "Close", id="hostkey.close_revoked")
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="-error"):
            yield Static(
                Content.styled(
                    f"HOST KEY REVOKED for {self.host} — connection refused", "bold $error"
                ),
                classes="dialog-title",
            )
            yield Static(
                Content.assemble(
                    "The key ",
                    (self.target, "bold"),
                    " presents is marked ",
                    ("@revoked", "bold"),
                    " in ",
                    (self.known_hosts, "italic"),
                    " (a stolen or retired key): detective-tui will not connect and will "
                    "never trust it.\n\n",
                    self._key_lines(),
                    (self.note + "\n\n", "italic") if self.note else "",
                    "Ask the host's administrator for its new host key; remove the @revoked "
                    "line only if it was written by mistake.",
                ),
                id="hostkey-body",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Close", variant="primary", id="close")

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(None)
