"""Storage backends behind one small protocol (``storage.base``); ``open_store`` picks one."""

from __future__ import annotations

from recallbox.storage.base import NewMessage, Store


def open_store(url: str) -> Store:
    """Open the store at ``url``: a SQLite path, ``":memory:"`` (PostgreSQL URLs come later).

    Raises:
        InvalidArgument: for a URL scheme no backend handles.
    """
    from recallbox.errors import InvalidArgument

    if url.startswith(("postgresql://", "postgres://")):
        raise InvalidArgument(
            "the PostgreSQL backend is not available in this version; use a SQLite path"
        )
    from recallbox.storage.sqlite.store import SQLiteStore

    return SQLiteStore(url)


__all__ = ["NewMessage", "Store", "open_store"]
