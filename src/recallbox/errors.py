"""The whole exception tree of recallbox.

Every error a caller may want to catch derives from :class:`RecallError` and is exported from
``recallbox``. Messages say what to do next.
"""

from __future__ import annotations


class RecallError(Exception):
    """Base class of every recallbox error."""


class InvalidArgument(RecallError, ValueError):
    """An argument has a value recallbox does not accept (role, kind, domain, view, ...)."""


class InvalidQuery(InvalidArgument):
    """A query cannot be run as given."""


class NotFound(RecallError, LookupError):
    """The id, channel, handle or key does not exist (or is not visible)."""


class StoreUnavailable(RecallError):
    """The store cannot be opened or reached."""


class SchemaMismatch(RecallError):
    """The database was written by a newer recallbox, or embeddings of another model are mixed."""


class DependencyMissing(RecallError, ImportError):
    """An optional dependency (an extra) is not installed; the message names the install command."""


class UnsupportedFilter(RecallError):
    """A backend cannot apply a requested filter (it never drops it silently)."""


class TimedOut(RecallError, TimeoutError):
    """A read ran past its deadline and the store stopped it (a recall domain's time limit)."""


__all__ = [
    "DependencyMissing",
    "InvalidArgument",
    "InvalidQuery",
    "NotFound",
    "RecallError",
    "SchemaMismatch",
    "StoreUnavailable",
    "TimedOut",
    "UnsupportedFilter",
]
