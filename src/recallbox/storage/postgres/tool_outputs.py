"""Stored tool outputs on PostgreSQL (DESIGN §6): originals under handles, gated like their
origin — its thread (if it has one) passes the thread gate and its source (if it has one) is not
excluded, by basename, by path (equal, or ending with ``/`` + the exclusion) or by identity.
"""

from __future__ import annotations

from datetime import UTC, datetime

from psycopg import errors as pg_errors

from recallbox.errors import InvalidArgument
from recallbox.storage.codecs import storable, text_hash
from recallbox.storage.postgres.connection import PgPool
from recallbox.storage.postgres.messages import ensure_thread_id
from recallbox.storage.postgres.visibility import THREAD_ALLOWED_SQL, source_allowed_sql
from recallbox.storage.values import NewToolOutput

#: The privacy gate of a stored output ``o``: its thread's and its source's.
TOOL_OUTPUT_ALLOWED_SQL = (
    f"(o.thread_id IS NULL OR EXISTS (SELECT 1 FROM threads t WHERE t.id = o.thread_id AND "
    f"{THREAD_ALLOWED_SQL})) AND (o.source IS NULL OR "
    f"{source_allowed_sql('o.source', 'coalesce(o.source_path, o.source)', 'o.source_identity', suffix=True)})"
)


class ToolOutputsMixin:
    """:class:`~recallbox.storage.base.ToolOutputStore` for :class:`PostgresStore`."""

    pool: PgPool

    def put_tool_output(self, output: NewToolOutput) -> None:
        source = output.source
        basename = source.rsplit("/", 1)[-1] if source is not None else None
        path = source if source is not None and "/" in source else None
        with self.pool.transaction() as conn:
            thread = (
                ensure_thread_id(conn, output.channel, None) if output.channel is not None else None
            )
            try:
                with conn.transaction():  # a savepoint: a taken handle leaves the rest alone
                    conn.execute(
                        "INSERT INTO tool_outputs (handle, thread_id, source, source_path, "
                        "source_identity, tool, content, content_hash, created_at) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        (
                            output.handle,
                            thread,
                            basename,
                            path,
                            output.identity,
                            output.tool,
                            output.content,
                            text_hash(output.content),
                            datetime.now(UTC),
                        ),
                    )
            except pg_errors.UniqueViolation as exc:
                raise InvalidArgument(f"the handle {output.handle!r} is taken") from exc

    def tool_output(self, handle: str) -> str | None:
        if not storable(handle):
            return None
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT o.content FROM tool_outputs o WHERE o.handle = %s AND "
                f"{TOOL_OUTPUT_ALLOWED_SQL}",
                (handle,),
            ).fetchone()
        return str(row[0]) if row else None
