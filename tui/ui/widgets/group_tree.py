"""The fleet grouped by finding: one node per finding group, its hosts as leaves."""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tui.ui.grouping import FindingGroup

GROUP_STYLE = {
    "critical": "bold red",
    "warning": "bold yellow",
    "info": "cyan",
    "unreachable": "red",
    "healthy": "green",
}


class ShortTree(Tree[object]):
    """A tree whose labels end in "…" where they do not fit (the detail pane says it all).
    ``space`` marks the group's hosts as in the table (the Tree's own space folds the node;
    enter still does)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "mark", "Mark", show=False),
        Binding("j", "cursor_down", "Down", show=False),  # the vi keys, as in the table
        Binding("k", "cursor_up", "Up", show=False),
        Binding("G", "scroll_end", "Last", show=False),
        Binding("ctrl+d", "page_down", "Page down", show=False),
        Binding("ctrl+u", "page_up", "Page up", show=False),
    ]

    def action_mark(self) -> None:
        self.screen.action_toggle_mark()  # type: ignore[attr-defined]

    def render_label(self, node: TreeNode[object], base_style: Style, style: Style) -> Text:
        label = super().render_label(node, base_style, style)
        depth, parent = 0, node.parent
        while parent is not None:
            depth, parent = depth + 1, parent.parent
        room = self.scrollable_content_region.width - depth * self.guide_depth
        if room > 8 and label.cell_len > room:
            label.truncate(room, overflow="ellipsis")
        return label

    def on_resize(self) -> None:
        self._invalidate()

    def show_groups(self, groups: tuple[FindingGroup, ...]) -> None:
        """Rebuild the tree; the cursor stays on the host or group it was on."""
        was = self.cursor_node.data if self.cursor_node is not None else None
        if isinstance(was, FindingGroup):
            was = was.key
        self.clear()
        if not groups:
            self.root.add_leaf("No results yet: press P to probe every host.")
        for group in groups:
            node = self.root.add(
                Text(group.label, style=GROUP_STYLE.get(group.severity, "")),
                data=group,
                expand=True,
            )
            for name in group.hosts:
                node.add_leaf(name, data=name)
        if groups:
            self.move_cursor_to_line(self.line_of(was))

    def line_of(self, was: object) -> int:
        """Where the cursor was (a host or a group, found again after a rebuild), else the
        first group with a finding to fix, so f and p act on it at once (every group is
        expanded: a group's line is after its predecessors and their hosts)."""
        line, fixable = 0, None
        for node in self.root.children:
            group = node.data
            if isinstance(group, FindingGroup) and group.key == was:
                return line
            for i, leaf in enumerate(node.children, 1):
                if leaf.data == was:
                    return line + i
            if fixable is None and isinstance(group, FindingGroup) and group.finding_id:
                fixable = line
            line += 1 + len(node.children)
        return fixable or 0
