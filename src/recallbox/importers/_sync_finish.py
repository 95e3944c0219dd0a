"""What makes a committed import batch consistent, split from :mod:`recallbox.importers.sync`
(which decides what to read and when to commit): branches resolved, superseded messages
marked by the next live message, titles set, chunks rebuilt, thread dates set; and the whole
read of an OpenAI-format file (a JSON document: one transaction)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from recallbox.domains.chunking import rechunk
from recallbox.importers._sync_rows import Counts, ThreadTouch, Writer, item_key
from recallbox.importers._sync_state import prefix_hasher
from recallbox.importers.openai_json import parse_openai
from recallbox.importers.records import SkippedLine
from recallbox.importers.stream import Output, StreamReader
from recallbox.storage.base import ImportFile, SyncStore
from recallbox.text.normalize import normalize_text


class BatchFinish:
    """The finishing half of a file's sync (mixed into ``sync._FileSync``)."""

    store: SyncStore
    path: Path
    counts: Counts
    source_name: str
    identity: str | None
    skipped: list[SkippedLine]
    unknown: dict[str, int]
    truncated: bool
    _reader_done: StreamReader | None
    _batch_first_line: int

    def _finish_batch(self, file: ImportFile, *, resolve: bool, full: bool = False) -> None:
        """What makes a committed batch consistent: branches resolved, superseded messages
        marked, chunks rebuilt, thread dates set."""
        if resolve and self._reader_done is not None:
            self._resolve_branches(file.id, self._reader_done, full=full)
            self._set_titles(self._reader_done, file.id)
        self._supersede_collected()
        self._rechunk()
        self._finish_threads()
        for touch in self.counts.channels.values():
            touch.committed()

    def _read_whole(self, file: ImportFile, sync_id: int) -> ImportFile:
        transcripts = parse_openai(self.path)
        writer = Writer(self, file.id, sync_id, rewrite=True)
        for transcript in transcripts:
            self.skipped.extend(transcript.skipped)
            for key, count in transcript.unknown_records.items():
                self.unknown[key] = self.unknown.get(key, 0) + count
            self.truncated = self.truncated or transcript.truncated_tail
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
        return replace(
            file,
            prefix_hash=prefix_hasher(self.path, size).hexdigest(),
            cursor_bytes=size,
            cursor_line=0,
            state={},
        )

    # -- after reading -------------------------------------------------------------------
    def _resolve_branches(self, file_id: int, reader: StreamReader, *, full: bool) -> None:
        """Resolve the trees the batch may have branched. Nodes of earlier batches are resolved
        already, so only what this batch's nodes can change is walked (``since_line``): a long
        session stays linear to import."""
        revive: list[str] = []
        since = 0 if full else self._batch_first_line
        for root, side in sorted(reader.dirty_trees(full=full)):
            for message_id, superseded in self.store.resolve_branches(
                file_id, root, side, full=full, since_line=since
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

    def touch(self, channel: str, *, own: bool = True) -> ThreadTouch:
        """A write to ``channel`` in this sync. The first creates the thread; the first that
        is ``own`` (this file imports a record, not only mirrors another file's) records this
        file as the thread's source — a copy of a transcript does not take over its thread."""
        touch = self.counts.channels.get(channel)
        if touch is None:
            created = self.store.get_thread(channel) is None
            touch = ThreadTouch(created=created, new_thread=created)
            self.counts.channels[channel] = touch
        if (own or touch.created) and not touch.source_set:
            self.store.set_thread_source(channel, self.source_name, self.identity)
            touch.source_set = True
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
