"""The ``code`` domain (DESIGN §4.5, issue #11): symbols ranked for "where is X and who calls it".

A search runs two legs over the symbol corpus (``recallbox.domains.hybrid``): BM25 over the
identifier-split symbol text (:func:`code_lexical`: ``searchMemory``, ``search_memory`` and
``Box.search_memory`` all query the words ``search memory``) and the nearest vectors of
signature and docstring, fused with :data:`~recallbox.ranking.fusion.THRESHOLD_CODE`. Then:

1. **exact names first**: a one-word query naming a symbol (its name, or a dotted tail of its
   qualified name) puts those symbols first, the one with the most callers first — the
   definition, not a wrapper of the same name;
2. **tests demoted**: unless the query is about tests (:data:`TEST_QUERY_WORDS`), a symbol in
   a test file (:func:`is_test_path`) has both legs weighed by :data:`TEST_FILE_WEIGHT` — its
   BM25 score before the keyword leg is normalised over the candidates, its vector similarity
   in the hybrid score — so a test ranks below a definition that matches about as well;
3. the rest by missing identifier literals, score, id (as every hybrid domain).

The top hit carries up to :data:`TOP_HIT_CALLERS` one-hop callers, and every hit says whether
its file changed since it was indexed (``Hit.stale``: stat, then hash — never a block). The
stored index is all a search reads: no tree-sitter, no ``code`` extra.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from recallbox.code.incremental import FileStamp, stale_files
from recallbox.domains.base import SearchContext
from recallbox.domains.buckets import fit_items
from recallbox.domains.hybrid import fuse_legs
from recallbox.ranking.fusion import (
    EXPLAIN_FUSED,
    EXPLAIN_LEG,
    THRESHOLD_CODE,
    Fused,
    hybrid_score,
)
from recallbox.storage.base import CORPUS_CODE_SYMBOL, LexicalQuery
from recallbox.storage.values_code import CodeSymbolRow, parse_code_key
from recallbox.text.fts_query import FtsQuery
from recallbox.text.identifiers import split_identifier
from recallbox.text.render import cut_stored, one_line
from recallbox.text.windows import WINDOW_CHARS
from recallbox.types import Hit

DOMAIN = "code"
#: Keyword candidates per search (the BM25 pool min-max normalisation runs over).
KEYWORD_CANDIDATES = 200
#: Nearest-vector candidates per search.
VECTOR_CANDIDATES = 200
#: Symbols with the query's exact name fetched besides the legs (so none is missed).
NAME_CANDIDATES = 50
#: One-hop callers the top hit carries (DESIGN §4.5).
TOP_HIT_CALLERS = 5
#: The weight of a test file's symbol on both legs unless the query is about tests.
TEST_FILE_WEIGHT = 0.5
#: Query words that make a query about tests (no demotion then).
TEST_QUERY_WORDS = frozenset(
    {"test", "tests", "testing", "spec", "specs", "fixture", "fixtures", "mock", "mocks",
     "mocking", "stub", "stubs", "conftest", "pytest", "unittest"}
)  # fmt: skip
#: Directories whose files are tests.
TEST_DIRECTORIES = frozenset(
    {"test", "tests", "testing", "__tests__", "spec", "specs", "e2e", "fixtures", "__mocks__",
     "mocks", "testdata"}
)  # fmt: skip
#: File names of tests (casefolded, ``fnmatch``).
TEST_FILE_PATTERNS = (
    "test_*", "*_test.*", "*_tests.*", "*.test.*", "*.spec.*", "*_spec.*", "conftest.py",
)  # fmt: skip
#: ``Hit.explain`` keys this domain adds.
EXPLAIN_TEST_WEIGHT = "test_weight"
EXPLAIN_CALLERS = "callers"
EXPLAIN_EXACT_NAME = "exact_name"
#: The leg of an exact-name symbol neither leg returned.
LEG_NAME = "name"

_NAME_PARTS = re.compile(r"::|->|[.:/#\\]")


def code_lexical(query: FtsQuery) -> LexicalQuery:
    """The query's phrases with every word split into its identifier words (as the index was)."""
    phrases = []
    for phrase in query.lexical.phrases:
        words = tuple(word for token in phrase for word in split_identifier(token))
        if words:
            phrases.append(words)
    return LexicalQuery(tuple(phrases))


def is_test_path(path: str) -> bool:
    """Whether a scope-relative path is a test file (by directory or by file name)."""
    *folders, name = path.casefold().split("/")
    if any(folder in TEST_DIRECTORIES for folder in folders):
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in TEST_FILE_PATTERNS)


def in_test_file(key: str) -> bool:
    """Whether the symbol of a public key is defined in a test file."""
    parsed = parse_code_key(key)
    return parsed is not None and is_test_path(parsed[1].split("::", 1)[0])


def about_tests(query: FtsQuery) -> bool:
    """Whether the query asks about tests (one of :data:`TEST_QUERY_WORDS` among its words)."""
    return any(word in TEST_QUERY_WORDS for term in query.terms for word in split_identifier(term))


def exact_name(query: FtsQuery) -> tuple[tuple[str, ...], str] | None:
    """For a one-word query: its identifier words and the words of its last name part (what a
    symbol's ``name_seg`` must equal); ``None`` for other queries."""
    if len(query.terms) != 1:
        return None
    words = tuple(split_identifier(query.terms[0]))
    parts = [part for part in _NAME_PARTS.split(query.terms[0]) if part]
    last = split_identifier(parts[-1]) if parts else []
    return (words, " ".join(last)) if words and last else None


def names_symbol(row: CodeSymbolRow, words: Sequence[str]) -> bool:
    """Whether ``words`` are the symbol's name, or a dotted tail of its qualified name."""
    parts = row.qualname.split("#", 1)[0].split(".") if row.qualname else [row.name]
    wanted = list(words)
    return any(split_identifier(".".join(parts[i:])) == wanted for i in range(len(parts)))


@dataclass(frozen=True, slots=True)
class _Scored:
    """A row as fusion reads it: distinct symbols never collapse as duplicates."""

    row: CodeSymbolRow

    @property
    def content_hash(self) -> str:
        return self.row.key


@dataclass(frozen=True, slots=True)
class _Ranked:
    row: CodeSymbolRow
    score: float
    fused: Fused | None
    weight: float
    exact: bool

    def sort_key(self) -> tuple[object, ...]:
        if self.exact:
            return (0, self.weight < 1.0, -self.row.callers, -self.score, self.row.key)
        misses = self.fused.literal_misses if self.fused is not None else 0
        return (1, misses, -self.score, self.row.key)


def _rank(
    rows: Mapping[str, CodeSymbolRow],
    fused: Sequence[Fused],
    named: Sequence[str],
    words: Sequence[str] | None,
    demote: bool,
) -> list[_Ranked]:
    by_id = {f.id: f for f in fused}
    ranked = []
    for key in dict.fromkeys([*by_id, *named]):
        row = rows.get(key)
        if row is None:
            continue
        weight = TEST_FILE_WEIGHT if demote and is_test_path(row.path) else 1.0
        found = by_id.get(key)
        score = 0.0
        if found is not None:
            vector = found.vector * weight if found.vector is not None else None
            score = hybrid_score(found.keyword, vector) if weight < 1.0 else found.score
        exact = words is not None and names_symbol(row, words)
        if found is not None or exact:
            ranked.append(_Ranked(row, score, found, weight, exact))
    return sorted(ranked, key=_Ranked.sort_key)


def stale_files_of(rows: Sequence[CodeSymbolRow]) -> set[tuple[str, str]]:
    """``(root, path)`` of the hits' files that changed since they were indexed."""
    by_root: dict[str, dict[str, FileStamp]] = {}
    for row in rows:
        stamp = FileStamp(row.path, row.file_hash, row.file_size, row.file_mtime_ns)
        by_root.setdefault(row.root, {})[row.path] = stamp
    return {
        (root, path)
        for root, stamps in by_root.items()
        for path in stale_files(Path(root), stamps.values())
    }


def _explain(item: _Ranked) -> dict[str, float | str]:
    out: dict[str, float | str] = (
        item.fused.explain() if item.fused is not None else {EXPLAIN_LEG: LEG_NAME}
    )
    out[EXPLAIN_FUSED] = item.score
    out[EXPLAIN_CALLERS] = float(item.row.callers)
    if item.weight < 1.0:
        out[EXPLAIN_TEST_WEIGHT] = item.weight
    if item.exact:
        out[EXPLAIN_EXACT_NAME] = 1.0
    return out


def symbol_hit(
    row: CodeSymbolRow,
    *,
    score: float,
    stale: set[tuple[str, str]],
    explain: Mapping[str, float | str],
    fused: Fused | None = None,
    callers: Sequence[str] = (),
) -> Hit:
    """The hit of one symbol: its id, scope, file and lines, its snippet, its stale flag."""
    return Hit(
        id=row.symbol_id,
        score=score,
        text=row.snippet,
        domain=DOMAIN,
        source=row.path,
        lines=(row.start_line, row.end_line),
        keyword=fused.keyword if fused is not None else None,
        vector=fused.vector if fused is not None else None,
        explain=explain,
        scope=row.scope,
        stale=(row.root, row.path) in stale,
        callers=tuple(callers),
    )


def symbol_ids(keys: Sequence[str]) -> list[str]:
    """The symbol ids of public keys (unparseable keys dropped)."""
    return [parsed[1] for key in keys if (parsed := parse_code_key(key)) is not None]


def search(ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
    """Rank the visible symbols for ``query`` (see the module docstring), best first."""
    store, where = ctx.store, ctx.where
    lexical = code_lexical(query)
    name = exact_name(query)
    demote = not about_tests(query)
    with store.read_snapshot():
        keyword: dict[str, float] | None = None
        named: list[str] = []
        if ctx.use_keyword and not lexical.is_empty:
            pool = max(limit, KEYWORD_CANDIDATES)
            ranked_keys = store.keyword_ranked(CORPUS_CODE_SYMBOL, lexical, where=where, limit=pool)
            keyword = {
                k: s * (TEST_FILE_WEIGHT if demote and in_test_file(k) else 1.0)
                for k, s in ranked_keys
            }
            if name is not None:
                named = store.code_name_matches(name[1], where=where, limit=NAME_CANDIDATES)
        fused, scored = fuse_legs(
            keyword,
            ctx.query_vector,
            nearest=store.nearest,
            distances=store.distances,
            rows_of=lambda ids: {
                k: _Scored(r) for k, r in store.code_symbol_rows(ids, where=where).items()
            },
            text_of=lambda item: f"{item.row.qualname}\n{item.row.signature}\n{item.row.doc}",
            literals=query.literals,
            where=where,
            pool=max(limit, VECTOR_CANDIDATES),
            limit=max(limit, KEYWORD_CANDIDATES, VECTOR_CANDIDATES),
            threshold=THRESHOLD_CODE,
        )
        rows = {key: item.row for key, item in scored.items()}
        rows.update(store.code_symbol_rows([k for k in named if k not in rows], where=where))
        ranked = _rank(rows, fused, named, name[0] if name else None, demote)
        ranked = ranked[:limit]
        callers = (
            store.code_calls([ranked[0].row.key], incoming=True, where=where, limit=TOP_HIT_CALLERS)
            if ranked
            else {}
        )
    stale = stale_files_of([item.row for item in ranked])
    return [
        symbol_hit(
            item.row,
            score=item.score,
            stale=stale,
            explain=_explain(item),
            fused=item.fused,
            callers=symbol_ids(callers.get(item.row.key, [])) if index == 0 else (),
        )
        for index, item in enumerate(ranked)
    ]


# --- the bucket -----------------------------------------------------------------------------


def _item_head(hit: Hit, rank: int) -> str:
    lines = f":{hit.lines[0]}-{hit.lines[1]}" if hit.lines is not None else ""
    parts = [f"[symbol_id={one_line(hit.id, len(hit.id))}"]
    if hit.scope is not None:
        parts.append(f"scope={one_line(hit.scope, len(hit.scope))}")
    if hit.source is not None:
        parts.append(f"source={one_line(hit.source, len(hit.source))}{lines}")
    parts.append(f"rank={rank}")
    parts.append(f"stale={'yes' if hit.stale else 'no'}")
    return " ".join(parts) + "]"


def _item(hit: Hit, rank: int) -> str:
    lines = [_item_head(hit, rank)]
    if hit.callers:
        lines.append("callers: " + ", ".join(one_line(c, len(c)) for c in hit.callers))
    lines.append(cut_stored(hit.text, WINDOW_CHARS))
    return "\n".join(lines)


def render_code_bucket(hits: Sequence[Hit], budget_chars: int) -> str:
    """The code bucket: one item per symbol, best first — a head line with the symbol id, its
    scope, ``file:lines`` (its original is the file), its rank and its stale flag, the line of
    its callers when it has them, then at most :data:`~recallbox.text.windows.WINDOW_CHARS` of
    its source, escaped. Items that do not fit ``budget_chars`` are counted in a last line;
    ``""`` for no hits."""
    items = [_item(hit, rank) for rank, hit in enumerate(hits, start=1)]
    return fit_items(items, budget_chars)


class CodeDomain:
    """The ``code`` entry of the registry."""

    name = DOMAIN
    owner: str | None = CORPUS_CODE_SYMBOL
    threshold = THRESHOLD_CODE

    def search(self, ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
        """See :func:`search`."""
        return search(ctx, query, limit=limit)

    def render_bucket(self, ctx: SearchContext, hits: Sequence[Hit], budget_chars: int) -> str:
        """See :func:`render_code_bucket`."""
        del ctx
        return render_code_bucket(hits, budget_chars)


CODE = CodeDomain()

__all__ = [
    "CODE",
    "DOMAIN",
    "TEST_FILE_WEIGHT",
    "TEST_QUERY_WORDS",
    "TOP_HIT_CALLERS",
    "CodeDomain",
    "about_tests",
    "code_lexical",
    "exact_name",
    "is_test_path",
    "names_symbol",
    "render_code_bucket",
    "search",
    "stale_files_of",
    "symbol_hit",
    "symbol_ids",
]
