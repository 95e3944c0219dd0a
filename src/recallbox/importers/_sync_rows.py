"""Writing what a transcript reader produces: message rows, record keys, the batched writer.

Split from :mod:`recallbox.importers.sync` (which decides what to read); the rules are listed
there. A record already in the ledger with the same content hash is kept; a continuation of an
assistant message is merged into it; a changed record makes a new message and supersedes the
old one; a record another file of the same session already imported (same thread, same key:
a copied transcript) is *mirrored*: this file's ledger points at that message and never
changes it; everything new is appended in batches, one ``store.append`` per run of one thread.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from recallbox.domains.messages import build_row_from_mapping
from recallbox.importers._common import join_parts
from recallbox.importers.records import Compaction, ImportedMessage
from recallbox.importers.stream import Output
from recallbox.storage.base import ImportRecord, NewMessage, SyncStore
from recallbox.text.normalize import needs_normalization, normalize_json, normalize_text
from recallbox.types import Message

KEY_SUFFIX = "#"
"""``<key>#<n>``: the n-th further record of a file with the same key (identical lines)."""


def row_hash(row: NewMessage) -> str:
    """What a message says (role, kind, text, tool calls, link): detects a changed record."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (row.role, row.kind, row.tool_call_id or "", row.content):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    if row.tool_calls is not None:
        calls = json.dumps(row.tool_calls, ensure_ascii=True, sort_keys=True)
        digest.update(calls.encode("ascii"))
    return digest.hexdigest()


def clean_row(fields: Mapping[str, Any]) -> NewMessage:
    """:func:`build_row_from_mapping`, with lone surrogates (from ``\\ud800``-style JSON
    escapes) in the metadata replaced, so it can be stored and printed as UTF-8. The dump that
    validates the metadata tells whether it is UTF-8 (the usual case: built once)."""
    row = build_row_from_mapping(fields)
    if row.metadata_json is None:
        row = build_row_from_mapping({**fields, "metadata": normalize_json(fields["metadata"])})
    return row


# --- rows ----------------------------------------------------------------------------------


def output_row(output: Output) -> NewMessage:
    """The message row of an item (a compaction becomes its summary, opening a generation)."""
    item = output.item
    metadata = dict(item.metadata)
    if output.parent_channel is not None:
        metadata["parent_channel"] = output.parent_channel
    if isinstance(item, Compaction):
        return clean_row(
            {
                "role": "system",
                "kind": "compaction_summary",
                "content": item.summary,
                "created_at": item.created_at,
                "metadata": metadata,
            }
        )
    return clean_row({**item.as_append_kwargs(), "metadata": metadata})


def merged_row(stored: Message, continuation: ImportedMessage) -> NewMessage:
    """A stored assistant message continued by more records of its API message."""
    metadata = dict(stored.metadata)
    more = continuation.metadata
    metadata["line_end"] = continuation.line_end
    uuids = list(metadata.get("uuids") or [metadata.get("uuid")])
    uuids.extend(more.get("uuids") or [more.get("uuid")])
    metadata["uuids"] = [u for u in uuids if u is not None]
    for name in ("thinking",):
        if more.get(name):
            metadata[name] = [*metadata.get(name, []), *more[name]]
    if more.get("redacted_thinking_blocks"):
        metadata["redacted_thinking_blocks"] = metadata.get(
            "redacted_thinking_blocks", 0
        ) + more.get("redacted_thinking_blocks", 0)
    if more.get("stop_reason") is not None:
        metadata["stop_reason"] = more["stop_reason"]
    calls = [*(stored.tool_calls or []), *(continuation.tool_calls or [])]
    return clean_row(
        {
            "role": stored.role,
            "content": join_parts([stored.content, continuation.content]),
            "tool_calls": calls or None,
            "tool_call_id": stored.tool_call_id,
            "kind": stored.kind,
            "model_visible": stored.model_visible,
            "created_at": stored.created_at,
            "metadata": metadata,
        }
    )


# --- one file ------------------------------------------------------------------------------


@dataclass(slots=True)
class ThreadTouch:
    created: bool
    first: datetime | None = None
    last: datetime | None = None
    changed_from: int | None = None  # the lowest seq this batch added or changed
    source_set: bool = False  # this sync recorded the thread's source file
    new_thread: bool = False  # this sync created the thread (``created`` is per batch)

    def changed(self, seq: int) -> None:
        self.changed_from = seq if self.changed_from is None else min(self.changed_from, seq)

    def committed(self) -> None:
        """A batch was committed: what it changed is done (chunks, dates)."""
        self.created = False
        self.first = self.last = self.changed_from = None


@dataclass(slots=True)
class Counts:
    records: int = 0
    added: int = 0
    merged: int = 0
    superseded: int = 0
    duplicates: int = 0
    channels: dict[str, ThreadTouch] = field(default_factory=dict)
    to_supersede: list[str] = field(default_factory=list)


def item_key(channel: str, item: ImportedMessage | Compaction) -> str:
    """The record key of an item without an id of its own: a hash of what it says."""
    if isinstance(item, Compaction):
        payload: list[Any] = [channel, "compaction", item.summary]
    else:
        payload = [channel, item.role, item.kind, item.content, item.tool_calls]
        payload += [item.tool_call_id, item.created_at.isoformat() if item.created_at else None]
    text = json.dumps(payload, ensure_ascii=True, sort_keys=True, default=str)
    return "item:" + hashlib.blake2b(text.encode("ascii"), digest_size=16).hexdigest()


def _already_holds(stored: Message, continuation: ImportedMessage) -> bool:
    """Whether every record uuid of ``continuation`` is already merged into ``stored``."""
    held = stored.metadata.get("uuids") or [stored.metadata.get("uuid")]
    more = continuation.metadata.get("uuids") or [continuation.metadata.get("uuid")]
    return all(uuid is not None and uuid in held for uuid in more)


class WriterHost(Protocol):
    """What the writer needs of the file sync that drives it."""

    @property
    def store(self) -> SyncStore: ...

    @property
    def counts(self) -> Counts: ...

    def touch(self, channel: str, *, own: bool = True) -> ThreadTouch:
        """A write to ``channel`` in this sync: create it; with ``own`` (not only records
        another file of the session imported), record this file as its source."""


class Writer:
    """Writes reader outputs: new records appended (batched per thread), known ones kept,
    continuations merged, changed ones replaced (the old message superseded)."""

    def __init__(self, sync: WriterHost, file_id: int, sync_id: int, *, rewrite: bool) -> None:
        self.sync = sync
        self.store = sync.store
        self.file_id = file_id
        self.sync_id = sync_id
        self.rewrite = rewrite
        self._batch: list[tuple[Output, NewMessage, str, str]] = []
        self._batch_channel: str | None = None

    def write(self, outputs: Iterable[Output]) -> None:
        for output in outputs:
            self._one(output)
        self._flush()

    def _one(self, output: Output) -> None:
        if needs_normalization(output.channel + (output.parent_channel or "")):
            output = replace(
                output,
                channel=normalize_text(output.channel),
                parent_channel=normalize_text(output.parent_channel)
                if output.parent_channel is not None
                else None,
            )
        row = output_row(output)
        digest = row_hash(row)
        if output.merge:
            key = output.key
            record = self.store.import_record(self.file_id, key)
            if record is not None and (not self.rewrite or record.sync_id == self.sync_id):
                self._merge(output, record)
                return
        else:
            key, record = self._free_key(output.key)
        if record is None:
            shared = (
                None
                if self._new_thread(output.channel)
                else self.store.channel_import_record(output.channel, key, other_than=self.file_id)
            )
            if shared is not None:
                self._mirror(output, key, shared.message_id, digest)
                return
        elif record.mirror:
            self._mirror(output, key, record.message_id, digest)
            return
        elif record.content_hash == digest:
            self._seen(record)
            return
        else:
            self.sync.counts.to_supersede.append(record.message_id)
        self._append(output, row, key, digest)

    def _new_thread(self, channel: str) -> bool:
        """Whether this sync created ``channel`` (then no other file has records in it)."""
        touch = self.sync.counts.channels.get(channel)
        return touch is not None and touch.new_thread

    def _mirror(self, output: Output, key: str, message_id: str, digest: str) -> None:
        """A record another file of the session already imported (a copied transcript): this
        file's ledger points at that message, and never changes it."""
        self._flush()
        record = ImportRecord(
            key=key,
            channel=output.channel,
            message_id=message_id,
            content_hash=digest,
            sync_id=self.sync_id,
            node=output.node,
            mirror=True,
        )
        self.store.put_import_records(self.file_id, [record])
        self.sync.touch(output.channel, own=False)
        self.sync.counts.duplicates += 1

    def _free_key(self, base: str) -> tuple[str, ImportRecord | None]:
        """The key this output takes: ``base``, or ``base#n`` for the n-th identical record.

        When appending, every record is new, so the first unused key; when re-reading a
        rewritten file, the first key not yet matched in this pass (it may match a record).
        """
        number = 0
        while True:
            key = base if number == 0 else f"{base}{KEY_SUFFIX}{number}"
            record = self.store.import_record(self.file_id, key)
            if record is None:
                return key, None
            if self.rewrite and record.sync_id != self.sync_id:
                return key, record
            number += 1

    def _seen(self, record: ImportRecord) -> None:
        if record.sync_id != self.sync_id:
            self.store.put_import_records(self.file_id, [replace(record, sync_id=self.sync_id)])
        self.sync.touch(record.channel)

    def _merge(self, output: Output, record: ImportRecord) -> None:
        self._flush()
        stored = self.store.get_message(record.message_id)
        item = output.item
        if stored is None or not isinstance(item, ImportedMessage):
            return
        if record.mirror and _already_holds(stored, item):
            # Another file of the session imported this API message with this record.
            self.sync.touch(stored.channel, own=False)
            return
        row = merged_row(stored, item)
        self.store.extend_message(record.message_id, row)
        self.sync.touch(stored.channel).changed(stored.seq)
        self.store.put_import_records(
            self.file_id, [replace(record, content_hash=row_hash(row), sync_id=self.sync_id)]
        )
        self.sync.counts.merged += 1

    def _append(self, output: Output, row: NewMessage, key: str, digest: str) -> None:
        if self._batch_channel != output.channel:
            self._flush()
            self._batch_channel = output.channel
        self._batch.append((output, row, key, digest))

    def _flush(self) -> None:
        if not self._batch or self._batch_channel is None:
            return
        channel = self._batch_channel
        batch, self._batch, self._batch_channel = self._batch, [], None
        touch = self.sync.touch(channel)
        messages = self.store.append(channel, [row for _, row, _, _ in batch])
        touch.changed(messages[0].seq)
        records = []
        for (output, row, key, digest), message in zip(batch, messages, strict=True):
            records.append(
                ImportRecord(
                    key=key,
                    channel=channel,
                    message_id=message.id,
                    content_hash=digest,
                    sync_id=self.sync_id,
                    node=output.node,
                )
            )
            if isinstance(output.item, ImportedMessage) and output.item.superseded:
                self.sync.counts.to_supersede.append(message.id)
            stamp = row.created_at
            touch.first = stamp if touch.first is None else min(touch.first, stamp)
            touch.last = stamp if touch.last is None else max(touch.last, stamp)
        self.store.put_import_records(self.file_id, records)
        self.sync.counts.added += len(messages)
