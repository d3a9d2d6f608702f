"""Headless sub-commands. Each module exposes ``register(subparsers)``; the parser it adds
sets ``func`` to a callable taking the parsed ``argparse.Namespace`` and returning an exit code.

``COMMANDS`` names each command's module and one-line help: ``tui.cli`` lists every command from
it and imports only the module of the command being run, so ``--help`` and light commands never
load the SSH, rule and UI libraries the others need. A module of ``COMMAND_MODULES`` that has no
entry there is imported up front (still correct, just not lazy).
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
    "export",
    "check",
    "explain",
    "findings",
    "history",
    "diff",
    "drift",
)
COMMANDS = {  # command → (its module, its one-line help)
    "probe": ("probe", "collect facts from hosts (no diagnosis)"),
    "diagnose": ("diagnose", "probe hosts and explain CUDA / torch / nvcc / FlashInfer mismatches"),
    "fix": ("fix", "preview, confirm and apply a fix (or undo one)"),
    "validate": ("validate", "validate FlashInfer's sampling kernels on a host's GPU"),
    "transcript": ("transcript", "list, show or export session transcripts"),
    "trust": ("trust", "show a host's key fingerprint and add it to known_hosts"),
    "probe-script": (
        "probe_script",
        "print the probe as a standalone sh script for Ansible, clush, srun, kubectl",
    ),
    "ingest": (
        "ingest",
        "diagnose from probe output captured by Ansible, clush, srun, kubectl, pdsh",
    ),
    "explain": (
        "explain",
        "trace an error text (pasted, or a unit's or container's log) to its cause",
    ),
    "import": (
        "importer",
        "write hosts.yaml entries from an Ansible inventory, Slurm nodes or an MPI hostfile",
    ),
    "export": ("export", "write the hosts' verdicts as Prometheus gauges (textfile collector)"),
    "check": ("check", "one status line and exit code for node-problem-detector or Nagios"),
    "findings": ("findings", "list the findings detective-tui knows, or explain one"),
    "history": ("history", "a host's earlier probes: time, verdict, stack, what changed"),
    "diff": ("diff", "what changed: two probes of one host, or two hosts, and the likely cause"),
    "drift": ("drift", "the fleet grouped by stack, each broken group against the nearest healthy"),
}


def command_help(command: str) -> str:
    """The one-line help of ``command`` (for its module's ``add_parser``)."""
    return COMMANDS[command][1]
