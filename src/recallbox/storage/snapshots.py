"""Read snapshots' serial numbers, and the caches that forget a snapshot when it ends.

A search reads one snapshot (``snapshot()`` of either backend's pool), and caches what it
computed on it by the snapshot's serial (``snapshot_id()``): a term's plan, the rows it read.
Nothing reads an ended snapshot's entries again, so each such cache registers a hook here
(:func:`on_snapshot_end`) and drops them at once: a search process then holds what its
current searches need, not the leftovers of the last few (which grew with the history).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, MutableMapping
from typing import Any

SnapshotHook = Callable[[int], None]
logger = logging.getLogger(__name__)

_serials = itertools.count(1)
_hooks: list[SnapshotHook] = []


def next_serial() -> int:
    """A serial unique in this process (they only grow)."""
    return next(_serials)


def on_snapshot_end(hook: SnapshotHook) -> SnapshotHook:
    """Call ``hook(serial)`` whenever a snapshot ends (a decorator)."""
    _hooks.append(hook)
    return hook


def forget_with_snapshot(cache: MutableMapping[tuple[Any, ...], Any]) -> None:
    """Drop ``cache``'s entries of a snapshot when it ends: keys are tuples whose first item
    is the snapshot's serial. ``list(cache)`` copies the keys at once (other threads' searches
    insert concurrently)."""

    def forget(serial: int) -> None:
        for key in list(cache):
            if key[0] == serial:
                cache.pop(key, None)

    on_snapshot_end(forget)


def snapshot_ended(serial: int) -> None:
    """Run the hooks: the snapshot ``serial`` ended. A hook that fails is logged and the
    others still run (this runs as a snapshot closes: an error here would hide the read's)."""
    for hook in _hooks:
        try:
            hook(serial)
        except Exception:  # a cache that failed to forget costs memory, never an answer
            logger.exception("a snapshot-end hook failed")
