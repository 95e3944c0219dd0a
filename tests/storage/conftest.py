"""The storage backends the contract suite (``tests/storage/contract/``) runs against.

``store_factory(name)`` opens a store on the database called ``name`` (a fresh, empty one the
first time; the same one again on a second call, as a second connection would; with
``fresh=True`` the stores already open on it are closed and it is emptied first: a new example
of a property test), and closes every store it opened when the test ends. A new backend adds one branch to :func:`_open` and
one entry to ``tests/conftest.py``'s ``BACKENDS``; the contract suite itself does not change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import pytest

from recallbox.storage.base import Store
from recallbox.storage.postgres.store import PostgresStore
from recallbox.storage.sqlite.store import SQLiteStore


class StoreFactory(Protocol):
    def __call__(self, name: str = "main", *, fresh: bool = False) -> Store: ...


def _open(location: Path | str) -> Store:
    if isinstance(location, Path):
        return SQLiteStore(str(location))
    return PostgresStore(location)


@pytest.fixture
def store_factory(db_location: Callable[..., Path | str]) -> Iterator[StoreFactory]:
    opened: dict[str, list[Store]] = {}

    def make(name: str = "main", *, fresh: bool = False) -> Store:
        if fresh:  # a new example of a property test: the old stores go, the database empties
            for old in opened.pop(name, []):
                old.close()
        store = _open(db_location(name, fresh=fresh))
        opened.setdefault(name, []).append(store)
        return store

    yield make
    for stores in opened.values():
        for store in stores:
            store.close()
