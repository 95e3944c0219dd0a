"""The embedding verbs (DESIGN §4.2, §9), mixed into ``recallbox.Box``: nothing is embedded at
write time; these passes write the vectors (``recallbox.embed_pass``)."""

from __future__ import annotations

from collections.abc import Callable

from recallbox.embed_pass import EMBED_BATCH_SIZE, EmbedReport, embed_report
from recallbox.embeddings import Embedder
from recallbox.storage.base import Store


class EmbedVerbs:
    """``embed_all`` and ``embed_report`` (part of :class:`recallbox.Box`)."""

    store: Store
    embedder: Embedder | None

    def embed_all(
        self,
        *,
        rebuild: bool = False,
        lazy: bool = False,
        batch_size: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Embed every row that has no vector of the configured model yet; returns the count
        (:meth:`embed_report` says how many of each corpus).

        Raises:
            InvalidArgument: no embedder is configured.
            SchemaMismatch: vectors of another model are stored and ``rebuild`` is false.
        """
        report = self.embed_report(
            rebuild=rebuild, lazy=lazy, batch_size=batch_size, progress=progress
        )
        return report.total

    def embed_report(
        self,
        *,
        rebuild: bool = False,
        lazy: bool = False,
        batch_size: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> EmbedReport:
        """:meth:`embed_all`, reporting the vectors written per corpus: every registered domain
        with vectors in turn (memory entries, knowledge sections, messages, transcript chunks).

        Resumable and interruptible: each batch is committed on its own. ``rebuild`` first
        deletes the vectors of any other model; ``lazy`` embeds only what recall drilled into
        (the hit-log). ``progress(done, total)`` is called after each batch of each corpus.

        Raises:
            InvalidArgument: no embedder is configured.
            SchemaMismatch: vectors of another model are stored and ``rebuild`` is false.
        """
        size = EMBED_BATCH_SIZE if batch_size is None else batch_size
        return embed_report(
            self.store,
            self.embedder,
            rebuild=rebuild,
            drilled_only=lazy,
            batch_size=size,
            progress=progress,
        )
