"""Print where ``pip download --no-deps`` would fetch each requirement from, without fetching it.

``python pip_resolve.py [pip download options] REQUIREMENT...`` parses the options with pip's own
parser (so pip's configuration files and ``PIP_*`` variables apply), builds pip's session and
PackageFinder the way ``pip download`` does (same index, extra indexes, find-links, platform and
Python tags) and prints one JSON object: for each requirement the chosen file's URL, name and
sha256 (from the index), and the CA bundle, proxy and timeout pip would use to fetch it.
Run by ``tests/wheel_ranges.py`` with the test venv's Python.
"""

from __future__ import annotations

import json
import sys

from pip._internal.cli.cmdoptions import check_dist_restriction, make_target_python
from pip._internal.commands import create_command
from pip._vendor import certifi
from pip._vendor.packaging.requirements import Requirement


def main(argv: list[str]) -> int:
    cmd = create_command("download")
    options, args = cmd.parse_args(argv)
    check_dist_restriction(options)
    found = {}
    with cmd.main_context():
        session = cmd.get_default_session(options)
        finder = cmd._build_package_finder(
            options=options,
            session=session,
            target_python=make_target_python(options),
            ignore_requires_python=options.ignore_requires_python,
        )
        for text in args:
            req = Requirement(text)
            best = finder.find_best_candidate(req.name, req.specifier).best_candidate
            if best is None:
                print(f"pip_resolve: no file on the index fits {text!r} {argv}", file=sys.stderr)
                return 1
            link = best.link
            found[text] = {
                "url": link.url_without_fragment,
                "filename": link.filename,
                "sha256": link.hash if link.hash_name == "sha256" else None,
            }
    # pip's session verifies with options.cert, else its bundled certifi
    json.dump(
        {
            "wheels": found,
            "cafile": options.cert or certifi.where(),
            "proxy": options.proxy or None,
            "timeout": options.timeout,
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
