"""Purge and redact (DESIGN §7a): the rules; the erasure itself is the store's ``SecretStore``.

Person-facing only: no agent path (MCP, hooks, search, recall) may call these (an
architecture test keeps it so). A redaction replaces every match of a literal ``str`` or a
compiled ``re.Pattern`` by :data:`REDACTED`; a purge deletes rows. Both rebuild the transcript
chunks that held a changed message, drop the affected vectors, merge every full-text index and
empty the ``-wal`` file, all on one connection with secure deletion on.
"""

from __future__ import annotations

import dataclasses
import logging
import re

from recallbox.domains.chunking import rechunk
from recallbox.domains.memory_ops import memory_write
from recallbox.domains.privacy import normalize_source_path
from recallbox.errors import InvalidArgument, NotFound
from recallbox.storage.base import Store
from recallbox.storage.secrets import SecretTarget, TextRewrite, VacuumFull
from recallbox.types import PurgeReport

REDACTED = "[REDACTED]"
"""What every match of a redaction pattern becomes."""
logger = logging.getLogger(__name__)


def _name(value: object, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{what} must be a non-empty string, got {value!r}")
    return value


def check_target(
    message_id: object = None,
    *,
    channel: object = None,
    handle: object = None,
    key: object = None,
    source: object = None,
) -> SecretTarget:
    """The validated target of a purge or redaction.

    Raises:
        InvalidArgument: nothing named, or a name that is not a non-empty string.
    """
    target = SecretTarget(
        message_id=_name(message_id, "message_id"),
        channel=_name(channel, "channel"),
        key=_name(key, "key"),
        source=normalize_source_path(s) if (s := _name(source, "source")) else None,
        handle=_name(handle, "handle"),
    )
    if target == SecretTarget():
        raise InvalidArgument("name what to erase: a message id, channel, key, source or handle")
    return target


def rewriter(pattern: object) -> TextRewrite:
    """``pattern`` (a literal ``str`` or a compiled ``re.Pattern[str]``) as a rewrite.

    Raises:
        InvalidArgument: an empty pattern, one that matches the empty string, or another type.
    """
    if isinstance(pattern, re.Pattern):
        compiled: re.Pattern[str] = pattern
        if not isinstance(compiled.pattern, str):
            raise InvalidArgument("a redaction pattern must be a str pattern, not bytes")
        if compiled.fullmatch("") is not None:
            raise InvalidArgument(f"pattern {compiled.pattern!r} matches the empty string")

        def by_regex(text: str) -> tuple[str, int]:
            return compiled.subn(REDACTED, text)

        return by_regex
    if not isinstance(pattern, str) or not pattern:
        raise InvalidArgument("pattern must be a non-empty string or a compiled re.Pattern")

    def by_literal(text: str) -> tuple[str, int]:
        found = text.count(pattern)
        return (text.replace(pattern, REDACTED), found) if found else (text, 0)

    return by_literal


def _check_exists(store: Store, target: SecretTarget) -> None:
    if target.message_id is not None and store.get_message(target.message_id) is None:
        raise NotFound(f"unknown message id {target.message_id!r}")
    if target.channel is not None and store.get_thread(target.channel) is None:
        raise NotFound(f"unknown channel {target.channel!r}")
    if target.key is not None and store.memory_entry(target.key) is None:
        raise NotFound(f"unknown memory key {target.key!r}")


def _rechunk(store: Store, changed: tuple[tuple[str, int], ...]) -> None:
    for channel, seq in changed:
        if store.has_transcript_chunks(channel):
            rechunk(store, channel, seq)


def purge(store: Store, target: SecretTarget, *, vacuum_full: bool = False) -> PurgeReport:
    """Delete the target's rows from every table and index, then erase them physically.

    ``vacuum_full``: on a store whose freed bytes stay in its files until they are rewritten
    (:class:`~recallbox.storage.secrets.VacuumFull`: PostgreSQL), rewrite every table too; a
    store whose purge already rewrites its file (SQLite) has nothing more to do.
    """
    if not isinstance(vacuum_full, bool):
        raise InvalidArgument(f"vacuum_full must be True or False, got {vacuum_full!r}")
    _check_exists(store, target)
    store.secure_delete()
    with store.transaction():
        erased = store.purge_rows(target)
        _rechunk(store, erased.rechunk)
    erasure = store.finish_erasure()
    if not erasure.wal_truncated:
        logger.warning("the -wal file still holds old frames: another connection kept reading")
    rewritten = 0
    if vacuum_full and isinstance(store, VacuumFull):
        rewritten = store.vacuum_full()
    return PurgeReport(
        messages=erased.messages,
        threads=erased.threads,
        chunks=erased.chunks,
        sections=erased.sections,
        memories=erased.memories,
        outputs=erased.outputs,
        vectors=erasure.vectors,
        hits=erased.hits,
        wal_truncated=erasure.wal_truncated,
        files=erased.files,
        physical=erasure.physical or rewritten > 0,
        tables_rewritten=rewritten,
    )


def _redact_memory(store: Store, key: str, rewrite: TextRewrite) -> int:
    entry = store.memory_entry(key)
    assert entry is not None  # checked before
    title, in_title = rewrite(entry.title) if entry.title is not None else (None, 0)
    body, in_body = rewrite(entry.body)
    if in_title + in_body:
        changed = dataclasses.replace(entry, title=title, body=body, excluded=False)
        store.update_memory_entries([memory_write(changed)])
    return in_title + in_body


def redact(store: Store, target: SecretTarget, pattern: object) -> int:
    """Replace every match of ``pattern`` in the target's stored texts (and in every hit-log
    query) by :data:`REDACTED`, then erase the old texts physically; returns the count."""
    rewrite = rewriter(pattern)
    _check_exists(store, target)
    store.secure_delete()
    with store.transaction():
        redacted = store.redact_rows(target, rewrite)
        count = redacted.replacements
        if target.key is not None:
            count += _redact_memory(store, target.key, rewrite)
        _rechunk(store, redacted.rechunk)
    if not store.finish_erasure().wal_truncated:
        logger.warning("the -wal file still holds old frames: another connection kept reading")
    return count
