"""The code index's part of the storage contract (:class:`CodeStore`), composed into
``recallbox.storage.base.Store``; its rows are in ``recallbox.storage.values_code``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from recallbox.storage.queries import SearchFilter
from recallbox.storage.values_code import (
    CodeEdgeRecord,
    CodeFile,
    CodeGraphFile,
    CodeIndexWrite,
    CodeScope,
    CodeSymbolRow,
)


@runtime_checkable
class CodeStore(Protocol):
    """The code domain's index (DESIGN §2, §4.5): files, symbols and edges, per scope.

    The bookkeeping reads (:meth:`code_scopes`, :meth:`code_graph`, :meth:`code_call_edges`)
    serve the indexer and show every stored file, excluded ones too; a search never calls
    them. The search reads (:meth:`code_symbol_rows`, :meth:`code_name_matches`,
    :meth:`code_calls`) apply the privacy gate to every symbol they return or count: a symbol
    of a denied file (stored exclusion by basename, scope-relative path or file identity, or
    :attr:`SearchFilter.excluded`) is never returned, never a caller or callee, never counted.
    Ranked keyword search and vectors are the generic :class:`~recallbox.storage.base.KeywordIndex` and
    :class:`~recallbox.storage.base.VectorIndex` over :data:`~recallbox.storage.queries.CORPUS_CODE_SYMBOL`.
    """

    def code_scopes(self) -> list[CodeScope]:
        """Bookkeeping: every indexed scope and its last index run, by name."""

    def code_graph(self, scope: str) -> list[CodeGraphFile]:
        """Bookkeeping: every stored file of ``scope`` (by path) with its symbols and its
        ``imports``/``extends`` edges; ``[]`` for an unknown scope."""

    def code_file_counts(self, scope: str) -> list[tuple[CodeFile, int]]:
        """Bookkeeping: every stored file of ``scope`` (by path) with its symbol count, no
        symbol or edge loaded; ``[]`` for an unknown scope."""

    def code_call_edges(
        self,
        scope: str,
        *,
        names: Iterable[str] | None = None,
        mentions: Iterable[str] | None = None,
    ) -> dict[str, list[CodeEdgeRecord]]:
        """Bookkeeping: the ``calls`` edges of ``scope`` by file path, in ordinal order.

        With neither filter, all of them; with ``names`` or ``mentions`` (or both), only those
        whose ``target_last`` is one of ``names`` or whose ``target_name`` contains one of
        ``mentions`` (a case-sensitive substring; the empty string is in every name)."""

    def write_code_index(self, update: CodeIndexWrite) -> None:
        """Apply one index run in one transaction: record the scope's root, commit and time;
        replace each written file's symbols and edges (a symbol whose record is unchanged keeps
        its row, and so its vector); remove deleted files with their symbols and edges;
        restamp; apply the edge fixes."""

    def code_symbol_rows(
        self, keys: Sequence[str], *, where: SearchFilter
    ) -> dict[str, CodeSymbolRow]:
        """The visible symbols among ``keys`` (public ids); the others are simply absent."""

    def code_name_matches(self, name_seg: str, *, where: SearchFilter, limit: int) -> list[str]:
        """Keys of up to ``limit`` visible symbols whose ``name_seg`` equals ``name_seg``, by
        scope and symbol id."""

    def code_calls(
        self, keys: Sequence[str], *, incoming: bool, where: SearchFilter, limit: int
    ) -> dict[str, list[str]]:
        """For each visible symbol of ``keys``: the keys of the visible symbols that call it
        (``incoming``, by file and line) or that it calls (by the line of its first call), at
        most ``limit`` each, never itself; a key that is not visible is absent."""


__all__ = ["CodeStore"]
