"""The Prometheus text exposition of host verdicts, for node_exporter's textfile collector
(CONTRACT.md, ``export prometheus``).

Series (all gauges):
- ``detective_tui_host_up{host}``: 1 the host was reached and read, 0 it was not;
- ``detective_tui_probe_complete{host}``: 1 the probe saw everything it looks at, 0 it did
  not (a timed-out step, a cut output): such a host is never healthy, its findings partial;
- ``detective_tui_finding{host,finding,severity}``: 1 per finding (none for a host not read);
- ``detective_tui_stack_info{host,driver,driver_cuda,torch,torch_cuda,nvcc,jit_cuda,flashinfer}``:
  1, the versions as labels ("" when unknown), as DCGM and nvidia_gpu_exporter carry theirs;
- ``detective_tui_last_probe_timestamp_seconds{host}``: when this probe of the host ended.
Label values are escaped as the exposition format requires (backslash, double quote,
newline); they come redacted from ``tui.core.records.verdicts``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui.core.records.verdicts import STACK_KEYS, HostVerdict

PREFIX = "detective_tui_"
# name → help text, in the order the families are written
FAMILIES = (
    ("host_up", "1 when the host was reached and its facts read, 0 when it was not"),
    ("probe_complete", "1 when the probe saw everything it looks at; 0: the verdict is partial"),
    ("finding", "1 per finding detective-tui reports on the host"),
    ("stack_info", "The host's driver, torch, nvcc, JIT CUDA and FlashInfer versions"),
    ("last_probe_timestamp_seconds", "Unix time the host's last probe ended"),
)


def escape_label_value(value: str) -> str:
    """A label value as the text format writes it between double quotes."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: Iterable[tuple[str, str]]) -> str:
    return ",".join(f'{k}="{escape_label_value(v)}"' for k, v in pairs)


def _samples(name: str, verdicts: Sequence[HostVerdict]) -> list[str]:
    out: list[str] = []
    for v in verdicts:
        host = ("host", v.host)
        if name == "host_up":
            out.append(f"{{{_labels([host])}}} {int(v.up)}")
        elif name == "probe_complete":
            out.append(f"{{{_labels([host])}}} {int(v.complete)}")
        elif name == "finding":
            for f in v.findings:
                labels = _labels([host, ("finding", f.id), ("severity", f.severity)])
                out.append(f"{{{labels}}} 1")
        elif name == "stack_info" and v.stack is not None:
            out.append(f"{{{_labels([host, *((k, v.stack[k]) for k in STACK_KEYS)])}}} 1")
        elif name == "last_probe_timestamp_seconds":
            out.append(f"{{{_labels([host])}}} {v.probed_at:.3f}")
    return out


def exposition(verdicts: Sequence[HostVerdict]) -> str:
    """The text format of every series for ``verdicts`` (hosts in the order given)."""
    lines: list[str] = []
    for name, help_text in FAMILIES:
        metric = PREFIX + name
        lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} gauge"]
        lines += [metric + sample for sample in _samples(name, verdicts)]
    return "\n".join(lines) + "\n"
