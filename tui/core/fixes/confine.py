"""Paths a fix writes on a root-prefixed host resolve inside its root, or the step stops.

A ``root:`` host (a mounted image, a fake host tree) is a directory on the machine that runs
the step: a symlink in it (``etc/systemd/system -> /etc/systemd/system``, ``root -> /``) would
make a plain ``$ROOT/etc/…`` write land on that machine. ``inside_root`` is the shell word for
such a path: at run time ``dt_in_root`` resolves it component by component with the root as
``/`` — an absolute link target starts again at the root, ``..`` never climbs above it (the
step fails, naming the path) — and prints the real path under the root, which has no symlink
left in it. ``with_resolver`` puts the function's definition in front of a command that uses
it (``FixPlan.effective_command``: every step and undo as it runs).
"""

from __future__ import annotations

import shlex

RESOLVER_NAME = "dt_in_root"
# dt_in_root ROOT PATH: ROOT + PATH resolved with ROOT as /, or exit 1 saying why
RESOLVER = r"""dt_in_root() {
  dt_r=$1 dt_rest=$2 dt_done= dt_hops=0
  while [ -n "$dt_rest" ]; do
    dt_rest=${dt_rest#/}
    case $dt_rest in
      */*) dt_c=${dt_rest%%/*} dt_rest=${dt_rest#*/} ;;
      *) dt_c=$dt_rest dt_rest= ;;
    esac
    case $dt_c in
      '' | .) continue ;;
      ..)
        if [ -z "$dt_done" ]; then
          printf '%s\n' "$2 leaves $dt_r (a .. above the root); refusing to write there" >&2
          return 1
        fi
        dt_done=${dt_done%/*}
        continue ;;
    esac
    if [ -L "$dt_r$dt_done/$dt_c" ]; then
      dt_hops=$((dt_hops + 1))
      if [ "$dt_hops" -gt 40 ]; then
        printf '%s\n' "$2: too many symlinks under $dt_r; refusing to write there" >&2
        return 1
      fi
      dt_t=$(readlink "$dt_r$dt_done/$dt_c") || return 1
      case $dt_t in /*) dt_done= ;; esac
      dt_rest=$dt_t${dt_rest:+/$dt_rest}
    else
      dt_done=$dt_done/$dt_c
    fi
  done
  printf '%s\n' "$dt_r${dt_done:-/}"
}"""


def inside_root(root: str, path: str) -> str:
    """The shell word (for an assignment: ``d=WORD``) of ``path`` resolved inside ``root``."""
    if not path.startswith("/"):
        raise ValueError(f"not an absolute path: {path!r}")
    return f'"$({RESOLVER_NAME} {shlex.quote(root.rstrip("/"))} {shlex.quote(path)})"'


def with_resolver(command: str) -> str:
    """``command`` with ``dt_in_root`` defined first when it calls it."""
    return f"{RESOLVER}\n{command}" if f"{RESOLVER_NAME} " in command else command
