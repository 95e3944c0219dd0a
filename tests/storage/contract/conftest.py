"""Fixtures of the contract suite: a fresh store of every backend (``store_factory``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from recallbox.storage.base import Store


@pytest.fixture
def store(store_factory: Callable[[], Store]) -> Store:
    return store_factory()
