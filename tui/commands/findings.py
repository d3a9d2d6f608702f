"""``detective-tui findings [ID] [--json | --markdown]``: the finding registry for users.

Without ID every finding (id, severities, title); with ID that finding's documentation.
``--json`` is the list of CONTRACT.md (``[{"id", "title", "severities", "reads", "fixes",
"examples"}]``, one element with ID); ``--markdown`` is docs/findings.md (one section with ID).
Exit 0, or 3 for an unknown ID.
"""

from __future__ import annotations

import argparse

from tui.commands import command_help
from tui.commands.output import warn, write_json, write_markdown, write_text
from tui.core import exitcodes
from tui.core.findings.markdown import findings_markdown, section
from tui.core.findings.registry import BY_ID, FINDINGS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "findings",
        help=command_help("findings"),
        description="List the findings detective-tui knows, or explain one (its documentation).",
    )
    p.add_argument("finding_id", nargs="?", metavar="ID", help="one finding id")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the registry as JSON")
    form.add_argument("--markdown", action="store_true", help="docs/findings.md")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    records = FINDINGS
    if args.finding_id is not None:
        record = BY_ID.get(args.finding_id)
        if record is None:
            warn(
                f"detective-tui findings: unknown finding {args.finding_id!r}; "
                f"known findings: {', '.join(BY_ID)}"
            )
            return exitcodes.USAGE
        records = (record,)
    if args.json:
        write_json([r.to_json() for r in records])
    elif args.markdown:
        write_text(findings_markdown() if len(records) > 1 else section(records[0]))
    elif len(records) == 1:
        write_markdown(section(records[0]))
    else:
        width = max(len(r.id) for r in records)
        write_text(
            "".join(f"{r.id:<{width}}  {'/'.join(r.severities):<22}  {r.title}\n" for r in records)
        )
    return exitcodes.OK
