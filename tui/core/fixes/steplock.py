"""One step at a time per host tree: the lock every fix step and undo step takes on the host.

A step outlives its client (``kill -9`` of detective-tui, a dropped SSH session): its shell goes
on, under its own deadline, and may still write. An undo started meanwhile must not look at the
host before that step has ended, or the step's late write survives the undo (and ``--history``
would say there is nothing left to undo). So every step's shell first takes
``${TMPDIR:-/tmp}/detective-tui-<uid>-<key>.lock`` — a directory (``mkdir`` is atomic in POSIX
sh) holding the shell's pid, removed when the shell exits — and waits, saying so once, while
a live process holds it; a lock whose pid is gone (a shell killed with SIGKILL) is taken over.
``<key>`` names the host's root prefix, so fixes of different trees on one machine (the demo
fleet) do not wait for each other. The wait is bounded by the step's own deadline. The executor
wraps every step and undo step in it when it runs them (``with_step_lock``); previews and the
journal show the step itself, as they leave out the transport's ``timeout`` wrapper.
"""

from __future__ import annotations

import hashlib

from tui.core.hosts import Host

LOCK_TEMPLATE = r"""dt_lock=${TMPDIR:-/tmp}/detective-tui-$(id -u)-@KEY@.lock
dt_waited=
while ! mkdir "$dt_lock" 2>/dev/null; do
  dt_pid=$(cat "$dt_lock/pid" 2>/dev/null || :)
  if [ -n "$dt_pid" ] && ! kill -0 "$dt_pid" 2>/dev/null; then
    rm -rf "$dt_lock"
    continue
  fi
  if [ -z "$dt_waited" ]; then
    echo "waiting: a step of an earlier detective-tui run still runs here${dt_pid:+ (pid $dt_pid)}"
    dt_waited=1
  fi
  sleep 1
done
echo $$ > "$dt_lock/pid"
trap 'rm -rf "$dt_lock"' EXIT
trap 'exit 129' HUP
trap 'exit 143' TERM"""


def lock_key(host: Host) -> str:
    """Which tree of the machine the lock is for (its root prefix, or ``/``)."""
    return hashlib.sha256((host.root or "/").encode()).hexdigest()[:12]


def step_lock(host: Host) -> str:
    """The shell lines that take the host tree's step lock (held until the shell exits)."""
    return LOCK_TEMPLATE.replace("@KEY@", lock_key(host))


def with_step_lock(host: Host, command: str) -> str:
    """A step's command (as previewed: ``FixPlan.effective_command``) run under the lock. The
    lock is the login's shell around it, as the transport's deadline is: a ``sudo -n sh -c``
    step holds it from outside, so root and non-root steps of one tree share it."""
    return f"{step_lock(host)}\n{command}"
