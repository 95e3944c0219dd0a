"""Query parameters and paged lists: every list the inspector shows is one page of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from starlette.requests import Request

from recallbox import InvalidArgument, NotFound

T = TypeVar("T")
#: The longest query the search page runs (longer is refused, not cut).
MAX_QUERY_CHARS = 1_000


def int_param(request: Request, name: str, default: int, minimum: int) -> int:
    """The integer query parameter ``name`` (``default`` when absent).

    Raises:
        InvalidArgument: not an integer, or below ``minimum``.
    """
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18 or int(raw) < minimum:
        raise InvalidArgument(f"{name} must be a whole number of at least {minimum}")
    return int(raw)


def text_param(request: Request, name: str, limit: int = MAX_QUERY_CHARS) -> str:
    """The text query parameter ``name`` ('' when absent).

    Raises:
        InvalidArgument: longer than ``limit`` characters.
    """
    value = request.query_params.get(name, "")
    if len(value) > limit:
        raise InvalidArgument(f"{name} is longer than {limit} characters; shorten it")
    return value


@dataclass(frozen=True, slots=True)
class Pager(Generic[T]):
    """Page ``number`` (1-based) of ``pages`` over ``total`` items; ``items`` is that page."""

    items: Sequence[T]
    number: int
    pages: int
    total: int
    size: int

    @property
    def first_index(self) -> int:
        """The 0-based index of the page's first item in the whole list."""
        return (self.number - 1) * self.size


def paginate(items: Sequence[T], number: int, size: int) -> Pager[T]:
    """Page ``number`` of ``items`` in pages of ``size``.

    Raises:
        NotFound: a page past the last one.
    """
    pages = max(1, -(-len(items) // size))
    if number > pages:
        raise NotFound(f"there is no page {number}; this list has {pages} page(s)")
    start = (number - 1) * size
    return Pager(items[start : start + size], number, pages, len(items), size)
