"""Dates a query names, as day spans a message's ``created_at`` can be compared with (#21).

:func:`query_dates` reads, in English:

* absolute days: ``March 16, 2022``, ``16 March 2022``, ``the 5th of May, 2023``,
  ``2023-05-08``; a day without a year (``on 14 August``) is the latest such day not after
  ``now``;
* months: ``May 2023``, ``in August`` (the latest August not after ``now``);
* years: ``in 2021`` (a four-digit year from :data:`MIN_YEAR` to :data:`MAX_YEAR`);
* relative dates, resolved against ``now`` (the newest message's ``created_at``) and only when
  the query names no absolute date (``the week before August 3`` is anchored to August 3, not
  to now): ``today``, ``yesterday``, ``N days/weeks/months/years ago``, ``last/this
  week/month/year``, ``last weekend``, ``last <weekday>``.

A month word counts only next to a day or a year, or after a preposition (``in``, ``during``,
…), so ``may`` the verb and ``march`` the verb are not dates. Without ``now``, a date that needs
it is skipped. No input string raises; the result is at most :data:`MAX_DATE_SPANS` spans.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

#: Years outside this range are not read as years (``in 3000 steps``).
MIN_YEAR = 1900
MAX_YEAR = 2100
#: At most this many spans per query (a pasted page stays cheap to score).
MAX_DATE_SPANS = 8
#: Queries are read up to this many characters.
MAX_DATE_QUERY_CHARS = 2_000

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_PREPOSITION = r"(?:in|during|since|until|till|before|after|by|of|from|early|late|mid|end of)"

_ISO_RE = re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b")
_DAY_MONTH_RE = re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?\b(?!-)", re.IGNORECASE)
_MONTH_DAY_RE = re.compile(
    rf"\b{_MONTH}\s+{_DAY}\b(?!\s*(?::|\.\d|am\b|pm\b))(?:,?\s+{_YEAR})?", re.IGNORECASE
)
_MONTH_YEAR_RE = re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE)
_MONTH_ALONE_RE = re.compile(rf"\b{_PREPOSITION}\s+(?:the\s+)?{_MONTH}\b", re.IGNORECASE)
_YEAR_RE = re.compile(r"(?<![\d,.\-/])\b(?P<year>\d{4})\b(?![\d,.\-/])")
_AGO_RE = re.compile(
    r"\b(?P<n>\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")\s+(?P<unit>day|week|month|year)s?\s+ago\b",
    re.IGNORECASE,
)
# the units of "last week", "this weekend", "past month" (the anchor check reads the same)
_RELATIVE_UNITS = r"week(?:end)?|month|year"
_LAST_THIS_RE = re.compile(
    rf"\b(?P<which>last|this|past)\s+(?P<unit>{_RELATIVE_UNITS})\b", re.IGNORECASE
)
_LAST_WEEKDAY_RE = re.compile(
    r"\b(?:last|on|this past)\s+(?P<weekday>" + "|".join(_WEEKDAYS) + r")\b", re.IGNORECASE
)
_TODAY_RE = re.compile(r"\b(?P<word>today|yesterday)\b", re.IGNORECASE)
# every word a date that needs ``now`` holds (a month or weekday, a relative word), whole (the
# parsers above read them whole: ``novu`` or ``decide`` name no month, and looking ``now`` up
# costs a read per thread, 11 ms at a million messages)
_ANCHOR_RE = re.compile(
    rf"\b(?:today|yesterday|ago|(?:last|this|past)\s+(?:{_RELATIVE_UNITS})|"
    + "|".join(sorted([*_MONTHS, *_WEEKDAYS], key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True, order=True)
class DateSpan:
    """The days from ``first`` to ``last`` (both included) a query names."""

    first: date
    last: date

    @property
    def days(self) -> int:
        """How many days the span covers."""
        return (self.last - self.first).days + 1


def _month_span(year: int, month: int) -> DateSpan:
    return DateSpan(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _year_ok(year: int) -> bool:
    return MIN_YEAR <= year <= MAX_YEAR


def _day(year: int, month: int, day: int) -> DateSpan | None:
    try:
        value = date(year, month, day)
    except ValueError:
        return None
    return DateSpan(value, value)


def _latest_day(month: int, day: int, today: date | None) -> DateSpan | None:
    """The latest ``month``/``day`` not after ``today``."""
    if today is None:
        return None
    for year in (today.year, today.year - 1, today.year - 2, today.year - 4):
        span = _day(year, month, day)
        if span is not None and span.first <= today:
            return span
    return None


def _latest_month(month: int, today: date | None) -> DateSpan | None:
    if today is None:
        return None
    year = today.year if month <= today.month else today.year - 1
    return _month_span(year, month)


def _shift_months(value: date, months: int) -> date:
    index = value.year * 12 + value.month - 1 - months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(value.day, calendar.monthrange(year, month + 1)[1]))


def _absolute(text: str, today: date | None) -> tuple[list[DateSpan], list[tuple[int, int]]]:
    """Absolute spans of ``text`` and the character ranges they used."""
    spans: list[DateSpan] = []
    used: list[tuple[int, int]] = []

    def free(match: re.Match[str]) -> bool:
        return all(match.end() <= a or match.start() >= b for a, b in used)

    def take(match: re.Match[str], span: DateSpan | None) -> None:
        used.append(match.span())
        if span is not None:
            spans.append(span)

    for match in _ISO_RE.finditer(text):
        year, month, day = (int(match[g]) for g in ("year", "month", "day"))
        take(match, _day(year, month, day) if _year_ok(year) else None)
    for pattern in (_DAY_MONTH_RE, _MONTH_DAY_RE):
        for match in pattern.finditer(text):
            if not free(match):
                continue
            month, day = _MONTHS[match["month"].lower()], int(match["day"])
            if match["year"] and _year_ok(int(match["year"])):
                take(match, _day(int(match["year"]), month, day))
            elif not 1 <= day <= 31:
                continue
            else:
                take(match, _latest_day(month, day, today))
    for match in _MONTH_YEAR_RE.finditer(text):
        if free(match) and _year_ok(int(match["year"])):
            take(match, _month_span(int(match["year"]), _MONTHS[match["month"].lower()]))
    for match in _MONTH_ALONE_RE.finditer(text):
        if free(match):
            take(match, _latest_month(_MONTHS[match["month"].lower()], today))
    for match in _YEAR_RE.finditer(text):
        if free(match) and _year_ok(int(match["year"])):
            year = int(match["year"])
            take(match, DateSpan(date(year, 1, 1), date(year, 12, 31)))
    return spans, used


def _relative(text: str, today: date) -> list[DateSpan]:
    spans: list[DateSpan] = []
    for match in _TODAY_RE.finditer(text):
        day = today if match["word"].lower() == "today" else today - timedelta(days=1)
        spans.append(DateSpan(day, day))
    for match in _AGO_RE.finditer(text):
        raw = match["n"].lower()
        n = _NUMBER_WORDS[raw] if raw in _NUMBER_WORDS else int(raw)
        unit = match["unit"].lower()
        if unit == "day":
            day = today - timedelta(days=n)
            spans.append(DateSpan(day, day))
        elif unit == "week":
            day = today - timedelta(weeks=n)
            spans.append(DateSpan(day - timedelta(days=3), day + timedelta(days=3)))
        elif unit == "month":
            spans.append(_month_span(*_year_month(_shift_months(today, n))))
        elif _year_ok(today.year - n):
            spans.append(DateSpan(date(today.year - n, 1, 1), date(today.year - n, 12, 31)))
    for match in _LAST_THIS_RE.finditer(text):
        this = match["which"].lower() == "this"
        unit = match["unit"].lower()
        if unit == "weekend":
            saturday = today - timedelta(days=(today.weekday() - 5) % 7 or 7)
            spans.append(DateSpan(saturday, saturday + timedelta(days=1)))
        elif unit == "week":
            monday = today - timedelta(days=today.weekday() + (0 if this else 7))
            spans.append(DateSpan(monday, monday + timedelta(days=6)))
        elif unit == "month":
            spans.append(_month_span(*_year_month(today if this else _shift_months(today, 1))))
        else:
            year = today.year if this else today.year - 1
            spans.append(DateSpan(date(year, 1, 1), date(year, 12, 31)))
    for match in _LAST_WEEKDAY_RE.finditer(text):
        back = (today.weekday() - _WEEKDAYS[match["weekday"].lower()]) % 7 or 7
        day = today - timedelta(days=back)
        spans.append(DateSpan(day, day))
    return spans


def _year_month(value: date) -> tuple[int, int]:
    return value.year, value.month


def _as_date(now: datetime | date | None) -> date | None:
    if now is None:
        return None
    if isinstance(now, datetime):
        return (now.astimezone(UTC) if now.tzinfo else now).date()
    return now


def may_need_anchor(query: str) -> bool:
    """False when :func:`query_dates` surely reads the same spans whatever ``now`` is (the
    query names no month, weekday or relative date), so ``now`` need not be looked up."""
    return isinstance(query, str) and _ANCHOR_RE.search(query[:MAX_DATE_QUERY_CHARS]) is not None


def query_dates(query: str, *, now: datetime | date | None = None) -> tuple[DateSpan, ...]:
    """The day spans ``query`` names, in the order found (absolute ones first), distinct.

    ``now`` anchors a date without a year and the relative dates; without it they are skipped.
    Never raises; at most :data:`MAX_DATE_SPANS`.
    """
    if not isinstance(query, str) or not query:
        return ()
    text = query[:MAX_DATE_QUERY_CHARS]
    today = _as_date(now)
    try:
        spans, _ = _absolute(text, today)
        if not spans and today is not None:
            spans = _relative(text, today)
    except (ValueError, OverflowError, KeyError):
        return ()
    return tuple(dict.fromkeys(spans))[:MAX_DATE_SPANS]


def day_distance(day: date, spans: tuple[DateSpan, ...]) -> int | None:
    """Days from ``day`` to the nearest span (0 inside one); ``None`` without spans."""
    if not spans:
        return None
    best: int | None = None
    for span in spans:
        if span.first <= day <= span.last:
            return 0
        gap = (span.first - day).days if day < span.first else (day - span.last).days
        best = gap if best is None else min(best, gap)
    return best
