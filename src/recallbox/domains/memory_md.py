"""``MEMORY.md``: memory entries as a markdown file a person can read and edit (DESIGN §4.3).

The file, exactly as :func:`export_memory_md` writes it::

    # Memory
    <blank>
    <!-- recallbox memory export: ... -->       (HEADER_COMMENT)
    <blank>
    ## Principles                                (one section per type, in type order PRI…MOD,
    <blank>                                       every section present, even when empty)
    - **A title**                                (one bullet per entry, in key order)
      the body, each line indented by two spaces (an empty line stays empty)
      <!-- key=PRI01 type=principle state=active state_since=2025-01-02 created=2025-01-02 last_referenced=- ref_count=0 evergreen=yes superseded_by=- -->

An entry without a title puts the first line of its body on the bullet line instead. The
metadata comment is one line holding the nine fields in this order; ``-`` is "none". Escapes
keep any text reversible: a title is written ``**…**`` with ``\\``, ``*`` and a newline as
``\\\\``, ``\\*`` and ``\\n``; a body line (or an untitled bullet's text) that starts with
``\\`` — or, for a body line, whose first non-blank characters are ``<!--``; for the bullet's
text, ``**`` — gets one leading ``\\``. So ``parse(export(entries))`` gives back the entries
and ``export(parse(file))`` the file, for any text.

Reading (:func:`parse_memory_md`) is lenient where a person edits and strict where data could
be lost. The lines of a bullet run to its metadata comment (an existing entry) or to the next
bullet, heading, text at the margin after a blank line, or the end (a **new** entry, typed by
its section; its trailing blank lines are dropped). Blank lines, the title line and the header comment are skipped; any other line is an
*unknown line*, reported with its number. *Errors* — a malformed metadata comment (a missing,
repeated, unknown or invalid field, a key that does not fit its type), a duplicate key, a
metadata comment with no bullet, a new bullet outside a known type section or with no text —
refuse the whole import (``memory_import.plan_memory_import``), each named by its line number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from recallbox.domains.memory_model import (
    MEMORY_TYPES,
    key_sort_key,
    parse_key,
    validate_state,
)
from recallbox.errors import InvalidArgument
from recallbox.types import MemoryEntry

MEMORY_MD_TITLE = "# Memory"
HEADER_COMMENT = (
    "<!-- recallbox memory export: one bullet per entry, its metadata in the comment under it. "
    "Edit a title, a body, state= or evergreen=; a bullet without a comment becomes a new "
    "entry; a removed bullet is only reported. Apply with `recallbox memory import PATH`. -->"
)
#: Section heading of each type, in MEMORY.md order.
TYPE_LABELS: dict[str, str] = {
    "principle": "Principles",
    "correction": "Corrections",
    "decision": "Decisions",
    "guideline": "Guidelines",
    "pitfall": "Pitfalls",
    "process": "Processes",
    "model": "Models",
}
#: The metadata fields of an entry's comment, in the order they are written.
METADATA_FIELDS: tuple[str, ...] = (
    "key",
    "type",
    "state",
    "state_since",
    "created",
    "last_referenced",
    "ref_count",
    "evergreen",
    "superseded_by",
)
NONE_VALUE = "-"
BODY_INDENT = "  "

_TRUE = {"yes", "true"}
_FALSE = {"no", "false"}
_BULLET_MARKERS = ("- ", "* ", "+ ")
_HEADING_RE = re.compile(r"#{1,6}(?:[ \t]|$)")
_LABEL_TYPES: dict[str, str] = {
    **{label.casefold(): name for name, label in TYPE_LABELS.items()},
    **{name: name for name in MEMORY_TYPES},
}


# -- writing ------------------------------------------------------------------------------


def _escape_title(title: str) -> str:
    return title.replace("\\", "\\\\").replace("*", "\\*").replace("\n", "\\n")


def _escape_body_line(line: str) -> str:
    if line.startswith("\\") or line.lstrip().startswith("<!--"):
        return "\\" + line
    return line


def _escape_bullet_text(line: str) -> str:
    return "\\" + line if line.startswith(("\\", "**")) else line


def _body_lines(body: str) -> list[str]:
    return [BODY_INDENT + _escape_body_line(line) if line else "" for line in body.split("\n")]


def entry_markdown(entry: MemoryEntry) -> str:
    """The bullet of ``entry`` as MEMORY.md shows it, without its metadata comment."""
    if entry.title is not None:
        lines = ["- **" + _escape_title(entry.title) + "**"]
        if entry.body:
            lines.extend(_body_lines(entry.body))
    else:
        first, _, rest = entry.body.partition("\n")
        lines = ["- " + _escape_bullet_text(first)]
        if "\n" in entry.body:
            lines.extend(_body_lines(rest))
    return "\n".join(lines)


def _value(value: object) -> str:
    if value is None:
        return NONE_VALUE
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def metadata_comment(entry: MemoryEntry) -> str:
    """The one-line metadata comment of ``entry``."""
    values = {
        "key": entry.key,
        "type": entry.type,
        "state": entry.state,
        "state_since": entry.state_since,
        "created": entry.created,
        "last_referenced": entry.last_referenced,
        "ref_count": entry.ref_count,
        "evergreen": entry.evergreen,
        "superseded_by": entry.superseded_by,
    }
    return "<!-- " + " ".join(f"{name}={_value(values[name])}" for name in METADATA_FIELDS) + " -->"


def export_order(entries: Sequence[MemoryEntry]) -> list[MemoryEntry]:
    """``entries`` in MEMORY.md order: type order PRI…MOD, then key."""
    return sorted(entries, key=lambda e: key_sort_key(e.key))


def export_memory_md(entries: Sequence[MemoryEntry]) -> str:
    """The MEMORY.md text of ``entries`` (every state; see the module docstring)."""
    ordered = export_order(entries)
    lines = [MEMORY_MD_TITLE, "", HEADER_COMMENT]
    for memory_type in MEMORY_TYPES:
        lines.extend(["", "## " + TYPE_LABELS[memory_type]])
        for entry in ordered:
            if entry.type == memory_type:
                lines.extend(["", entry_markdown(entry), BODY_INDENT + metadata_comment(entry)])
    return "\n".join(lines) + "\n"


# -- reading ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileProblem:
    """A line of MEMORY.md an import cannot use: its 1-based number, its text, why."""

    line: int
    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class ParsedEntry:
    """One bullet of MEMORY.md; ``metadata`` is ``None`` for a new bullet (no comment)."""

    line: int
    type: str
    title: str | None
    body: str
    metadata: MemoryEntry | None


@dataclass(frozen=True, slots=True)
class ParsedMemoryFile:
    """What :func:`parse_memory_md` read: entries in file order, unknown lines, errors."""

    entries: tuple[ParsedEntry, ...]
    unknown: tuple[FileProblem, ...] = ()
    errors: tuple[FileProblem, ...] = ()


def _unescape_title(text: str) -> str | None:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "*":
            return None
        if char == "\\":
            if index + 1 == len(text):
                return None
            nxt = text[index + 1]
            out.append({"\\": "\\", "*": "*", "n": "\n"}.get(nxt, "\\" + nxt))
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _parse_bullet_text(text: str) -> tuple[str | None, str | None]:
    """``(title, first body line)``: exactly one of them is not ``None``."""
    if text.startswith("\\"):
        return None, text[1:]
    if len(text) >= 4 and text.startswith("**") and text.endswith("**"):
        title = _unescape_title(text[2:-2])
        if title is not None:
            return title, None
    return None, text


def _parse_body_line(line: str) -> str:
    for indent in (BODY_INDENT, " "):
        if line.startswith(indent):
            line = line[len(indent) :]
            break
    return line[1:] if line.startswith("\\") else line


def _parse_date(text: str) -> date | None:
    if text == NONE_VALUE:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidArgument(f"not a date (YYYY-MM-DD or {NONE_VALUE}): {text!r}") from None


def _parse_metadata(line: str) -> MemoryEntry:
    """The entry a metadata comment describes (title and body empty); raises on any fault."""
    stripped = line.strip()
    if not (stripped.startswith("<!--") and stripped.endswith("-->")):
        raise InvalidArgument("a metadata comment is one line: <!-- key=… -->")
    fields: dict[str, str] = {}
    for token in stripped[4:-3].split():
        name, sep, value = token.partition("=")
        if not sep or name not in METADATA_FIELDS:
            raise InvalidArgument(f"unknown field {token!r}")
        if name in fields:
            raise InvalidArgument(f"field {name} given twice")
        fields[name] = value
    missing = [name for name in METADATA_FIELDS if name not in fields]
    if missing:
        raise InvalidArgument("missing field(s) " + ", ".join(missing))
    memory_type, _ = parse_key(fields["key"])
    if fields["type"] != memory_type:
        raise InvalidArgument(f"key {fields['key']} is a {memory_type}, not a {fields['type']}")
    evergreen = fields["evergreen"].casefold()
    if evergreen not in _TRUE | _FALSE:
        raise InvalidArgument(f"evergreen is yes or no, not {fields['evergreen']!r}")
    if not fields["ref_count"].isdigit() or not fields["ref_count"].isascii():
        raise InvalidArgument(f"ref_count is a count, not {fields['ref_count']!r}")
    superseded_by = fields["superseded_by"]
    if superseded_by != NONE_VALUE:
        parse_key(superseded_by)
    return MemoryEntry(
        key=fields["key"],
        type=memory_type,
        title=None,
        body="",
        state=validate_state(fields["state"]),
        state_since=_parse_date(fields["state_since"]),
        created=_parse_date(fields["created"]),
        last_referenced=_parse_date(fields["last_referenced"]),
        ref_count=int(fields["ref_count"]),
        evergreen=evergreen in _TRUE,
        superseded_by=None if superseded_by == NONE_VALUE else superseded_by,
    )


def _bullet_text(line: str) -> str | None:
    if line in ("-", "*", "+"):
        return ""
    return line[2:] if line.startswith(_BULLET_MARKERS) else None


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("<!--")


def _is_heading(line: str) -> bool:
    return _HEADING_RE.match(line) is not None


class _Reader:
    """The state of one pass over the lines of a MEMORY.md file."""

    def __init__(self) -> None:
        self.entries: list[ParsedEntry] = []
        self.unknown: list[FileProblem] = []
        self.errors: list[FileProblem] = []
        self.keys: set[str] = set()
        self.section: str | None = None
        self.seen_title = False
        self.bullet: tuple[int, str, str | None, list[str]] | None = None  # line, type, title

    def finish_new(self) -> None:
        """Close an open bullet that had no metadata comment: a new entry."""
        if self.bullet is None:
            return
        line, memory_type, title, body = self.bullet
        self.bullet = None
        while body and body[-1].strip() == "":
            body.pop()
        text = "\n".join(body)
        if not memory_type:
            self.errors.append(
                FileProblem(line, "", "a new bullet outside a type section (## Principles …)")
            )
        elif not text.strip():
            self.errors.append(FileProblem(line, "", "a new entry needs text under its bullet"))
        else:
            self.entries.append(ParsedEntry(line, memory_type, title, text, None))

    def start_bullet(self, number: int, text: str) -> None:
        title, first = _parse_bullet_text(text)
        body = [] if first is None else [first]
        self.bullet = (number, self.section or "", title, body)

    def close_with(self, number: int, line: str) -> None:
        """Close the open bullet with its metadata comment on line ``number``."""
        assert self.bullet is not None
        start, _, title, body = self.bullet
        self.bullet = None
        try:
            meta = _parse_metadata(line)
        except InvalidArgument as exc:
            self.errors.append(FileProblem(number, line, f"malformed metadata comment: {exc}"))
            return
        if meta.key in self.keys:
            self.errors.append(FileProblem(number, line, f"key {meta.key} appears twice"))
            return
        self.keys.add(meta.key)
        self.entries.append(ParsedEntry(start, meta.type, title, "\n".join(body), meta))

    def heading(self, number: int, line: str) -> None:
        level = len(line) - len(line.lstrip("#"))
        text = line[level:].strip()
        if level == 1 and not self.seen_title:
            self.seen_title = True
            return
        found = _LABEL_TYPES.get(text.casefold()) if level == 2 else None
        self.section = found
        if found is None:
            self.unknown.append(FileProblem(number, line, "not a memory type section"))

    def outside(self, number: int, line: str) -> None:
        """A line outside any bullet."""
        if line.strip() == "" or line == HEADER_COMMENT:
            return
        if _is_comment(line):
            if "key=" in line:
                self.errors.append(FileProblem(number, line, "a metadata comment with no bullet"))
            else:
                self.unknown.append(FileProblem(number, line, "a comment outside an entry"))
            return
        self.unknown.append(FileProblem(number, line, "not part of an entry"))


def parse_memory_md(text: str) -> ParsedMemoryFile:
    """Read a MEMORY.md text (see the module docstring); never raises.

    Only ``\\n`` ends a line: read the file with ``newline=""`` so no other character does.
    """
    reader = _Reader()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    previous = ""
    for number, line in enumerate(lines, start=1):
        bullet = _bullet_text(line)
        # A blank line then text at the margin ends a bullet, as in a markdown list.
        ends = previous.strip() == "" and line[:1] not in ("", " ", "\t")
        previous = line
        if reader.bullet is not None:
            if _is_comment(line):
                reader.close_with(number, line)
                continue
            if bullet is None and not _is_heading(line) and not ends:
                reader.bullet[3].append(_parse_body_line(line))
                continue
            reader.finish_new()
        if bullet is not None:
            reader.start_bullet(number, bullet)
        elif _is_heading(line):
            reader.heading(number, line)
        else:
            reader.outside(number, line)
    reader.finish_new()
    return ParsedMemoryFile(tuple(reader.entries), tuple(reader.unknown), tuple(reader.errors))
