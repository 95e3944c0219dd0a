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

A streamed file imports in **batches**: every :data:`COMMIT_EVERY_RECORDS` records (or
:data:`COMMIT_EVERY_SECONDS`, whichever comes first; fewer records when a batch's writes took
longer, :func:`next_batch_size`) the sync
finishes what it has read (branches resolved, chunks rebuilt, thread dates set) and commits it
with the file's cursor and reader state in the same transaction, so the write lock is never
held for long (a live ``append`` or ``read_message`` goes on during a long import) and an
import stopped anywhere — an error, a crash, Ctrl-C — leaves a consistent database: the
committed batches are exactly what a sync of the file up to that point gives, and the next
sync resumes from the last cursor (a rewritten file's pass resumes as that same pass, so its
vanished records are still found at its end). An error is reported for its file while the
other files go on. OpenAI-format files (JSON documents) import in one transaction. A truncated
last line (and a compaction boundary whose summary record is not written yet) is left for the
next sync. Readers stream: memory does not grow with the file.

Threads are keyed by the session id inside the file (DESIGN §2). A record that another file of
the same session already imported (a transcript copied under another name) is not imported
again: this file's ledger *mirrors* it (``recallbox.importers._sync_rows``), and only the file
that first imported a message ever changes it. A new file that looks like another format than
the one asked for is refused with a "wrong format?" hint (``recallbox.importers.detect``).

Superseded messages (an abandoned Claude Code branch, a record a rewrite removed) are marked
superseded by the **next live message** of their thread in sequence order (for an abandoned
branch that is the answer or prompt that replaced it); when none follows, by the last live
message before them; a thread with no live message at all marks them by themselves.
OpenAI-format files are chat exports (JSON documents have no line framing): they are parsed
whole whenever they change and synced by record key.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from recallbox.domains.privacy import file_identity, normalize_source_name
from recallbox.errors import InvalidArgument, NotFound
from recallbox.importers._common import OTHER_SESSION_IDS_KEY
from recallbox.importers._sync_finish import BatchFinish
from recallbox.importers._sync_rows import Counts, Writer
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
from recallbox.importers.detect import no_files_hint, wrong_format
from recallbox.importers.paths import TranscriptFile, files_to_import
from recallbox.importers.records import (
    FORMAT_CLAUDE_CODE,
    FORMAT_CODEX,
    FORMAT_OPENAI,
    SkippedLine,
)
from recallbox.importers.stream import (
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
COMMIT_EVERY_RECORDS = 500
"""A streamed file is committed, with its cursor, after this many records at most."""
COMMIT_EVERY_SECONDS = 0.2
"""… or once a batch has read for this long; a batch that held the write lock longer (its
writes included) makes the next one smaller (:func:`next_batch_size`): a live ``append``
waits about this long for an import."""
MIN_BATCH_RECORDS = 16
"""The smallest batch :func:`next_batch_size` makes."""
BATCH_PAUSE_SECONDS = 0.005
"""Between two batches the sync sleeps this long, so a writer waiting for the lock (it retries
every ``BUSY_POLL_S``, 2 ms) gets it before the next batch begins."""
PARTIAL_SIZE = -1
"""The ``size`` a file's ledger row keeps while its sync is in progress (never a file's size,
so the file is never taken for unchanged before it was read to the end)."""
RESYNC_PASS_KEY = "_resync_pass"
"""In a file's saved state: the sync id of a rewrite pass that was interrupted (resumed as
that pass, so the records it did not see are superseded at its end)."""
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
    named = (
        None if paths is None else [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    )
    files = files_to_import(format, named)
    if not files:
        return ImportReport(format=format, files=(), hint=no_files_hint(format, named))
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


def next_batch_size(size: int, records: int, seconds: float) -> int:
    """The record limit of the next batch: smaller in proportion when this one (``records``
    records) held the write lock over :data:`COMMIT_EVERY_SECONDS` — big records, a slow or
    busy disk: the time goes into writing and indexing, which the reading deadline does not
    see —, never below :data:`MIN_BATCH_RECORDS`; else twice as large, up to
    :data:`COMMIT_EVERY_RECORDS`."""
    if records and seconds > COMMIT_EVERY_SECONDS:
        fitting = int(records * COMMIT_EVERY_SECONDS / seconds)
        return max(MIN_BATCH_RECORDS, min(size, fitting))
    return min(COMMIT_EVERY_RECORDS, size * 2)


def _describe(exc: Exception) -> str:
    if isinstance(exc, NotFound | InvalidArgument):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"no transcript file at {exc.filename}; check the path"
    return f"{type(exc).__name__}: {exc}"


def _line_of(skipped: SkippedLine) -> int:
    return skipped.line


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class _FileSync(BatchFinish):
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
        self.skipped: list[SkippedLine] = []
        self.unknown: dict[str, int] = {}
        self.truncated = False
        self._reader_done: StreamReader | None = None  # the reader of the last batch
        self._batch_first_line = 0  # the first source line the last batch read (1-based)
        self._held = False  # the last batch left its cursor at a waiting compaction
        self._next_progress: int | None = None  # the file byte of the next progress report

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
            return self._report(STATUS_UNCHANGED, known)
        hasher, status = new_hasher(), STATUS_NEW
        if known is not None:
            status = STATUS_RESYNCED
            if self.format not in WHOLE_FILE_FORMATS and stat.st_size >= known.cursor_bytes:
                candidate = prefix_hasher(path, known.cursor_bytes)
                if candidate.hexdigest() == known.prefix_hash:
                    hasher, status = candidate, STATUS_APPENDED
        if self.format in WHOLE_FILE_FORMATS:
            with self.store.transaction():
                file = self._start(known, status)
                sync_id = file.sync_count + 1
                file = self._read_whole(file, sync_id)
                self._refuse_wrong_format(known)
                if status == STATUS_RESYNCED:
                    self._supersede_vanished(file.id, sync_id)
                self._finish_batch(file, resolve=False)
                file = self._save(file, stat, sync_id, done=True)
            return self._report(status, file)
        return self._stream(known, status, hasher, stat)

    def _start(self, known: ImportFile | None, status: str) -> ImportFile:
        """Inside the first transaction: check no rival synced the file, save its row."""
        if self._ledger_moved(known):
            raise _LedgerMoved  # another sync of this file committed first: decide again
        file = known or ImportFile(self.key, self.format)
        file = self.store.save_import_file(replace(file, path=self.key, identity=self.identity))
        if status == STATUS_RESYNCED:
            self.store.reset_import_nodes(file.id)
        return file

    def _stream(
        self, known: ImportFile | None, status: str, hasher: Any, stat: os.stat_result
    ) -> FileImportReport:
        """Read a streamed file in batches of at most :data:`COMMIT_EVERY_RECORDS` records,
        each committed with the cursor (see the module docstring)."""
        resumed = known.state.get(RESYNC_PASS_KEY) if known is not None else None
        resuming = status == STATUS_APPENDED and isinstance(resumed, int)
        rewrite = status == STATUS_RESYNCED or resuming
        sync_id = resumed if resuming else (known.sync_count if known is not None else 0) + 1
        assert isinstance(sync_id, int)
        file = known
        size = COMMIT_EVERY_RECORDS
        limit: int | None = size
        while True:
            began, records = time.monotonic(), self.counts.records
            with self.store.transaction():
                if file is known:
                    file = self._start(known, status)
                    fresh = status != STATUS_APPENDED
                elif self._ledger_moved(file):
                    raise _LedgerMoved  # a rival sync moved the cursor between two batches
                else:
                    fresh = False
                assert file is not None
                start = 0 if fresh else file.cursor_bytes
                file, done = self._read_stream(
                    file, sync_id, rewrite=rewrite, fresh=fresh, start=start, hasher=hasher,
                    limit=limit,
                )  # fmt: skip
                if start == 0:
                    self._refuse_wrong_format(known)
                if done and rewrite:
                    self._supersede_vanished(file.id, sync_id)
                self._finish_batch(file, resolve=True, full=rewrite)
                file = self._save(file, stat, sync_id, done=done, rewrite=rewrite)
            if done:
                return self._report(status, file)
            time.sleep(BATCH_PAUSE_SECONDS)
            # Trigger: a batch that ended where it began (a compaction boundary waiting for
            # its summary for more than a batch of records). Why: the next batch would start
            # there again. Outcome: it reads on until the summary, however far that is.
            size = next_batch_size(size, self.counts.records - records, time.monotonic() - began)
            limit = None if file.cursor_bytes <= start else size
            if self._held:  # the cursor went back to the waiting line: hash the prefix again
                hasher = prefix_hasher(self.path, file.cursor_bytes)

    def _refuse_wrong_format(self, known: ImportFile | None) -> None:
        """A new file whose first batch made no message and that looks like another format
        is refused (the transaction rolls back: nothing of it is kept, not even its ledger
        row, so importing it with the right format works).

        Raises:
            InvalidArgument: "wrong format? this looks like …".
        """
        counts = self.counts
        if known is not None or counts.added or counts.merged or counts.duplicates:
            return
        hint = wrong_format(self.path, self.format)
        if hint is not None:
            raise InvalidArgument(hint)

    def _save(
        self,
        file: ImportFile,
        stat: os.stat_result,
        sync_id: int,
        *,
        done: bool,
        rewrite: bool = False,
    ) -> ImportFile:
        """Save the file's row with its cursor: the whole file's stat once it was read to the
        end, :data:`PARTIAL_SIZE` (and the rewrite pass, if one is running) before."""
        state = dict(file.state)
        state.pop(RESYNC_PASS_KEY, None)
        if rewrite and not done:
            state[RESYNC_PASS_KEY] = sync_id
        return self.store.save_import_file(
            replace(
                file,
                size=stat.st_size if done else PARTIAL_SIZE,
                mtime_ns=stat.st_mtime_ns,
                tail_hash=tail_hash(self.path, file.cursor_bytes),
                sync_count=sync_id,
                state=state,
            )
        )

    def _ledger_moved(self, known: ImportFile | None) -> bool:
        """Whether the ledger row changed since ``known`` was read (inside the transaction)."""
        current = self.store.import_file(known.path if known is not None else self.key)
        if known is None or current is None:
            return (known is None) != (current is None)
        return (current.sync_count, current.cursor_bytes, current.prefix_hash) != (
            known.sync_count,
            known.cursor_bytes,
            known.prefix_hash,
        )

    def _moved_from(self) -> ImportFile | None:
        """The ledger row of this file under an old path that is gone (a moved file keeps its
        device and inode: Codex moves finished rollouts to ``archived_sessions/``)."""
        if self.identity is None:
            return None
        for candidate in self.store.import_files_with_identity(self.identity):
            if candidate.format == self.format and not Path(candidate.path).exists():
                return candidate
        return None

    def _report(self, status: str, file: ImportFile | None) -> FileImportReport:
        counts = self.counts
        unknown = dict(self.unknown)
        if status != STATUS_UNCHANGED:
            unknown = {**unknown, **self.not_imported}
        others = file.state.get(OTHER_SESSION_IDS_KEY) if file is not None else None
        return FileImportReport(
            path=self.key,
            format=self.format,
            status=status,
            records=counts.records,
            added=counts.added,
            merged=counts.merged,
            superseded=counts.superseded,
            skipped=tuple(
                SkippedRecord(s.line, s.reason) for s in sorted(self.skipped, key=_line_of)
            ),
            unknown_records=dict(sorted(unknown.items())),
            channels=tuple(counts.channels),
            truncated_tail=self.truncated,
            duplicates=counts.duplicates,
            other_session_ids=tuple(str(o) for o in others) if isinstance(others, list) else (),
        )

    # -- reading -------------------------------------------------------------------------
    def _reader(self, file: ImportFile, fresh: bool) -> StreamReader:
        state = {} if fresh else {k: v for k, v in file.state.items() if k != RESYNC_PASS_KEY}
        if self.format == FORMAT_CLAUDE_CODE:
            self.nodes = LedgerNodes(self.store, file.id)
            return ClaudeCodeReader(
                self.path, nodes=self.nodes, state=state, parent_session=self.parent_session
            )
        if self.format == FORMAT_CODEX:
            return CodexReader(self.path, state=state)
        raise InvalidArgument(f"no streaming reader for {self.format!r}")

    def _read_stream(
        self,
        file: ImportFile,
        sync_id: int,
        *,
        rewrite: bool,
        fresh: bool,
        start: int,
        hasher: Any,
        limit: int | None,
    ) -> tuple[ImportFile, bool]:
        """Read one batch: from byte ``start`` (the saved cursor; 0 and a fresh reader for a
        new or rewritten file) up to ``limit`` records. Returns the file row with its new
        cursor and reader state, and whether the file was read to its end."""
        reader = self._reader(file, fresh=fresh)
        start_line = 0 if fresh else file.cursor_line
        self._batch_first_line = start_line + 1
        cursor_bytes, cursor_line = start, start_line
        since_drain = read = 0
        # Across batches: one batch reads far less than PROGRESS_EVERY_BYTES.
        if self._next_progress is None or start == 0:
            self._next_progress = start + PROGRESS_EVERY_BYTES
        next_progress = self._next_progress
        writer = Writer(self, file.id, sync_id, rewrite=rewrite)
        done = True
        deadline = time.monotonic() + COMMIT_EVERY_SECONDS
        for line in read_lines(self.path, start_byte=start, start_line=start_line):
            if limit is not None and read and (read >= limit or time.monotonic() >= deadline):
                done = False
                break
            try:
                data = decode_line(line, reader.report)
            except TruncatedTail:
                break
            hasher.update(line.raw)
            cursor_bytes, cursor_line = line.end, line.number
            if line.raw.strip():
                read += 1
                self.counts.records += 1
                self.progress.records += 1
            if data is not None:
                reader.feed(line, data)
            since_drain += 1
            if since_drain >= DRAIN_EVERY_LINES:
                writer.write(reader.drain(final=False))
                since_drain = 0
            if cursor_bytes >= next_progress:
                self.progress.update(cursor_bytes)
                next_progress = cursor_bytes + PROGRESS_EVERY_BYTES
        self._next_progress = next_progress
        writer.write(reader.drain(final=True))
        if self.nodes is not None:
            self.nodes.flush()
        hold = reader.hold_line()
        self._held = hold is not None
        prefix_hash = hasher.hexdigest()
        if hold is not None:
            cursor_bytes, cursor_line, prefix_hash = line_start(self.path, hold)
        self._reader_done = reader
        report = reader.report
        self.skipped.extend(report.skipped)
        for name, count in report.unknown_records.items():
            self.unknown[name] = self.unknown.get(name, 0) + count
        self.truncated = report.truncated_tail
        saved = replace(
            file,
            prefix_hash=prefix_hash,
            cursor_bytes=cursor_bytes,
            cursor_line=cursor_line,
            state=reader.state(),
        )
        return saved, done
