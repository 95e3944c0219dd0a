"""Derive the tables of ``recallbox.text.fts_tokenize_data`` from SQLite's own FTS5 tokenizer.

Run ``.venv/bin/python tests/text/fts5_tables.py`` to regenerate the data module from the SQLite
that apsw bundles; ``tests/text/test_fts_tokenize.py`` derives the tables again on every run and
requires them to equal the committed ones.

Every Unicode scalar value ``c`` (U+0000–U+10FFFF without the surrogates) is probed through
apsw's FTS5 tokenizer API calling the built-in ``unicode61 remove_diacritics 2``:

* ``"a" + c + "a"`` is one token exactly when ``c`` may continue a token; that token minus its
  two ``a`` is the fold of ``c`` (lower case, diacritic removed — possibly nothing);
* ``c`` alone is a token exactly when ``c`` may start one.

The probe finds (and the tests assert) that every character that may start a token may also
continue one, that the characters that may only continue a token are a small set of combining
marks that fold to nothing, and that a fold is at most one character — so a token is a maximal
run ``[start][continue]*`` folded character by character, which is what the Python tokenizer
implements.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import apsw

MAX_CODE_POINT = 0x10FFFF
SURROGATES = range(0xD800, 0xE000)
TOKENIZER = "unicode61"
TOKENIZER_ARGS = ["remove_diacritics", "2"]
DATA_MODULE = (
    Path(__file__).resolve().parents[2] / "src" / "recallbox" / "text" / "fts_tokenize_data.py"
)


@dataclass(frozen=True)
class Tables:
    """What the probe found: separators, continue-only characters and the fold of the rest."""

    separators: frozenset[int]
    continue_only: frozenset[int]
    fold: dict[int, str]  # code point -> fold, only where the fold is not the character itself
    sqlite_version: str


def scalar_values() -> list[int]:
    """Every Unicode scalar value (no surrogates)."""
    return [c for c in range(MAX_CODE_POINT + 1) if c not in SURROGATES]


def reference_tokenizer(conn: apsw.Connection, *args: str) -> apsw.FTS5Tokenizer:
    """SQLite's built-in tokenizer ``args`` (e.g. ``"porter", "unicode61", ...``) via apsw."""
    return conn.fts5_tokenizer(args[0], list(args[1:]))


def reference_tokens(tokenizer: apsw.FTS5Tokenizer, text: str) -> list[str]:
    """The tokens FTS5 emits for ``text`` (document mode)."""
    return [
        str(t)
        for t in tokenizer(
            text.encode("utf-8"),
            apsw.FTS5_TOKENIZE_DOCUMENT,
            None,
            include_offsets=False,
            include_colocated=False,
        )
    ]


def derive(conn: apsw.Connection | None = None) -> Tables:
    """Probe every code point through SQLite's ``unicode61 remove_diacritics 2``."""
    own = conn is None
    connection = apsw.Connection(":memory:") if conn is None else conn
    try:
        tok = reference_tokenizer(connection, TOKENIZER, *TOKENIZER_ARGS)
        separators: set[int] = set()
        continue_only: set[int] = set()
        fold: dict[int, str] = {}
        for code in scalar_values():
            char = chr(code)
            inside = reference_tokens(tok, "a" + char + "a")
            alone = reference_tokens(tok, char)
            if len(inside) == 1:
                folded = inside[0][1:-1]
                if folded != char:
                    fold[code] = folded
                if not alone:
                    continue_only.add(code)
                elif alone != [folded]:
                    raise AssertionError(f"U+{code:04X}: alone {alone!r}, inside {inside!r}")
            elif inside == ["a", "a"] and not alone:
                separators.add(code)
            else:
                raise AssertionError(f"U+{code:04X}: alone {alone!r}, inside {inside!r}")
        return Tables(
            frozenset(separators), frozenset(continue_only), fold, apsw.sqlite_lib_version()
        )
    finally:
        if own:
            connection.close()


def ranges(codes: frozenset[int]) -> list[tuple[int, int]]:
    """``codes`` as sorted inclusive ``(first, last)`` runs."""
    out: list[tuple[int, int]] = []
    for code in sorted(codes):
        if out and out[-1][1] == code - 1:
            out[-1] = (out[-1][0], code)
        else:
            out.append((code, code))
    return out


def fold_runs(fold: dict[int, str]) -> list[tuple[int, int, int, int, int]]:
    """Non-empty folds as ``(first, count, step, target, target_step)`` runs: the character
    ``first + i·step`` folds to ``target + i·target_step`` for ``i < count``."""
    items = sorted((code, ord(out)) for code, out in fold.items() if out)
    runs: list[tuple[int, int, int, int, int]] = []
    i = 0
    while i < len(items):
        first, target = items[i]
        if i + 1 < len(items):
            step = items[i + 1][0] - first
            target_step = items[i + 1][1] - target
            count = 2
            while (
                i + count < len(items)
                and items[i + count][0] == first + count * step
                and items[i + count][1] == target + count * target_step
            ):
                count += 1
            if count > 2 or (step == 1 and target_step in (0, 1)):
                runs.append((first, count, step, target, target_step))
                i += count
                continue
        runs.append((first, 1, 1, target, 0))
        i += 1
    return runs


def _rows(values: list[str], per_line: int) -> str:
    lines = ["    " + " ".join(values[i : i + per_line]) for i in range(0, len(values), per_line)]
    return "\n".join(lines)


def render(tables: Tables) -> str:
    """The source of ``recallbox/text/fts_tokenize_data.py`` for ``tables``."""
    sep = [f"(0x{a:X}, 0x{b:X})," for a, b in ranges(tables.separators)]
    cont = [f"0x{c:X}," for c in sorted(tables.continue_only)]
    runs = [f"(0x{a:X}, {n}, {s}, 0x{t:X}, {ts})," for a, n, s, t, ts in fold_runs(tables.fold)]
    empty = sorted(c for c, out in tables.fold.items() if not out)
    if empty != sorted(tables.continue_only):
        raise AssertionError("the characters that fold to nothing are not the continue-only set")
    return f'''"""Character tables of SQLite FTS5's ``unicode61 remove_diacritics 2`` tokenizer (generated).

Generated by ``tests/text/fts5_tables.py`` from SQLite {tables.sqlite_version} by probing every
Unicode scalar value through the built-in tokenizer; do not edit by hand. The test suite derives
the tables again and requires them to be equal. ``recallbox.text.fts_tokenize`` explains the
rules they feed.
"""

from __future__ import annotations

# fmt: off

#: The SQLite version the tables were derived from.
SQLITE_VERSION = "{tables.sqlite_version}"

#: Inclusive ranges of the code points that separate tokens (everything else is a token
#: character, unassigned code points included: FTS5's category table is fixed).
SEPARATOR_RANGES: tuple[tuple[int, int], ...] = (
{_rows(sep, 5)}
)

#: Combining marks that continue a token but never start one; they fold to nothing.
CONTINUE_ONLY: tuple[int, ...] = (
{_rows(cont, 10)}
)

#: ``(first, count, step, target, target_step)``: code point ``first + i·step`` folds to
#: ``target + i·target_step`` (``i < count``); code points not listed fold to themselves.
FOLD_RUNS: tuple[tuple[int, int, int, int, int], ...] = (
{_rows(runs, 3)}
)
'''


def main() -> int:
    """Regenerate the data module; print what was found."""
    tables = derive()
    DATA_MODULE.write_text(render(tables), encoding="utf-8")
    print(
        f"SQLite {tables.sqlite_version}: {len(scalar_values())} code points, "
        f"{len(tables.separators)} separators, {len(tables.continue_only)} continue-only, "
        f"{len(tables.fold)} folds -> {DATA_MODULE}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
