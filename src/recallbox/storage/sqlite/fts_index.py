"""The definition of one external-content FTS5 index: its table, triggers and source.

Kept apart from ``schema.py`` (which re-exports it) so the migrations module stays short.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FtsIndex:
    """One external-content FTS5 index over a content table.

    ``source`` is the external content the index reads (``rebuild``, ``integrity-check``) when
    it is not ``content_table`` itself: a view that yields each column's text (text stored
    once: ``content_seg`` is ``''`` where it equals ``content``). ``values`` is the SQL of each
    column's text over a row alias ``{r}`` (``new``/``old`` in the triggers), matching the view.
    """

    name: str
    content_table: str
    columns: tuple[str, ...]
    options: str  # the tokenize/detail part of the CREATE statement
    probe: str  # "token" (ranked word index) or "trigram" (substring index)
    source: str | None = None
    values: tuple[str, ...] = ()
    only_changes: bool = False  # the update trigger fires only when an indexed value changed

    @property
    def reads(self) -> str:
        """The table or view the index reads its content from."""
        return self.source or self.content_table

    def create_sql(self) -> str:
        cols = ", ".join(self.columns)
        return (
            f"CREATE VIRTUAL TABLE {self.name} USING fts5({cols}, "
            f"content='{self.reads}', content_rowid='id', {self.options})"
        )

    def trigger_names(self) -> tuple[str, str, str]:
        return (f"{self.name}_ai", f"{self.name}_ad", f"{self.name}_au")

    def _values(self, alias: str) -> str:
        exprs = self.values or tuple("{r}." + c for c in self.columns)
        return ", ".join(e.replace("{r}", alias) for e in exprs)

    def watched(self) -> tuple[str, ...]:
        """The content-table columns the column texts are computed from."""
        if not self.values:
            return self.columns
        return tuple(dict.fromkeys(re.findall(r"\{r\}\.(\w+)", " ".join(self.values))))

    def trigger_sql(self) -> list[str]:
        cols = ", ".join(self.columns)
        new, old = self._values("new"), self._values("old")
        ai, ad, au = self.trigger_names()
        when = (
            " WHEN " + " OR ".join(f"old.{c} IS NOT new.{c}" for c in self.watched())
            if self.only_changes
            else ""
        )
        return [
            f"CREATE TRIGGER {ai} AFTER INSERT ON {self.content_table} BEGIN "
            f"INSERT INTO {self.name}(rowid, {cols}) VALUES (new.id, {new}); END",
            f"CREATE TRIGGER {ad} AFTER DELETE ON {self.content_table} BEGIN "
            f"INSERT INTO {self.name}({self.name}, rowid, {cols}) "
            f"VALUES ('delete', old.id, {old}); END",
            f"CREATE TRIGGER {au} AFTER UPDATE OF {', '.join(self.watched())} "
            f"ON {self.content_table}{when} BEGIN "
            f"INSERT INTO {self.name}({self.name}, rowid, {cols}) "
            f"VALUES ('delete', old.id, {old}); "
            f"INSERT INTO {self.name}(rowid, {cols}) VALUES (new.id, {new}); END",
        ]
