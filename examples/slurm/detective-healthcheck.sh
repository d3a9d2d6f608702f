#!/bin/sh
# Slurm health check in the NHC style: drain this node when detective-tui finds a critical
# problem in its CUDA stack, resume it when the problem is gone, and never touch a node that
# someone (or something) else drained.
#
#   slurm.conf:  HealthCheckProgram=/opt/detective-tui/slurm/detective-healthcheck.sh
#                HealthCheckInterval=600
#                HealthCheckNodeState=ANY
#
# A drain carries Reason="detective:<finding id>: <title>"; only a node whose reason starts
# with "detective:" is resumed. A check that cannot decide (the probe did not finish, the tool
# failed) changes nothing. Settings (environment): DETECTIVE_TUI (the tool),
# DETECTIVE_TUI_TARGET (default local: this node), DETECTIVE_TUI_NODE (default hostname -s),
# DETECTIVE_TUI_DEADLINE (seconds, default 150).
PREFIX="detective:"
tool=${DETECTIVE_TUI:-/opt/detective-tui/bin/detective-tui}
target=${DETECTIVE_TUI_TARGET:-local}
node=${DETECTIVE_TUI_NODE:-$(hostname -s)}
deadline=${DETECTIVE_TUI_DEADLINE:-150}

say() { printf 'detective-healthcheck: %s\n' "$*" >&2; }

line=$(timeout -k 5 "$deadline" "$tool" check "$target" --format npd 2>/dev/null)
rc=$?
info=$(timeout 30 scontrol show node "$node" -o) || { say "scontrol show node $node failed"; exit 2; }
case "$info" in
  *" Reason=$PREFIX"*) ours=yes ;;
  *" Reason="*) ours=other ;;
  *) ours=no ;;
esac
case "$info" in
  *" State="*DRAIN*) drained=yes ;;
  *) drained=no ;;
esac

case $rc in
  0)
    if [ "$drained" = yes ] && [ "$ours" = yes ]; then
      say "resuming $node: $line"
      timeout 30 scontrol update NodeName="$node" State=RESUME
    fi
    exit 0
    ;;
  1)
    reason="$PREFIX$line"
    if [ "$ours" = other ]; then
      say "$node has another reason; not draining it for: $line"
    elif [ "$drained" = no ] || ! printf '%s' "$info" | grep -qF " Reason=$reason"; then
      say "draining $node: $reason"
      timeout 30 scontrol update NodeName="$node" State=DRAIN Reason="$reason"
    fi
    exit 0
    ;;
  *)
    say "no verdict for $node (exit $rc): ${line:-no output}; node state left as it is"
    exit 2
    ;;
esac
