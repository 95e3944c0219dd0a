"""Configuration of the embeddings tests."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # The project config registers this marker too; registering it here keeps this folder
    # runnable on its own under --strict-markers.
    config.addinivalue_line("markers", "slow: > 5 s")
