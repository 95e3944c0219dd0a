"""Settings for the entrypoints (CLI, MCP server). The library itself takes arguments only.

Precedence: explicit argument > ``RECALLBOX_DB`` > ``$RECALLBOX_HOME/recallbox.db``, where
``RECALLBOX_HOME`` defaults to the platform's user data directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "recallbox"
DB_FILENAME = "recallbox.db"
ENV_HOME = "RECALLBOX_HOME"
ENV_DB = "RECALLBOX_DB"


@dataclass(frozen=True, slots=True)
class Settings:
    """Where recallbox keeps its data."""

    home: Path
    db: str


def default_home() -> Path:
    """``$RECALLBOX_HOME`` or the platform's user data directory."""
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def load_settings(db: str | None = None) -> Settings:
    """Resolve the settings; ``db`` (e.g. ``--db``) wins over the environment."""
    home = default_home()
    location = db or os.environ.get(ENV_DB) or str(home / DB_FILENAME)
    return Settings(home=home, db=location)


MCP_HTTP_PORT = 8766
"""``recallbox mcp --http`` listens here by default (the web inspector has 8765)."""
ENV_MCP_TOKEN = "RECALLBOX_MCP_TOKEN"
"""The bearer token of ``recallbox mcp --http`` (required for a non-loopback ``--host``)."""
ENV_HIT_LOG = "RECALLBOX_HIT_LOG"
"""``0`` (or ``false``, ``no``, ``off``) turns the hit-log off in the CLI, MCP server and hooks."""
HIT_LOG_OFF_VALUES = frozenset({"0", "false", "no", "off"})


def hit_log_enabled() -> bool:
    """False when ``RECALLBOX_HIT_LOG`` turns the hit-log off (entrypoints pass it to ``open``)."""
    return os.environ.get(ENV_HIT_LOG, "").strip().lower() not in HIT_LOG_OFF_VALUES
