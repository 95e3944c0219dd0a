"""The capability check behind every verb: is this store an implementation of that protocol?

Kept apart from :mod:`recallbox.storage.base` (the protocols themselves) so both stay short.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from recallbox.errors import StoreUnavailable

P = TypeVar("P")


def protocol_members(protocol: type) -> list[str]:
    """The names a protocol asks for (its own and inherited), sorted."""
    names: set[str] = set()
    for klass in protocol.__mro__:
        if klass in (object, Protocol) or not getattr(klass, "_is_protocol", False):
            continue
        names.update(n for n in vars(klass) if not n.startswith("_"))
        names.update(getattr(klass, "__annotations__", {}))
    return sorted(names)


def require(store: object, protocol: type[P]) -> P:
    """``store`` as a ``protocol`` it implements; the capability check behind every verb.

    Raises:
        StoreUnavailable: the backend lacks the capability (the message names what is missing).
    """
    if isinstance(store, protocol):
        return store
    missing = [name for name in protocol_members(protocol) if not hasattr(store, name)]
    raise StoreUnavailable(
        f"this storage backend ({type(store).__name__}) cannot do this: it does not implement "
        f"{protocol.__name__} (missing: {', '.join(missing) or 'unknown'})"
    )
