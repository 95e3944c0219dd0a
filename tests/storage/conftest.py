"""The storage backends the contract suite (``tests/storage/contract/``) runs against.

``store_factory(name)`` opens a store on the database called ``name`` (a fresh, empty one the
first time; the same one again on a second call, as a second connection would), and closes
every store it opened when the test ends. A new backend adds one branch to :func:`_open` and
one entry to :data:`BACKENDS`; the contract suite itself does not change.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest

from recallbox.storage.base import Store
from recallbox.storage.sqlite.store import SQLiteStore

BACKENDS = ("sqlite",)


class StoreFactory(Protocol):
    def __call__(self, name: str = "main") -> Store: ...


def _open(backend: str, workdir: Path, name: str) -> Store:
    if backend == "sqlite":
        return SQLiteStore(str(workdir / f"{name}.db"))
    raise AssertionError(f"no such backend {backend!r}")


@pytest.fixture(params=BACKENDS)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    opened: list[Store] = []

    def make(name: str = "main") -> Store:
        store = _open(str(request.param), tmp_path, name)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
