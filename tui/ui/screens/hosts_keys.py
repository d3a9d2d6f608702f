"""The hosts screen's keys: every action a ``Binding(id=…)``, listed in the footer, the help and
the command palette from here."""

from __future__ import annotations

from textual.binding import Binding, BindingType

# what writes on hosts: --read-only hides it (the binding ids, for the help screen)
READ_ONLY_BINDINGS = frozenset(
    {"hosts.fleet_fix", "hosts.fix_host", "hosts.pending", "hosts.undo", "hosts.shell"}
)


HOSTS_BINDINGS: list[BindingType] = [
    Binding(
        "slash",
        "filter",
        "Filter",
        id="hosts.filter",
        tooltip="Filter by name, tag, finding, GPU, version",
    ),
    Binding(
        "p",
        "probe_selected",
        "Probe",
        id="hosts.probe",
        tooltip="Probe the selected host (in the groups view: every host of the group)",
    ),
    Binding("P", "probe_all", "Probe all", id="hosts.probe_all", tooltip="Probe every host"),
    Binding(
        "g",
        "toggle_groups",
        "Groups",
        id="hosts.group",
        tooltip="Show the fleet in groups (by finding; b changes what by) or as the table again",
    ),
    Binding(
        "b",
        "group_by",
        "Group by",
        id="hosts.group_by",
        show=False,  # the groups view's header names it: "by GPU model (b)"
        tooltip="Group by the next of: finding, GPU model, driver, tag (the groups view opens)",
    ),
    Binding(
        "C",
        "choose_columns",
        "Columns",
        id="hosts.columns",
        show=False,
        tooltip="Choose the hosts table's columns and their order (saved in config.yaml)",
    ),
    Binding(
        "f",
        "fleet_fix",
        "Fix group",
        id="hosts.fleet_fix",
        tooltip="Fix every host in the selected group: one fix, preview, confirm, results",
    ),
    Binding(  # f on a host row (the table view, nothing marked): kept out of the footer
        "f",
        "fix_host",
        "Fix host",
        id="hosts.fix_host",
        show=False,
        tooltip="The fix wizard for the fix the host's top finding proposes",
    ),
    Binding(
        "R",
        "pending",
        "Pending",
        id="hosts.pending",
        tooltip="Act on the selected host's pending work: restart what a fix left "
        "pending, or undo a fix that never finished (preview first)",
    ),
    Binding(
        "space",
        "toggle_mark",
        "Mark",
        id="hosts.mark",
        tooltip="Mark or unmark the host (a group: all its hosts); p, f, u and ctrl+s "
        "then act on the marked hosts",
    ),
    Binding(
        "M",
        "clear_marks",
        "Clear marks",
        id="hosts.clear_marks",
        show=False,
        tooltip="Unmark every host",
    ),
    Binding(
        "u",
        "undo",
        "Undo",
        id="hosts.undo",
        show=False,
        tooltip="Undo the newest fix still in place on the marked hosts (or the selected "
        "one): per-host preview, then a",
    ),
    Binding("s", "sort_next", "Sort", id="hosts.sort", tooltip="Sort by the next column"),
    Binding(
        "y",
        "copy",
        "Copy",
        id="hosts.copy",
        show=False,
        tooltip="Copy the selected host's report (the marked hosts' with marks), Markdown",
    ),
    Binding(
        "S",
        "shell",
        "Shell",
        id="hosts.shell",
        show=False,
        tooltip="Open an SSH session to the selected host; the TUI comes back when it ends",
    ),
    Binding(
        "d",
        "toggle_detail",
        "Details",
        id="hosts.detail",
        show=False,
        tooltip="Show or hide the detail pane (the selected host's CUDAs and top finding)",
    ),
    Binding(
        "r",
        "sort_reverse",
        "Reverse",
        id="hosts.reverse",
        show=False,
        tooltip="Reverse the sort order",
    ),
    Binding(
        "escape",
        "clear_filter",
        "Clear filter",
        id="hosts.clear_filter",
        show=False,
        tooltip="Clear the filter and show every host",
    ),
    Binding(
        "x",
        "explain",
        "Explain",
        id="hosts.explain",
        show=False,
        tooltip="Paste an error and see it explained for the selected host",
    ),
    Binding(
        "c",
        "compare",
        "Compare",
        id="hosts.compare",
        show=False,
        tooltip="Compare the two marked hosts' last probes (what differs, findings)",
    ),
]
