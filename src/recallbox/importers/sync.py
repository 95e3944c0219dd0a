"""Incremental transcript sync: transcript files into threads, each file once, each record once.

Per file (DESIGN §4.5, principle 8):

* **Unchanged** — same size and mtime as last time and the same hash of the last
  ``TAIL_HASH_BYTES`` before the cursor: nothing else is read (a stat and a hash).
* **Appended** — the hash of the already-consumed prefix is unchanged: reading resumes at the
  byte cursor with the reader state saved last time, so only new records are parsed.
* **Rewritten** — the prefix hash changed (or the file shrank below the cursor): the file is
  read again from the start; records already imported (by record key and content hash) are
  kept, new ones are added, changed ones replace theirs and records no longer in the file are
  marked superseded. The engine never deletes a message.

Each file imports in one ``store.transaction()``: an error (or a crash) leaves nothing of it
behind, and the error is reported for that file while the other files go on. A truncated last
line (and a compaction boundary whose summary record is not written yet) is left for the next
sync. Readers stream: memory does not grow with the file.

Superseded messages (an abandoned Claude Code branch, a record a rewrite removed) are marked
superseded by the **next live message** of their thread in sequence order (for an abandoned
branch that is the answer or prompt that replaced it); when none follows, by the last live
message before them; a thread with no live message at all marks them by themselves.
OpenAI-format files are chat exports (JSON documents have no line framing): they are parsed
whole whenever they change and synced by record key.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from recallbox.domains.chunking import rechunk
from recallbox.domains.privacy import file_identity, normalize_source_name
from recallbox.errors import InvalidArgument, NotFound
from recallbox.importers._sync_rows import Counts, ThreadTouch, Writer, item_key
from recallbox.importers._sync_state import (
    LedgerNodes,
    Progress,
    ProgressCallback,
    line_start,
    new_hasher,
    prefix_hasher,
    tail_hash,
)
from recallbox.importers.claude_stream import ClaudeCodeReader
from recallbox.importers.codex_stream import CodexReader
from recallbox.importers.openai_json import parse_openai
from recallbox.importers.paths import TranscriptFile, files_to_import
from recallbox.importers.records import (
    FORMAT_CLAUDE_CODE,
    FORMAT_CODEX,
    FORMAT_OPENAI,
)
from recallbox.importers.stream import (
    Output,
    StreamReader,
    TruncatedTail,
    decode_line,
    read_lines,
)
from recallbox.storage.base import ImportFile, SyncStore
from recallbox.text.normalize import normalize_text
from recallbox.types import FileImportReport, ImportReport, SkippedRecord

DRAIN_EVERY_LINES = 256
"""Finished items are written after this many source lines (bounds memory)."""
PROGRESS_EVERY_BYTES = 1 << 20
WHOLE_FILE_FORMATS = frozenset({FORMAT_OPENAI})

STATUS_NEW = "new"
STATUS_APPENDED = "appended"
STATUS_RESYNCED = "resynced"
STATUS_UNCHANGED = "unchanged"
STATUS_ERROR = "error"


def import_transcripts(
    store: SyncStore,
    format: str,
    paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str] | None = None,
    *,
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Sync transcript files of one format into ``store`` (see the module docstring).

    Raises:
        InvalidArgument: unknown format.
    """
    files = files_to_import(format, paths)
    sizes = [_size(f.path) for f in files]
    tracker = Progress(progress, files_total=len(files), bytes_total=sum(sizes))
    reports: list[FileImportReport] = []
    for index, item in enumerate(files):
        tracker.start_file(item.path, index)
        try:
            report = _sync_file(store, format, item, tracker)
        except Exception as exc:  # one bad file never stops the others
            report = FileImportReport(
                path=normalize_text(str(item.path)),
                format=format,
                status=STATUS_ERROR,
                error=normalize_text(_describe(exc)),
            )
        reports.append(report)
        tracker.finish_file(sizes[index])
    return ImportReport(format=format, files=tuple(reports))


class _LedgerMoved(Exception):
    """Another process synced the file between our reading of the ledger and our write lock."""


LEDGER_RETRIES = 3


def _sync_file(
    store: SyncStore, format: str, item: TranscriptFile, tracker: Progress
) -> FileImportReport:
    """Sync one file; when another process synced it concurrently, decide again (the mode is
    chosen before the write lock is taken, so an unchanged file never waits for it)."""
    for _ in range(LEDGER_RETRIES - 1):
        try:
            return _FileSync(store, format, item, tracker).run()
        except _LedgerMoved:
            continue
    return _FileSync(store, format, item, tracker).run()


def _describe(exc: Exception) -> str:
    if isinstance(exc, NotFound | InvalidArgument):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"no transcript file at {exc.filename}; check the path"
    return f"{type(exc).__name__}: {exc}"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class _FileSync:
    """Syncs one file: decide the mode, read, write, resolve branches, save the cursor."""

    def __init__(
        self, store: SyncStore, format: str, item: TranscriptFile, progress: Progress
    ) -> None:
        self.store = store
        self.format = format
        self.path = item.path
        self.parent_session = item.parent_session
        self.not_imported = item.not_imported
        self.progress = progress
        self.counts = Counts()
        # The ledger key and the reported path: a file name that is not UTF-8 (lone surrogates
        # from the file system) is stored with U+FFFD, like every other text.
        self.key = normalize_text(str(item.path))
        self.source_name = normalize_source_name(str(item.path))
        self.identity = file_identity(item.path)
        self.nodes: LedgerNodes | None = None

    def run(self) -> FileImportReport:
        path = self.path
        if not path.is_file():
            raise NotFound(f"no transcript file at {path}; check the path")
        stat = path.stat()
        known = self.store.import_file(self.key) or self._moved_from()
        if known is not None and known.format != self.format:
            raise InvalidArgument(
                f"{path} was imported as {known.format}, not {self.format}; "
                f"import it with `recallbox import {known.format}`"
            )
        if (
            known is not None
            and known.size == stat.st_size
            and known.mtime_ns == stat.st_mtime_ns
            and tail_hash(path, known.cursor_bytes) == known.tail_hash
        ):
            if known.path != self.key:
                self.store.save_import_file(replace(known, path=self.key))
            return self._report(STATUS_UNCHANGED, [], {}, False)
        hasher, status = new_hasher(), STATUS_NEW
        if known is not None:
            status = STATUS_RESYNCED
            if self.format not in WHOLE_FILE_FORMATS and stat.st_size >= known.cursor_bytes:
                candidate = prefix_hasher(path, known.cursor_bytes)
                if candidate.hexdigest() == known.prefix_hash:
                    hasher, status = candidate, STATUS_APPENDED
        with self.store.transaction():
            if self._ledger_moved(known):
                raise _LedgerMoved  # another sync of this file committed first: decide again
            file = known or ImportFile(self.key, self.format)
            file = self.store.save_import_file(replace(file, path=self.key, identity=self.identity))
            if status == STATUS_RESYNCED:
                self.store.reset_import_nodes(file.id)
            sync_id = file.sync_count + 1
            if self.format in WHOLE_FILE_FORMATS:
                outcome = self._read_whole(file, sync_id)
            else:
                outcome = self._read_stream(file, sync_id, status, hasher)
            file, skipped, unknown, truncated = outcome
            if status == STATUS_RESYNCED:
                self._supersede_vanished(file.id, sync_id)
            self._supersede_collected()
            self._rechunk()
            self._finish_threads()
            self.store.save_import_file(
                replace(
                    file,
                    size=stat.st_size,
                    mtime_ns=stat.st_mtime_ns,
                    tail_hash=tail_hash(path, file.cursor_bytes),
                    sync_count=sync_id,
                )
            )
        return self._report(status, skipped, unknown, truncated)

    def _ledger_moved(self, known: ImportFile | None) -> bool:
        """Whether the ledger row changed since ``known`` was read (inside the transaction)."""
        current = self.store.import_file(known.path if known is not None else self.key)
        if known is None or current is None:
            return (known is None) != (current is None)
        return current.sync_count != known.sync_count

    def _moved_from(self) -> ImportFile | None:
        """The ledger row of this file under an old path that is gone (a moved file keeps its
        device and inode: Codex moves finished rollouts to ``archived_sessions/``)."""
        if self.identity is None:
            return None
        for candidate in self.store.import_files_with_identity(self.identity):
            if candidate.format == self.format and not Path(candidate.path).exists():
                return candidate
        return None

    def _report(
        self,
        status: str,
        skipped: Sequence[Any],
        unknown: dict[str, int],
        truncated: bool,
    ) -> FileImportReport:
        counts = self.counts
        if status != STATUS_UNCHANGED:
            unknown = {**unknown, **self.not_imported}
        return FileImportReport(
            path=self.key,
            format=self.format,
            status=status,
            records=counts.records,
            added=counts.added,
            merged=counts.merged,
            superseded=counts.superseded,
            skipped=tuple(SkippedRecord(s.line, s.reason) for s in skipped),
            unknown_records=dict(sorted(unknown.items())),
            channels=tuple(counts.channels),
            truncated_tail=truncated,
        )

    # -- reading -------------------------------------------------------------------------
    def _reader(self, file: ImportFile, fresh: bool) -> StreamReader:
        state = {} if fresh else file.state
        if self.format == FORMAT_CLAUDE_CODE:
            self.nodes = LedgerNodes(self.store, file.id)
            return ClaudeCodeReader(
                self.path, nodes=self.nodes, state=state, parent_session=self.parent_session
            )
        if self.format == FORMAT_CODEX:
            return CodexReader(self.path, state=state)
        raise InvalidArgument(f"no streaming reader for {self.format!r}")

    def _read_stream(
        self, file: ImportFile, sync_id: int, status: str, hasher: Any
    ) -> tuple[ImportFile, list[Any], dict[str, int], bool]:
        resume = status == STATUS_APPENDED
        reader = self._reader(file, fresh=not resume)
        start_byte = file.cursor_bytes if resume else 0
        start_line = file.cursor_line if resume else 0
        cursor_bytes, cursor_line = start_byte, start_line
        since_drain = 0
        next_progress = PROGRESS_EVERY_BYTES
        writer = Writer(self, file.id, sync_id, rewrite=status == STATUS_RESYNCED)
        for line in read_lines(self.path, start_byte=start_byte, start_line=start_line):
            try:
                data = decode_line(line, reader.report)
            except TruncatedTail:
                break
            hasher.update(line.raw)
            cursor_bytes, cursor_line = line.end, line.number
            if line.raw.strip():
                self.counts.records += 1
                self.progress.records += 1
            if data is not None:
                reader.feed(line, data)
            since_drain += 1
            if since_drain >= DRAIN_EVERY_LINES:
                writer.write(reader.drain(final=False))
                since_drain = 0
            if cursor_bytes - start_byte >= next_progress:
                self.progress.update(cursor_bytes)
                next_progress += PROGRESS_EVERY_BYTES
        writer.write(reader.drain(final=True))
        if self.nodes is not None:
            self.nodes.flush()
        hold = reader.hold_line()
        prefix_hash = hasher.hexdigest()
        if hold is not None:
            cursor_bytes, cursor_line, prefix_hash = line_start(self.path, hold)
        self._resolve_branches(file.id, reader, full=status == STATUS_RESYNCED)
        self._set_titles(reader, file.id)
        report = reader.report
        report.sort()
        saved = replace(
            file,
            prefix_hash=prefix_hash,
            cursor_bytes=cursor_bytes,
            cursor_line=cursor_line,
            state=reader.state(),
        )
        return saved, report.skipped, report.unknown_records, report.truncated_tail

    def _read_whole(
        self, file: ImportFile, sync_id: int
    ) -> tuple[ImportFile, list[Any], dict[str, int], bool]:
        transcripts = parse_openai(self.path)
        writer = Writer(self, file.id, sync_id, rewrite=True)
        skipped: list[Any] = []
        unknown: dict[str, int] = {}
        truncated = False
        for transcript in transcripts:
            skipped.extend(transcript.skipped)
            for key, count in transcript.unknown_records.items():
                unknown[key] = unknown.get(key, 0) + count
            truncated = truncated or transcript.truncated_tail
            self.counts.records += len(transcript.items)
            writer.write(
                Output(
                    channel=transcript.channel,
                    item=item,
                    key=item_key(transcript.channel, item),
                    parent_channel=transcript.parent_channel,
                )
                for item in transcript.items
            )
            if transcript.title:
                self._set_title(transcript.channel, transcript.title)
        size = self.path.stat().st_size
        saved = replace(
            file,
            prefix_hash=prefix_hasher(self.path, size).hexdigest(),
            cursor_bytes=size,
            cursor_line=0,
            state={},
        )
        return saved, skipped, unknown, truncated

    # -- after reading -------------------------------------------------------------------
    def _resolve_branches(self, file_id: int, reader: StreamReader, *, full: bool) -> None:
        revive: list[str] = []
        for root, side in sorted(reader.dirty_trees(full=full)):
            for message_id, superseded in self.store.resolve_branches(
                file_id, root, side, full=full
            ):
                if superseded:
                    self.counts.to_supersede.append(message_id)
                else:
                    revive.append(message_id)
        for message_id in revive:
            message = self.store.set_superseded(message_id, None)
            self.touch(message.channel).changed(message.seq)

    def _supersede_vanished(self, file_id: int, sync_id: int) -> None:
        vanished = [r.message_id for r in self.store.vanished_import_records(file_id, sync_id)]
        self.counts.to_supersede.extend(vanished)

    def _supersede_collected(self) -> None:
        """Mark the collected messages superseded by the next live message. All are marked
        first (by themselves), so none of them is chosen as another one's replacement."""
        marked: list[str] = []
        for message_id in dict.fromkeys(self.counts.to_supersede):
            message = self.store.get_message(message_id)
            if message is None or message.superseded_by is not None:
                continue
            self.store.set_superseded(message_id, message_id)
            marked.append(message_id)
            self.touch(message.channel).changed(message.seq)
        for message_id in marked:
            self.store.set_superseded(message_id, self.store.next_live_message(message_id))
        self.counts.superseded += len(marked)
        self.counts.to_supersede.clear()

    def _set_titles(self, reader: StreamReader, file_id: int) -> None:
        def is_live(uuid: str) -> bool:
            node = self.store.import_node(file_id, uuid)
            return node is not None and not node.superseded

        for channel, title in reader.titles(is_live).items():
            if title:
                self._set_title(channel, title)

    def _set_title(self, channel: str, title: str) -> None:
        title = normalize_text(title)
        thread = self.store.get_thread(channel)
        if thread is not None and thread.title != title:
            self.store.set_title(channel, title)

    def touch(self, channel: str) -> ThreadTouch:
        """First write to ``channel`` in this sync: create it, record its source file."""
        touch = self.counts.channels.get(channel)
        if touch is None:
            created = self.store.get_thread(channel) is None
            self.store.set_thread_source(channel, self.source_name, self.identity)
            touch = ThreadTouch(created=created)
            self.counts.channels[channel] = touch
        return touch

    def _rechunk(self) -> None:
        for channel, touch in self.counts.channels.items():
            if touch.changed_from is not None:
                rechunk(self.store, channel, touch.changed_from)

    def _finish_threads(self) -> None:
        for channel, touch in self.counts.channels.items():
            if touch.first is not None and touch.last is not None:
                self.store.set_thread_times(
                    channel, touch.first, touch.last, replace_last=touch.created
                )
