"""The storage backends the contract suite (``tests/storage/contract/``) runs against.

``store_factory(name)`` opens a store on the database called ``name`` (a fresh, empty one the
first time; the same one again on a second call, as a second connection would), and closes
every store it opened when the test ends. A new backend adds one branch to :func:`_open` and
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
    def __call__(self, name: str = "main") -> Store: ...


def _open(location: Path | str) -> Store:
    if isinstance(location, Path):
        return SQLiteStore(str(location))
    return PostgresStore(location)


@pytest.fixture
def store_factory(db_location: Callable[[str], Path | str]) -> Iterator[StoreFactory]:
    opened: list[Store] = []

    def make(name: str = "main") -> Store:
        store = _open(db_location(name))
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
