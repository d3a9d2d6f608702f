"""Judging a host: the diagnosis (rules + what-if fixes), the what-if planner, the host's stack and
the explanation of a symptom."""
