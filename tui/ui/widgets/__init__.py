"""Widgets of the host and hosts screens; each takes its data as attributes."""
