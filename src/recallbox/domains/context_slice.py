"""The pure part of ``recall_context``: an exact, bounded slice of entries (DESIGN §4.4).

The store finds the candidate **sections** by BM25 (memory: the type sections of MEMORY.md,
scored by their best entry's ``s × state weight``; knowledge: the stored sections of the
document). :func:`slice_context` then:

1. walks the sections best first and keeps at most :data:`RECALL_CONTEXT_MAX_SECTIONS` of
   those holding at least one entry that shares vocabulary with the query;
2. scores every entry of the kept sections with BM25 over those entries (the same constants
   as FTS5, ``recallbox.ranking.bm25``) times the entry's weight (its state weight for
   memory), and drops every entry that shares no vocabulary with the query — precision over
   head-of-file bias, so the bottom entry of a long section surfaces when it is the match;
3. takes entries best first while the slice stays within :data:`RECALL_CONTEXT_MAX_TOKENS`
   (``recallbox.estimate_tokens``), skipping any that would not fit; when even the best entry
   alone does not fit, it is cut at its end and followed by :data:`ENTRY_TRUNCATED_MARKER`,
   and it is the whole slice;
4. writes them verbatim in on-disk order: each kept section's label (its heading line; for
   memory the ``## Pitfalls`` line of MEMORY.md), then its entries in the order the source
   has them; two list items are joined by a newline, anything else by a blank line, and two
   sections by a blank line.

**What an entry is.** In a knowledge section, an entry is a block of
``recallbox.text.markdown.split_entries``: a list item with its nested lines, a paragraph, a
fenced code block or a heading line; the section's own heading line is its label, not an
entry, and its words count as vocabulary of every entry under it (an entry under "## Rollback"
answers "rollback"). In memory, an entry is one memory entry as MEMORY.md shows it
(``memory_md.entry_markdown``: its bullet and body, without the metadata comment).

**Vocabulary** is what the keyword index sees: ``tokenize`` turns a text into index tokens
(default :func:`index_tokens`: unicode61-style words, casefolded, diacritics removed, CJK runs
as bigrams) and a query term matches where its tokens occur in a row. A backend with a
stemming tokenizer passes its own so the slice agrees with the index that chose the sections.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from recallbox.domains.memory_md import TYPE_LABELS, entry_markdown, export_order
from recallbox.domains.memory_model import MEMORY_TYPES, entry_weight
from recallbox.ranking.bm25 import phrase_count, scope_scores
from recallbox.text.cjk import cjk_count, segment
from recallbox.text.markdown import split_entries
from recallbox.text.normalize import normalize_text
from recallbox.text.tokens import estimate_tokens
from recallbox.types import MemoryEntry

#: Token budget of one ``recall_context`` result (``estimate_tokens``).
RECALL_CONTEXT_MAX_TOKENS = 2_000
#: Sections one ``recall_context`` result draws from, at most.
RECALL_CONTEXT_MAX_SECTIONS = 3
#: Knowledge sections the store hands to the slice, best BM25 first (a section whose entries
#: miss the query's vocabulary gives its place to the next one).
RECALL_CONTEXT_CANDIDATE_SECTIONS = 12
#: Memory entries the store hands to the slice: those the keyword index matched, best first.
#: The slice's cost grows with its candidates; the store never passes the whole memory.
RECALL_CONTEXT_CANDIDATE_ENTRIES = 300
#: Ends an entry cut to fit the budget.
ENTRY_TRUNCATED_MARKER = "[…entry truncated]"
#: Joins two list items of one section.
ITEM_SEPARATOR = "\n"
#: Joins other entries, a label and its first entry's block, and two sections.
BLOCK_SEPARATOR = "\n\n"
#: Characters per token of non-CJK text (``recallbox.text.tokens``).
_CHARS_PER_TOKEN = 4

Tokenizer = Callable[[str], Sequence[str]]
_WORD_RE = re.compile(r"[^\W_]+")


def index_tokens(text: str) -> list[str]:
    """unicode61-style tokens of ``text``: letters and digits, casefolded, without diacritics;
    each CJK run as its bigrams (``recallbox.text.cjk``)."""
    folded = segment(normalize_text(text)).casefold()
    if not folded.isascii():
        decomposed = unicodedata.normalize("NFKD", folded)
        folded = "".join(char for char in decomposed if not unicodedata.combining(char))
    return _WORD_RE.findall(folded)


@dataclass(frozen=True, slots=True)
class ContextEntry:
    """One entry of a section: ``id`` names it (a memory key; ``<section id>:<line>`` for
    knowledge), ``order`` its place in the source, ``weight`` multiplies its score."""

    id: str
    text: str
    order: int
    weight: float = 1.0
    is_item: bool = False


@dataclass(frozen=True, slots=True)
class ContextSection:
    """A candidate section: its BM25 ``score``, its ``order`` in the source, its ``label``
    line (``None``: no label) and ``vocabulary`` that counts for each of its entries."""

    id: str
    label: str | None
    entries: tuple[ContextEntry, ...]
    score: float
    order: int
    vocabulary: str = ""


@dataclass(frozen=True, slots=True)
class ContextSlice:
    """The slice: ``content`` (``""`` when no entry overlaps the query), the ids of the
    ``sections`` and ``entries`` it holds in on-disk order, and whether an entry was cut."""

    content: str
    sections: tuple[str, ...] = ()
    entries: tuple[str, ...] = ()
    truncated: bool = False


def knowledge_section(
    section_id: str,
    content: str,
    *,
    start_line: int,
    heading_line: int | None,
    score: float,
) -> ContextSection:
    """A stored knowledge section as a candidate: its heading line is the label."""
    lines = content.split("\n")
    label = lines[heading_line - start_line] if heading_line is not None else None
    entries = tuple(
        ContextEntry(f"{section_id}:{e.start_line}", e.text, e.start_line, is_item=e.is_item)
        for e in split_entries(content, start_line, skip_line=heading_line)
    )
    return ContextSection(section_id, label, entries, score, start_line, label or "")


def memory_sections(candidates: Sequence[tuple[MemoryEntry, float]]) -> list[ContextSection]:
    """Memory candidates (entry, BM25 ``s``) grouped into MEMORY.md's type sections.

    A section scores its best entry's ``s × state weight``; entries keep export order.
    """
    scores = {entry.key: score for entry, score in candidates}
    by_type: dict[str, list[MemoryEntry]] = {}
    for entry in export_order([entry for entry, _ in candidates]):
        by_type.setdefault(entry.type, []).append(entry)
    sections = []
    for index, memory_type in enumerate(MEMORY_TYPES):
        entries = tuple(
            ContextEntry(e.key, entry_markdown(e), n, entry_weight(e), is_item=True)
            for n, e in enumerate(by_type.get(memory_type, ()))
        )
        if entries:
            best = max(scores[e.id] * e.weight for e in entries)
            label = "## " + TYPE_LABELS[memory_type]
            sections.append(ContextSection(memory_type, label, entries, best, index))
    return sections


def _phrases(terms: Sequence[str], tokenize: Tokenizer) -> list[tuple[str, ...]]:
    phrases = []
    for term in terms:
        phrase = tuple(tokenize(term))
        if phrase and phrase not in phrases:
            phrases.append(phrase)
    return phrases


@dataclass(frozen=True, slots=True)
class _Scored:
    section: ContextSection
    entry: ContextEntry
    score: float


class _Tokens:
    """Each entry's tokens (with its section's vocabulary), computed once per slice."""

    def __init__(self, tokenize: Tokenizer, phrases: Sequence[tuple[str, ...]]) -> None:
        self.tokenize = tokenize
        self.phrases = phrases
        self.cache: dict[tuple[str, str], tuple[list[str], frozenset[str]]] = {}

    def of(self, section: ContextSection, entry: ContextEntry) -> list[str]:
        return self._get(section, entry)[0]

    def shares(self, section: ContextSection, entry: ContextEntry) -> bool:
        """True when a query phrase occurs in the entry (its section's vocabulary counted)."""
        tokens, vocabulary = self._get(section, entry)
        return any(
            (phrase[0] in vocabulary if len(phrase) == 1 else phrase_count(tokens, phrase) > 0)
            for phrase in self.phrases
        )

    def _get(
        self, section: ContextSection, entry: ContextEntry
    ) -> tuple[list[str], frozenset[str]]:
        key = (section.id, entry.id)
        found = self.cache.get(key)
        if found is None:
            extra = self.tokenize(section.vocabulary) if section.vocabulary else ()
            tokens = [*self.tokenize(entry.text), *extra]
            found = self.cache[key] = (tokens, frozenset(tokens))
        return found


def _matching(sections: Sequence[ContextSection], tokens: _Tokens) -> list[_Scored]:
    """Entries of ``sections`` sharing vocabulary with the query, with their scores.

    BM25 over every entry of ``sections`` (``N``, average length); only the rows that match
    need their phrase counts.
    """
    everything = [(s, e) for s in sections for e in s.entries]
    rows = [(s, e) for s, e in everything if tokens.shares(s, e)]
    if not rows:
        return []
    n_tokens = sum(len(tokens.of(s, e)) for s, e in everything)
    freqs = [[phrase_count(tokens.of(s, e), p) for p in tokens.phrases] for s, e in rows]
    df = [sum(1 for row in freqs if row[i]) for i in range(len(tokens.phrases))]
    lengths = [len(tokens.of(s, e)) for s, e in rows]
    scores = scope_scores(len(everything), n_tokens, df, list(zip(lengths, freqs, strict=True)))
    return [_Scored(s, e, score * e.weight) for (s, e), score in zip(rows, scores, strict=True)]


def _choose_sections(
    sections: Sequence[ContextSection], tokens: _Tokens, limit: int
) -> list[ContextSection]:
    chosen: list[ContextSection] = []
    for section in sorted(sections, key=lambda s: (-s.score, s.order, s.id)):
        if len(chosen) == limit:
            break
        if any(tokens.shares(section, e) for e in section.entries):
            chosen.append(section)
    return chosen


class _Budget:
    """Exact ``estimate_tokens`` bookkeeping: non-CJK and CJK characters add up."""

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self.plain = 0
        self.cjk = 0

    def tokens(self, plain: int, cjk: int) -> int:
        return math.ceil(plain / _CHARS_PER_TOKEN) + cjk

    def fits(self, *texts: str) -> bool:
        cjk = sum(cjk_count(t) for t in texts)
        plain = sum(len(t) for t in texts) - cjk
        return self.tokens(self.plain + plain, self.cjk + cjk) <= self.max_tokens

    def take(self, *texts: str) -> None:
        cjk = sum(cjk_count(t) for t in texts)
        self.cjk += cjk
        self.plain += sum(len(t) for t in texts) - cjk


def cut_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` whose ``estimate_tokens`` is at most ``max_tokens``."""
    if max_tokens < 0:
        return ""
    # estimate_tokens grows with the prefix, and a prefix of max_tokens tokens holds at most
    # 4 characters per token: binary search within that.
    low, high = 0, min(len(text), _CHARS_PER_TOKEN * max_tokens)
    while low < high:
        mid = (low + high + 1) // 2
        if estimate_tokens(text[:mid]) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    return text[:low]


def _truncated(best: _Scored, max_tokens: int) -> ContextSlice:
    """The best entry alone, cut at its end to fit, then the marker (its label if room)."""
    tail = "\n" + ENTRY_TRUNCATED_MARKER
    label = best.section.label
    head = label + BLOCK_SEPARATOR if label is not None else ""
    if not _Budget(max_tokens).fits(head, best.entry.text[:1], tail):
        head = ""  # a label too long to leave room for the entry is dropped
    budget = _Budget(max_tokens)
    budget.take(head, tail)
    room = max_tokens - budget.tokens(budget.plain, budget.cjk)
    while room >= 0:
        body = cut_to_tokens(best.entry.text, room)
        if budget.fits(body):  # the sum's rounding can cost one token more than the parts
            return ContextSlice(head + body + tail, (best.section.id,), (best.entry.id,), True)
        room -= 1
    return ContextSlice("")


def _unlabelled(section: ContextSection) -> ContextSection:
    return ContextSection(
        section.id, None, section.entries, section.score, section.order, section.vocabulary
    )


def _render(picked: Sequence[_Scored]) -> str:
    by_section: dict[str, list[_Scored]] = {}
    for item in sorted(picked, key=lambda p: (p.section.order, p.section.id, p.entry.order)):
        by_section.setdefault(item.section.id, []).append(item)
    blocks = []
    for items in by_section.values():
        parts: list[str] = []
        unlabelled = any(item.section.label is None for item in items)
        label = None if unlabelled else items[0].section.label
        if label is not None:
            parts.extend([label, BLOCK_SEPARATOR])
        for index, item in enumerate(items):
            if index:
                both_items = items[index - 1].entry.is_item and item.entry.is_item
                parts.append(ITEM_SEPARATOR if both_items else BLOCK_SEPARATOR)
            parts.append(item.entry.text)
        blocks.append("".join(parts))
    return BLOCK_SEPARATOR.join(blocks)


def slice_context(
    terms: Sequence[str],
    sections: Sequence[ContextSection],
    *,
    max_tokens: int = RECALL_CONTEXT_MAX_TOKENS,
    max_sections: int = RECALL_CONTEXT_MAX_SECTIONS,
    tokenize: Tokenizer = index_tokens,
) -> ContextSlice:
    """The slice of ``sections`` for the query ``terms`` (see the module docstring).

    ``terms`` are the query's words as the keyword leg keeps them
    (``recallbox.text.fts_query.build_fts_query(query).terms``).
    """
    phrases = _phrases(terms, tokenize)
    if not phrases or max_tokens <= 0:
        return ContextSlice("")
    tokens = _Tokens(tokenize, phrases)
    chosen = _choose_sections(sections, tokens, max_sections)
    ranked = sorted(
        _matching(chosen, tokens),
        key=lambda s: (-s.score, s.section.order, s.entry.order),
    )
    if not ranked:
        return ContextSlice("")
    budget = _Budget(max_tokens)
    picked: list[_Scored] = []
    labelled: set[str] = set()
    for item in ranked:
        section = item.section
        # What the entry adds, at most: a separator (not for the first), its section's label
        # and the blank line under it (the first time the section appears), the entry.
        label = [section.label, BLOCK_SEPARATOR] if section.label is not None else []
        extra = [BLOCK_SEPARATOR] if picked else []
        if section.id not in labelled:
            extra.extend(label)
        if budget.fits(*extra, item.entry.text):
            budget.take(*extra, item.entry.text)
        elif not picked and budget.fits(item.entry.text):
            budget.take(item.entry.text)  # the best entry fits only without its label
            item = _Scored(_unlabelled(section), item.entry, item.score)
        elif not picked:
            return _truncated(item, max_tokens)
        else:
            continue
        picked.append(item)
        labelled.add(section.id)
    content = _render(picked)
    ordered = sorted(picked, key=lambda p: (p.section.order, p.section.id, p.entry.order))
    section_ids = tuple(dict.fromkeys(p.section.id for p in ordered))
    return ContextSlice(content, section_ids, tuple(p.entry.id for p in ordered))
