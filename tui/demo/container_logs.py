"""A fake host's ``usr/bin/docker`` (``podman``, ``crictl``): ``logs --tail N ID`` prints the
tail of the container's log, kept as a text file in the tree (``LOG_DIR/<id>``, written from
``FakeHostSpec.files``), as the engine prints a container's stdout and stderr; a container
without one has printed nothing. ``ps --no-trunc --format '{{.ID}} {{.Names}}'`` prints
``NAMES_PATH`` ("ID NAME" lines, as docker does), and without that file is refused as a daemon
the user may not reach."""

from __future__ import annotations

LOG_DIR = "/var/log/detective-tui-fake/containers"
ENGINE_SHIM = """#!/bin/sh
# detective-tui fake container engine: logs [--tail N] ID from the log files beside it.
root=$(cd "${0%/*}/../.." && pwd) || exit 1
if [ "$1" = ps ]; then
  [ "$*" = 'ps --no-trunc --format {{.ID}} {{.Names}}' ] || { echo "fake: ps $*" >&2; exit 1; }
  if [ -f "$root@DIR@/names" ]; then # builtins only: the stand-in starts no tool of its own
    while IFS= read -r l; do printf '%s\n' "$l"; done <"$root@DIR@/names"
    exit 0
  fi
  echo "permission denied while trying to connect to the ${0##*/} daemon socket" >&2
  exit 1
fi
[ "$1" = logs ] || { echo "fake ${0##*/}: only 'logs' and 'ps' are supported" >&2; exit 1; }
shift
n=all
while [ $# -gt 1 ]; do
  case "$1" in
    --tail) n=$2; shift ;;
    *) echo "fake ${0##*/}: unsupported argument $1" >&2; exit 1 ;;
  esac
  shift
done
case "$1" in */* | "") echo "fake ${0##*/}: logs ID" >&2; exit 1 ;; esac
f="$root@DIR@/$1"
[ -f "$f" ] || { echo "Error response from daemon: No such container: $1" >&2; exit 1; }
if [ "$n" = all ]; then cat "$f"; else tail -n "$n" "$f"; fi
""".replace("@DIR@", LOG_DIR)


NAMES_PATH = f"{LOG_DIR}/names"


def log_path(container_id: str) -> str:
    """The host path of a container's log file (a key for ``FakeHostSpec.files``)."""
    return f"{LOG_DIR}/{container_id}"
