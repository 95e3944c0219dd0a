"""Storage backends behind one small protocol (``storage.base``); ``open_store`` picks one."""

from __future__ import annotations

from recallbox.storage.base import NewMessage, Store

#: The URL schemes the PostgreSQL backend answers to.
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
POSTGRES_HINT = "pip install 'recallbox[postgres]'"


def is_postgres_url(location: str) -> bool:
    """Whether ``location`` names a PostgreSQL database (``postgresql://…``)."""
    return location.startswith(POSTGRES_SCHEMES)


def open_store(url: str) -> Store:
    """Open the store at ``url``: a SQLite path, ``":memory:"``, or a ``postgresql://`` URL.

    Raises:
        DependencyMissing: a PostgreSQL URL without the ``postgres`` extra installed.
        StoreUnavailable: the location cannot be opened or the server reached (the message
            names the fix).
    """
    if is_postgres_url(url):
        try:
            from recallbox.storage.postgres.store import PostgresStore
        except ImportError as exc:
            from recallbox.errors import DependencyMissing

            raise DependencyMissing(
                f"a PostgreSQL URL needs psycopg and psycopg-pool; install them with: "
                f"{POSTGRES_HINT}"
            ) from exc
        return PostgresStore(url)
    from recallbox.storage.sqlite.store import SQLiteStore

    return SQLiteStore(url)


__all__ = ["POSTGRES_SCHEMES", "NewMessage", "Store", "is_postgres_url", "open_store"]
