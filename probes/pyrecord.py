"""detective-tui: the records the probe's Python side writes (probes/README.md) and the helpers
every part of it shares: escaping at the source (as probe.sh's ``esc``), host paths under the
root prefix DT_ROOT, distribution names normalised, files read a bounded number of lines.
"""

import os
import sys

SENTINEL = "@@DT1"
ROOT = os.environ.get("DT_ROOT", "").rstrip("/")
INDEX = sys.argv[1] if len(sys.argv) > 1 else "0"
MAX_FILE_LINES = 60


def esc(value):
    """A record field as probe.sh's esc writes one: backslash ``\\\\``, tab, newline and carriage
    return ``\\011`` ``\\012`` ``\\015``, the sentinel's D ``\\104``."""
    text = str(value).replace("\\", "\\\\")
    text = text.replace("\t", "\\011").replace("\n", "\\012").replace("\r", "\\015")
    return text.replace(SENTINEL, "@@\\104T1")


def rec(*fields):
    sys.stdout.write(SENTINEL + "\t" + "\t".join(esc(f) for f in fields) + "\n")


def host(path):
    if ROOT and (path == ROOT or path.startswith(ROOT + "/")):
        return path[len(ROOT) :] or "/"
    return path


def under_root(path):
    return not ROOT or path == ROOT or path.startswith(ROOT + "/")


def norm(name):
    out = []
    prev_sep = False
    for ch in name.lower():
        if ch in "-_.":
            if not prev_sep:
                out.append("-")
            prev_sep = True
        else:
            out.append(ch)
            prev_sep = False
    return "".join(out)


def file_lines(path, limit=MAX_FILE_LINES):
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh):
            if n >= limit:
                break
            yield line.rstrip("\r\n")


def answer_views(answer, views, mark):
    """Several requests of this interpreter, run as one user (the helper's DT_VIEWS: the
    inventory's view and serving processes' import paths): one Python start. Each view is
    ``INDEX:NAME=HEX,…`` (its DT_* values hex-encoded), answered (``answer``) on the environment
    it would have had alone, then ended by the line ``mark``. The one namespace pyfacts_program
    makes holds INDEX: each view's records carry its own."""
    global INDEX
    base = dict(os.environb)
    for view in views.split(";"):
        INDEX, _, pairs = view.partition(":")
        os.environb.clear()
        os.environb.update(base)
        for pair in filter(None, pairs.split(",")):
            name, _, value = pair.partition("=")
            os.environb[name.encode()] = bytes.fromhex(value)
        site = sys.modules.get("site")
        if site is not None:  # its user base and site dir as computed for another view
            site.USER_BASE = site.USER_SITE = None
        answer()
        sys.stdout.write("\n" + mark + "\n")  # on a line of its own, also after no output
        sys.stdout.flush()
