"""What went wrong reaching a PostgreSQL server, in one line that names the fix (#16 item 6).

An unreachable server, refused credentials, a missing database, a missing extension or a
schema written by a newer recallbox each become one :class:`~recallbox.errors.StoreUnavailable`
(or :class:`~recallbox.errors.SchemaMismatch`) whose message says what to do; the CLI prints it
as one line (exit 1, DESIGN §8). A URL is always shown without its password.
"""

from __future__ import annotations

import psycopg
from psycopg import conninfo

from recallbox.errors import StoreUnavailable

#: The extensions recallbox needs: name -> (what it is, what it gives recallbox).
REQUIRED_EXTENSIONS = {
    "pg_trgm": "pg_trgm (literal search, search_memory)",
    "vector": "pgvector (the vector leg)",
}
URL_HINT = "--db / RECALLBOX_DB"

# Server error codes (SQLSTATE) of the failures a person can fix.
_AUTH_CODES = {"28P01", "28000"}
_NO_DATABASE = "3D000"


def display_url(url: str) -> str:
    """``user@host:port/dbname`` of ``url`` (never the password)."""
    try:
        parts = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the given URL"
    host = str(parts.get("host") or "localhost")
    port = f":{parts['port']}" if parts.get("port") else ""
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"{user}{host}{port}/{parts.get('dbname') or ''}"


def _dbname(url: str) -> str:
    try:
        return str(conninfo.conninfo_to_dict(url).get("dbname") or "")
    except psycopg.ProgrammingError:
        return ""


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text.removeprefix("connection failed: ")


def connect_error(url: str, exc: psycopg.Error) -> StoreUnavailable:
    """The error to raise for a failed connection to ``url``."""
    where = display_url(url)
    code = getattr(exc, "sqlstate", None) or ""
    text = _first_line(exc)
    lowered = text.lower()
    if code in _AUTH_CODES or "authentication failed" in lowered or "no password" in lowered:
        return StoreUnavailable(
            f"the PostgreSQL server refused the login to {where} ({text}); check the user "
            f"and password in the URL ({URL_HINT}), PGPASSWORD or ~/.pgpass"
        )
    if code == _NO_DATABASE or ("database" in lowered and "does not exist" in lowered):
        name = _dbname(url)
        return StoreUnavailable(
            f"the database {name!r} does not exist on the PostgreSQL server {where}; create it "
            f"(`createdb {name}` or CREATE DATABASE) or fix the URL ({URL_HINT})"
        )
    if "role" in lowered and "does not exist" in lowered:
        return StoreUnavailable(
            f"the PostgreSQL server at {where} has no such user ({text}); fix the user in the "
            f"URL ({URL_HINT}) or create the role"
        )
    return StoreUnavailable(
        f"cannot reach the PostgreSQL server at {where} ({text}); check that it is running "
        f"and that the host and port in the URL are right ({URL_HINT})"
    )


def extension_error(name: str, exc: psycopg.Error, url: str) -> StoreUnavailable:
    """The error to raise when extension ``name`` cannot be created in ``url``'s database."""
    what = REQUIRED_EXTENSIONS.get(name, name)
    database = _dbname(url) or "the database"
    return StoreUnavailable(
        f"the PostgreSQL server cannot enable the extension {what} ({_first_line(exc)}); "
        f"install it on the server and run `CREATE EXTENSION IF NOT EXISTS {name};` in "
        f"{database} as a user allowed to (on a managed service: enable {name} in its "
        "extension settings), then retry"
    )


__all__ = ["REQUIRED_EXTENSIONS", "connect_error", "display_url", "extension_error"]
