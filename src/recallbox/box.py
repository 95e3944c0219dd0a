"""Box: the one object that owns a store; every verb of the public API is a method.

A façade: each verb validates its arguments and delegates — to the store (``storage.base``
protocols), to a domain module (``recallbox.domains``), to the importers or to the embedding
passes. No SQL, no ranking and no rendering live here.

Two kinds of verbs (DESIGN §5): the *agent-facing* ones (``search_memory``, ``read_message``,
``search``, …) apply the privacy policy inside the store; the *person-facing audit* verbs
(:meth:`Box.threads`, :meth:`Box.messages`, :meth:`Box.message`, :meth:`Box.memories`) show
everything and are never called from an agent-facing path (an architecture test checks it).
Verbs of a domain group may live in a mixin next door (``box_curated.py``: knowledge and
memory), under the same thin-verb rule.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from recallbox.box_curated import CuratedVerbs
from recallbox.box_embed import EmbedVerbs
from recallbox.box_inspect import InspectVerbs
from recallbox.box_recall import RecallVerbs
from recallbox.box_secrets import SecretVerbs
from recallbox.domains import code_calls, history, reading
from recallbox.domains.chunking import refresh_chunks
from recallbox.domains.messages import build_row, build_row_from_mapping, check_channel
from recallbox.domains.other_memory import AnswerPool, search_memory
from recallbox.domains.privacy import file_identity, normalize_source_path
from recallbox.domains.threads import Answerer
from recallbox.embeddings import Embedder, resolve_embedder
from recallbox.errors import InvalidArgument, NotFound
from recallbox.hitlog import LAYER_LITERAL, HitRecorder
from recallbox.injection import TimeBox
from recallbox.recall import RecallPool, record_recall
from recallbox.recall_answer import RecallAnswerer
from recallbox.search import record_search
from recallbox.search import search as run_search
from recallbox.storage import POSTGRES_SCHEMES, open_store
from recallbox.storage.base import Store, SyncStore, require
from recallbox.text.windows import THREAD_SEARCH_MAX_CHARS
from recallbox.types import (
    DoctorReport,
    Generation,
    Hit,
    ImportProgress,
    ImportReport,
    Message,
    Page,
    Policy,
    Thread,
)

if TYPE_CHECKING:
    from recallbox.code.types import CodeIndexReport

MEMORY_URL = ":memory:"
#: What ``Path("postgresql://…")`` makes of a URL: a relative path SQLite would create.
COLLAPSED_POSTGRES_SCHEMES = tuple(scheme.removesuffix("/") for scheme in POSTGRES_SCHEMES)
#: ``progress(files done, files in all, path)`` of :meth:`Box.index_code`.
CodeProgress = Callable[[int, int, str], None]


def _resolve_location(path_or_url: str | Path) -> str:
    if isinstance(path_or_url, Path):
        if str(path_or_url).startswith(COLLAPSED_POSTGRES_SCHEMES):
            raise InvalidArgument(
                f"{str(path_or_url)[:80]!r} is a PostgreSQL URL made a Path (which drops a "
                "'/' of '://'); pass the URL as a str"
            )
        return str(path_or_url.expanduser())
    if not isinstance(path_or_url, str) or not path_or_url:
        raise InvalidArgument("open() needs a SQLite path, ':memory:' or a postgresql:// URL")
    if path_or_url == MEMORY_URL or "://" in path_or_url:
        return path_or_url
    return str(Path(path_or_url).expanduser())


class Box(CuratedVerbs, RecallVerbs, InspectVerbs, EmbedVerbs, SecretVerbs):
    """The recallbox API over one store. Use :func:`recallbox.open` to make one.

    A Box may be used from several threads (one connection per thread); it is not fork-safe.
    The knowledge and memory verbs (``add_document``, ``remember``, ``recall_context``, …) are
    :class:`~recallbox.box_curated.CuratedVerbs`'; ``recall``, ``expand`` and the hit-log's are
    :class:`~recallbox.box_recall.RecallVerbs`'. ``hit_log=False`` records nothing in the
    hit-log (DESIGN §5).
    """

    def __init__(
        self,
        store: Store,
        *,
        location: str,
        embedder: Embedder | None = None,
        answerer: Answerer | None = None,
        hit_log: bool = True,
    ) -> None:
        self.store = store
        self.location = location
        self.embedder = embedder
        self.hits = HitRecorder(store, enabled=hit_log)
        self._recalls = RecallPool()
        self._timebox = TimeBox()
        # The other-memory part of search_memory: (query, channel) -> text. Swap it freely.
        self.answerer: Answerer = answerer or RecallAnswerer(
            self._recall, partial(record_recall, self.hits)
        )
        self._answers = AnswerPool()

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        """Close the store (after giving a running other-memory search its timeout to end and
        writing the hit-log rows still buffered)."""
        self._answers.close()
        self._recalls.close()
        self._timebox.close()
        self.hits.close()
        self.store.close()

    def __enter__(self) -> Box:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- threads ---------------------------------------------------------------------------
    def create_thread(self, channel: str, title: str | None = None) -> Thread:
        """Create a thread (idempotent: an existing channel is returned unchanged)."""
        return self.store.ensure_thread(check_channel(channel), title)

    def threads(self) -> list[Thread]:
        """Every thread, oldest first, quarantined ones included (person-facing audit verb)."""
        return self.store.list_threads()

    def thread(self, channel: str) -> Thread:
        """One thread.

        Raises:
            NotFound: when no thread has this channel.
        """
        return history.find_thread(self.store, channel)

    def generations(self, channel: str) -> list[Generation]:
        """Every generation of a thread, in order."""
        return self.store.generations(self.thread(channel).channel)

    def schema_version(self) -> int:
        """The highest schema migration applied to the store."""
        return self.store.schema_version()

    # -- writing ---------------------------------------------------------------------------
    def append(
        self,
        channel: str,
        role: str,
        content: str = "",
        *,
        tool_calls: list[Mapping[str, Any]] | None = None,
        tool_call_id: str | None = None,
        kind: str = "message",
        model_visible: bool = True,
        pending: bool = False,
        created_at: object = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Message:
        """Append one message to ``channel`` (the thread is created when missing).

        Raises:
            InvalidArgument: for an invalid role, kind or field.
        """
        row = build_row(
            role,
            content,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            kind=kind,
            model_visible=model_visible,
            pending=pending,
            created_at=created_at,
            metadata=metadata,
        )
        return self.store.append(check_channel(channel), [row])[0]

    def append_many(self, channel: str, messages: Iterable[Mapping[str, Any]]) -> list[Message]:
        """Append many messages in one transaction (all or nothing).

        Each mapping takes :meth:`append`'s keyword arguments plus ``role``.
        """
        rows = [build_row_from_mapping(item) for item in messages]
        return self.store.append(check_channel(channel), rows)

    def messages(self, channel: str, generation: int | None = None) -> list[Message]:
        """Every message of a thread, ordered by (generation, seq), whatever its state or the
        policy (person-facing audit verb; agents read through ``read_message``).

        Raises:
            NotFound: unknown channel or generation number.
            InvalidArgument: a generation number below 1.
        """
        thread = self.thread(channel)
        return self.store.messages(thread.channel, history.check_generation(thread, generation))

    def message(self, message_id: str) -> Message:
        """One message by id, whatever its state or the policy (person-facing audit verb; the
        agent-facing read is :meth:`read_message`).

        Raises:
            NotFound: unknown id.
        """
        message = self.store.get_message(message_id)
        if message is None:
            raise NotFound(f"unknown message id {message_id!r}")
        return message

    def deliver(self, message_id: str) -> Message:
        """Mark a pending message as delivered to the model."""
        message = self.store.set_pending(message_id, False)
        refresh_chunks(self.store, message)
        return message

    def supersede(self, message_id: str, by: str) -> Message:
        """Mark ``message_id`` as superseded by message ``by``.

        Raises:
            NotFound: either id is unknown.
        """
        self.message(by)
        message = self.store.set_superseded(message_id, by)
        refresh_chunks(self.store, message)
        return message

    def compact(self, channel: str, summary: str) -> Generation:
        """Close the current generation and open the next with ``summary`` as its first message.

        The engine appends, mechanically, the closed generation's resource directory and the
        line that says how to recover a resource with ``search_memory`` (DESIGN §3.4).

        Raises:
            NotFound: unknown channel.
            InvalidArgument: ``summary`` is not a string, or is empty or whitespace only.
        """
        return history.compact(self.store, self.thread(channel), summary)

    # -- privacy policy --------------------------------------------------------------------
    def quarantine(self, channel: str) -> None:
        """Deny a thread in every recall path (the thread is created when missing)."""
        channel = check_channel(channel)
        self.store.ensure_thread(channel, None)
        self.store.set_quarantined(channel, True)

    def unquarantine(self, channel: str) -> None:
        """Release a quarantined thread.

        Raises:
            NotFound: unknown channel.
        """
        self.store.set_quarantined(check_channel(channel), False)

    def policy(self) -> Policy:
        """The stored privacy policy."""
        return self.store.policy()

    def exclude_source(self, name: str) -> None:
        """Deny a source (a file name or path) in every domain.

        Every exclusion denies the transcript threads whose file has its basename (casefolded);
        a name without ``/`` denies every document and code file with that basename, one with
        ``/`` the knowledge documents whose source equals it or ends with ``/`` + it and the
        code files whose scope-relative path equals it (DESIGN §5). When ``name`` is an existing
        file, a hard link to it is excluded too (file identity).

        Raises:
            InvalidArgument: a name with no usable basename.
        """
        self.store.set_source_excluded(normalize_source_path(name), True, file_identity(name))

    def include_source(self, name: str) -> bool:
        """Lift an exclusion made by :meth:`exclude_source`.

        Returns:
            Whether an exclusion was lifted (``False``: ``name`` was not excluded).
        """
        before = self.store.policy().excluded_sources
        self.store.set_source_excluded(normalize_source_path(name), False)
        return self.store.policy().excluded_sources != before

    # -- transcript import -------------------------------------------------------------------
    def import_transcripts(
        self,
        format: str,
        paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str] | None = None,
        *,
        progress: Callable[[ImportProgress], None] | None = None,
    ) -> ImportReport:
        """Import (or re-sync) agent transcripts: each becomes the thread ``<format>:<id>``.

        Re-importing reads only what changed (DESIGN §4.5): new records are added, a rewritten
        file is re-synced, each file imports atomically, and one bad file does not stop the
        others (its error is in the report).

        Args:
            format: ``"claude-code"``, ``"codex"`` or ``"openai"``.
            paths: files or directories; ``None`` means the format's default directories
                (``~/.claude/projects``, ``~/.codex/sessions``; OpenAI has none).
            progress: called as the import advances (bytes read over all files).

        Raises:
            InvalidArgument: unknown format.
        """
        from recallbox.importers.sync import import_transcripts

        store = require(self.store, SyncStore)
        return import_transcripts(store, format, paths, progress=progress)

    # -- health ----------------------------------------------------------------------------
    def doctor(self, *, repair: bool = False) -> DoctorReport:
        """Check every full-text index; with ``repair``, rebuild what is unhealthy first."""
        return self.store.doctor(repair=repair)

    # -- ranked search and embedding passes (DESIGN §4.1, §4.2, §4.5) -----------------------
    def search(
        self,
        query: str,
        *,
        domain: str = "sessions",
        channel: str | None = None,
        limit: int = 10,
        allow_embed: bool = True,
        scope: str | None = None,
        excluded: Sequence[str] = (),
    ) -> list[Hit]:
        """Ranked hits for ``query`` in one domain, best first (ties by id).

        Hybrid BM25 + vector ranking (DESIGN §4.2). With ``allow_embed`` and an embedder, the
        query is embedded once; without them, or when the embedder fails, keyword ranking
        stands alone. Nothing is written. ``channel`` restricts the search to one thread;
        ``scope`` (knowledge, code) to a project's scope (knowledge: plus the global library);
        ``excluded`` denies more sources for this call, matched as :meth:`exclude_source`
        matches. Any query string is accepted (no hits is ``[]``).

        Raises:
            InvalidArgument: an unknown or not yet available domain, a bad ``limit``, a bad
                ``excluded``, or a channel/scope the domain does not have.
            SchemaMismatch: stored vectors belong to another model than the embedder
                (re-embed with ``recallbox embed --rebuild``).
        """
        hits = run_search(
            self.store,
            self.embedder,
            query,
            domain=domain,
            channel=channel,
            limit=limit,
            allow_embed=allow_embed,
            scope=scope,
            excluded=excluded,
        )
        return record_search(self.hits, query, domain, hits)

    # -- thread search (DESIGN §3) ---------------------------------------------------------
    def search_memory(
        self, query: str, channel: str | None = None, *, max_chars: int = THREAD_SEARCH_MAX_CHARS
    ) -> str:
        """Literal search over every generation, bounded to ``THREAD_SEARCH_MAX_CHARS``.

        With ``channel``, that thread's history is searched and the other-memory answerer
        (:attr:`answerer`) runs concurrently; a failing or late answer
        (``OTHER_MEMORY_TIMEOUT_S``) is dropped. Without it, every thread is searched. An
        unknown or quarantined channel finds nothing. Never longer than ``max_chars`` (12 000
        by default; the MCP server asks for less, to leave room for the SDK's ``_meta``).

        Raises:
            InvalidArgument: ``query`` is not a string, ``channel`` is empty, or ``max_chars``
                is not from ``MIN_SEARCH_MEMORY_MAX_CHARS`` (the literal cap, the separator
                and the cut mark) to 12 000.
        """
        if not isinstance(query, str):
            raise InvalidArgument(f"query must be a string, got {type(query).__name__}")
        found = search_memory(
            self.store, self._answers, self.answerer, query, channel, max_chars=max_chars
        )
        self.hits.hits(
            query, domain=reading.READ_DOMAIN, layer=LAYER_LITERAL, target_ids=found.literal_ids
        )
        return found.text

    def read_message(self, message_id: str, view: str = "audit", offset: int = 0) -> str:
        """The full message as text, paged under 12 000 characters (DESIGN §3.3).

        ``view="audit"`` is everything stored (original content, arguments as given,
        metadata); ``view="model"`` is what the model saw. A page that does not reach the end
        closes with ``Continue with read_message(<id>, offset=<n>).``

        Raises:
            InvalidArgument: unknown view, or an offset that is negative or past the end.
            NotFound: unknown id, or an id of a quarantined thread (the same error).
        """
        page = reading.message_page(self.store, message_id, view, offset)
        self.hits.drill(str(message_id), verb="read_message", domain=reading.READ_DOMAIN)
        return reading.format_page(page, str(message_id))

    def message_page(self, message_id: str, view: str = "audit", offset: int = 0) -> Page:
        """:meth:`read_message` as a :class:`Page` (text, offset, next_offset, total_chars).

        Raises:
            InvalidArgument: unknown view, or an offset that is negative or past the end.
            NotFound: unknown id, or an id of a quarantined thread (the same error).
        """
        page = reading.message_page(self.store, message_id, view, offset)
        self.hits.drill(str(message_id), verb="message_page", domain=reading.READ_DOMAIN)
        return page

    # -- code (DESIGN §4.5, issue #11) -----------------------------------------------------
    def index_code(
        self,
        path: str | os.PathLike[str],
        scope: str | None = None,
        *,
        progress: CodeProgress | None = None,
    ) -> CodeIndexReport:
        """Index (or re-index) the repository at ``path`` into the code domain.

        Walks the tree (``.gitignore`` and ``.git/info/exclude`` respected; vendored,
        generated, binary, minified and oversized files skipped; symlinks never followed),
        parses with tree-sitter and stores symbols and ``calls``/``imports``/``extends`` edges
        under ``scope`` (default: the root folder's name; indexing another root under the same
        scope replaces it). Incremental: only files whose content changed are parsed again,
        deleted files drop their symbols and edges, and edges are re-resolved across the scope.
        ``progress(done, total, path)`` is called as files are done.

        Raises:
            DependencyMissing: the ``code`` extra is not installed
                (``pip install 'recallbox[code]'``); only indexing needs it.
            InvalidArgument: ``path`` is not a directory, or a bad scope.
        """
        from recallbox.domains.code_index import index_code

        return index_code(self.store, path, scope, progress=progress)

    def callers(self, symbol_id: str, depth: int = 1, *, scope: str | None = None) -> list[Hit]:
        """The symbols that call ``symbol_id`` (``path::Class.method``), up to ``depth`` hops.

        Hits of the ``code`` domain, nearest first; the privacy policy applies (a denied file's
        symbols are never callers). ``scope`` is needed only when the id is in several scopes.

        Raises:
            NotFound: unknown id, or an id of a denied file (the same error).
            InvalidArgument: the id is in several scopes and no ``scope`` was given, or a bad
                ``depth``.
        """
        return code_calls.callers(self.store, symbol_id, depth, scope=scope)

    def callees(self, symbol_id: str, *, scope: str | None = None) -> list[Hit]:
        """The symbols ``symbol_id`` calls (resolved calls), in the order of its first calls.

        Raises:
            NotFound: unknown id, or an id of a denied file (the same error).
            InvalidArgument: the id is in several scopes and no ``scope`` was given.
        """
        return code_calls.callees(self.store, symbol_id, scope=scope)

    def _other_memory_hits(self, query: str, limit: int) -> list[Hit]:
        """The default answerer's ranking: sessions, keyword leg only (DESIGN §3.2)."""
        return self.search(query, domain="sessions", limit=limit, allow_embed=False)


def open_box(path_or_url: str | Path, *, embedder: object = None, hit_log: bool = True) -> Box:
    """Open (creating when missing) the store at ``path_or_url`` and return a :class:`Box`.

    Raises:
        InvalidArgument: unusable location.
        StoreUnavailable: the location cannot be opened (not a database, damaged, unwritable).
        SchemaMismatch: the database was written by a newer recallbox.
        DependencyMissing: ``embedder`` names a model whose extra is not installed.
    """
    location = _resolve_location(path_or_url)
    resolved = resolve_embedder(cast("str | Embedder | None", embedder))
    return Box(open_store(location), location=location, embedder=resolved, hit_log=hit_log)
