#!/bin/sh
# node-problem-detector custom plugin: is this node's CUDA stack (driver, torch, nvcc,
# FlashInfer) consistent? Prints one line (<= 80 bytes) and exits 0 OK, 1 a critical finding
# (the line starts with its id: "flashinfer-arch-rejected: ..."), 2 unknown (not probed fully).
#
# NPD runs in a pod; the probe must see the node, not the pod, so with hostPID and privileged
# (examples/npd/daemonset.yaml) it enters PID 1's namespaces first. Outside a pod (NPD run as
# a systemd service on the node) it runs the tool directly.
# $1: the TARGET (default local: this node). DETECTIVE_TUI: the tool's path on the node.
tool=${DETECTIVE_TUI:-/opt/detective-tui/bin/detective-tui}
target=${1:-local}
if [ -r /proc/1/ns/mnt ] && [ "$(readlink /proc/1/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ]; then
  exec nsenter --target 1 --mount --uts --ipc --net --pid -- "$tool" check "$target" --format npd
fi
exec "$tool" check "$target" --format npd
