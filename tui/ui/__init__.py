"""The Textual TUI. Nothing in ``tui.core`` imports from here."""
