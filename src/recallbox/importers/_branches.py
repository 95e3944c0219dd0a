"""Branch resolution over a ``parentUuid`` forest (Claude Code transcripts).

Claude Code links every record to its parent by uuid. Editing an earlier prompt or retrying
writes a new branch into the same file after the old one, so a file holds a forest: one tree
per root (a compaction boundary is re-attached to the record before it through
``logicalParentUuid`` by the caller, so generations stay in one tree).

Rule, per tree: the **line** is the path from the root to the tree's last conversational record
in file order (the newest branch is always written last). A conversational record off its
tree's line is superseded; a non-conversational record (a system event, an attachment) is
superseded only when it hangs off a superseded conversational record, so a side note attached
to the live line stays live. Records in a tree without any conversational record are never
superseded. Only the compact ``uuid -> parent`` map is kept, never the records themselves.
"""

from __future__ import annotations

from collections.abc import Iterable


class BranchForest:
    """A ``uuid -> parent uuid`` forest with the live line of every tree."""

    __slots__ = ("_conversational", "_line", "_parent", "_root")

    def __init__(self) -> None:
        self._parent: dict[str, str | None] = {}
        self._conversational: set[str] = set()
        self._root: dict[str, str] = {}
        self._line: set[str] | None = None

    def __contains__(self, uuid: object) -> bool:
        return uuid in self._parent

    def add(self, uuid: str, parent: str | None, *, conversational: bool) -> None:
        """Record a node; ``conversational`` for user/assistant records and compactions."""
        self._parent[uuid] = parent
        if conversational:
            self._conversational.add(uuid)
        self._line = None

    def root(self, uuid: str) -> str:
        """The root of ``uuid``'s tree (a parent missing from the file ends the walk)."""
        chain: list[str] = []
        node = uuid
        seen: set[str] = set()
        while node not in self._root:
            chain.append(node)
            seen.add(node)
            parent = self._parent.get(node)
            if parent is None or parent not in self._parent or parent in seen:
                self._root[node] = node
                break
            node = parent
        top = self._root[node]
        for member in chain:
            self._root[member] = top
        return top

    def resolve(self, conversational_in_file_order: Iterable[str]) -> None:
        """Compute the live lines from the conversational uuids of one thread, in file order."""
        last_by_root: dict[str, str] = {}
        for uuid in conversational_in_file_order:
            last_by_root[self.root(uuid)] = uuid
        line: set[str] = set()
        for leaf in last_by_root.values():
            node: str | None = leaf
            while node is not None and node in self._parent and node not in line:
                line.add(node)
                node = self._parent[node]
        self._line = line

    def on_line(self, uuid: str) -> bool:
        """Whether ``uuid`` is on the live line of its tree (call :meth:`resolve` first)."""
        return self._line is not None and uuid in self._line

    def superseded(self, uuid: str | None) -> bool:
        """Whether the record ``uuid`` lies on an abandoned branch (call :meth:`resolve` first).

        A record without a uuid, or one the forest does not know, is never superseded.
        """
        if uuid is None or uuid not in self._parent or self._line is None:
            return False
        node: str | None = uuid
        seen: set[str] = set()
        while node is not None and node in self._parent and node not in seen:
            if node in self._line:
                return False
            if node in self._conversational:
                return self.root(node) in self._line
            seen.add(node)
            node = self._parent[node]
        return False
