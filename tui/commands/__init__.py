"""Headless sub-commands. Each module exposes ``register(subparsers)``; the parser it adds
sets ``func`` to a callable taking the parsed ``argparse.Namespace`` and returning an exit code.
"""

COMMAND_MODULES = (
    "probe",
    "diagnose",
    "fix",
    "validate",
    "transcript",
    "trust",
    "probe_script",
    "ingest",
    "importer",
)
