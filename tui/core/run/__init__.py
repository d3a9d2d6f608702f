"""Orchestration: the runner (sessions on hosts), the one probe-to-diagnosis path (``service``),
ingesting captured output, validation, pending work and applying fixes (executor, fleet)."""
