"""The inspector's inventories (issue #20): memory decay forecasts, indexed documents and code
files with stale marks, hit-log rows per day, the hit-log overview.

Person-facing reads: nothing here is written, and nothing serves an agent. A denied document or
code file is returned flagged ``denied`` (its page counts it, never names it, DESIGN §5) and its
file is never read for the stale mark.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from recallbox.code.incremental import FileStamp, stale_files
from recallbox.domains.knowledge_files import (
    Document,
    KnowledgeFile,
    read_knowledge_file,
    split_document,
)
from recallbox.domains.memory_ops import check_day, memories
from recallbox.domains.privacy import normalize_source_path
from recallbox.errors import InvalidArgument, NotFound
from recallbox.hitlog import HIT_LOG_MAX_ROWS
from recallbox.inventory_types import (
    CodeFilePage,
    CodeFileStatus,
    DayHits,
    DocumentPage,
    DocumentStatus,
    KnowledgeDocument,
    MemoryForecast,
)
from recallbox.ranking.decay import forecast
from recallbox.recall_types import HitStats
from recallbox.storage.base import EVERYTHING, Store
from recallbox.storage.values_code import CODE_KEY_SEPARATOR

STALE_CHANGED = "changed"
STALE_MISSING = "missing"
#: The longest window of days ``hit_days`` reports.
HIT_DAYS_MAX = 366
#: Between a code symbol's file path and its qualified name in a symbol id (``path::Qual``).
SYMBOL_SEPARATOR = "::"
#: The most targets and the highest never-recalled count ``hit_overview`` accepts.
HIT_TOP_MAX = 1_000
HIT_NEVER_LIMIT_MAX = 1_000_000
#: The largest page of documents or code files ``knowledge_page``/``code_page`` return.
PAGE_SIZE_MAX = 1_000


def memory_forecasts(store: Store, today: object = None) -> list[MemoryForecast]:
    """Every memory entry (MEMORY.md order) with the day decay would move it if untouched."""
    day = check_day(today)
    out = []
    for entry in memories(store, None):
        moves = forecast(entry, day)
        out.append(MemoryForecast(entry, moves.dormant_on, moves.archived_on))
    return out


def _document_stale(document: KnowledgeDocument, stored_hashes: list[str]) -> str | None:
    if document.root is None:
        return None
    path = Path(document.root) / document.source
    if not path.is_file():
        return STALE_MISSING
    read = read_knowledge_file(KnowledgeFile(document.source, path))
    if not isinstance(read, Document):
        return STALE_CHANGED
    now = [section.content_hash for section in split_document(document.source, read.text)]
    return None if now == stored_hashes else STALE_CHANGED


def _checked(store: Store, document: KnowledgeDocument) -> DocumentStatus:
    """``document`` with its stale mark (its file read and split, its sections loaded)."""
    rows = store.document_sections(document.scope, document.source)
    hashes = [row.content_hash for row in rows if not row.removed]
    return DocumentStatus(document, _document_stale(document, hashes))


def _listed(store: Store) -> tuple[list[KnowledgeDocument], set[str]]:
    """The documents with live sections, by source, and the visible sources among them."""
    visible = set(store.knowledge_sources(where=EVERYTHING))
    return [d for d in store.knowledge_documents() if d.sections], visible


def knowledge_documents(store: Store) -> list[DocumentStatus]:
    """Every indexed document with live sections, by source, with its stale mark."""
    live, visible = _listed(store)
    return [
        _checked(store, d) if d.source in visible else DocumentStatus(d, None, denied=True)
        for d in live
    ]


def knowledge_page(store: Store, page: object, page_size: object) -> DocumentPage:
    """Page ``page`` of the visible documents, only its files read for the stale marks."""
    number = _bounded("page", page, 2**62)
    size = _bounded("page_size", page_size, PAGE_SIZE_MAX)
    live, visible = _listed(store)
    shown = [d for d in live if d.source in visible]
    pages = max(1, -(-len(shown) // size))
    if number > pages:
        raise NotFound(f"there is no page {number}; the documents fill {pages} page(s)")
    window = shown[(number - 1) * size : number * size]
    checked = [_checked(store, d) for d in window]
    return DocumentPage(checked, number, pages, size, len(shown), len(live) - len(shown))


def _code_denied(path: str, exclusions: list[str]) -> bool:
    """A code file is denied by an exclusion of its basename or of its scope-relative path."""
    source = normalize_source_path(path)
    name = source.rsplit("/", 1)[-1]
    return any(e == source or ("/" not in e and e == name) for e in exclusions)


def code_files(store: Store) -> list[CodeFileStatus]:
    """Every indexed code file, by scope and path, with its symbol count and stale mark."""
    exclusions = [normalize_source_path(name) for name in store.policy().excluded_sources]
    out = []
    for scope in store.code_scopes():
        graph = store.code_graph(scope.name)
        shown = [g for g in graph if not _code_denied(g.file.path, exclusions)]
        stamps = [FileStamp(g.file.path, g.file.hash, g.file.size, g.file.mtime_ns) for g in shown]
        stale = set(stale_files(Path(scope.root), stamps))
        for item in graph:
            file = item.file
            denied = item not in shown
            mark = None
            if file.path in stale and not denied:
                exists = (Path(scope.root) / file.path).exists()
                mark = STALE_CHANGED if exists else STALE_MISSING
            out.append(
                CodeFileStatus(
                    scope.name, file.path, file.language, len(item.symbols), scope.indexed_at,
                    mark, file.error, denied=denied,
                )
            )  # fmt: skip
    return out


def code_page(store: Store, page: object, page_size: object) -> CodeFilePage:
    """Page ``page`` of the visible code files (symbol counts from the store, no symbol
    loaded), only its files stat'ed for the stale marks."""
    number = _bounded("page", page, 2**62)
    size = _bounded("page_size", page_size, PAGE_SIZE_MAX)
    exclusions = [normalize_source_path(name) for name in store.policy().excluded_sources]
    listed = [
        (scope, file, count)
        for scope in store.code_scopes()
        for file, count in store.code_file_counts(scope.name)
    ]
    shown = [item for item in listed if not _code_denied(item[1].path, exclusions)]
    pages = max(1, -(-len(shown) // size))
    if number > pages:
        raise NotFound(f"there is no page {number}; the code files fill {pages} page(s)")
    window = shown[(number - 1) * size : number * size]
    out = []
    for scope, file, count in window:
        stamp = FileStamp(file.path, file.hash, file.size, file.mtime_ns)
        mark = None
        if stale_files(Path(scope.root), [stamp]):
            exists = (Path(scope.root) / file.path).exists()
            mark = STALE_CHANGED if exists else STALE_MISSING
        out.append(
            CodeFileStatus(scope.name, file.path, file.language, count, scope.indexed_at,
                           mark, file.error)
        )  # fmt: skip
    scopes = sorted({scope.name for scope, _, _ in shown})
    return CodeFilePage(out, number, pages, size, len(shown), len(listed) - len(shown), scopes)


def hit_days(store: Store, days: object, today: object = None) -> list[DayHits]:
    """Hit-log rows per UTC day and domain for the last ``days`` days (today included)."""
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= HIT_DAYS_MAX:
        raise InvalidArgument(f"days must be a whole number from 1 to {HIT_DAYS_MAX}, got {days!r}")
    last: date = datetime.now(UTC).date() if today is None else check_day(today)
    first = last - timedelta(days=days - 1)
    return store.hit_days(since=first.isoformat(), until=(last + timedelta(days=1)).isoformat())


def code_target_path(target: str) -> str | None:
    """The file path of a code symbol target (``path::Qual.name``, maybe ``scope\x1f``-
    prefixed); ``None`` for any other id (message, section, chunk ids and memory keys hold no
    ``::``)."""
    if SYMBOL_SEPARATOR not in target:
        return None
    return target.rsplit(CODE_KEY_SEPARATOR, 1)[-1].split(SYMBOL_SEPARATOR, 1)[0]


def _bounded(name: str, value: object, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= high:
        raise InvalidArgument(f"{name} must be a whole number from 1 to {high}, got {value!r}")
    return value


def hit_overview(store: Store, top: object, never_limit: object) -> HitStats:
    """The hit-log statistics with never-recalled rows counted up to ``never_limit`` per
    corpus (no scan of a whole corpus), and no most-recalled code target of an excluded file
    (its path is all the target shows, and an excluded source is never named)."""
    stats = store.hit_stats(
        top=_bounded("top", top, HIT_TOP_MAX),
        max_rows=HIT_LOG_MAX_ROWS,
        never_limit=_bounded("never_limit", never_limit, HIT_NEVER_LIMIT_MAX),
    )
    exclusions = [normalize_source_path(name) for name in store.policy().excluded_sources]
    shown = tuple(
        t
        for t in stats.most_recalled
        if (path := code_target_path(t.target_id)) is None or not _code_denied(path, exclusions)
    )
    return replace(stats, most_recalled=shown)


__all__ = [
    "code_files",
    "code_page",
    "code_target_path",
    "hit_days",
    "hit_overview",
    "knowledge_documents",
    "knowledge_page",
    "memory_forecasts",
]
