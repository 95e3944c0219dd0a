"""The ``recallbox`` command: parse, call the Box, render text or ``--json``.

``app`` holds the group and its global options, ``commands/`` one module per command group,
``shared`` the one layer for exit codes, errors, ``--json`` and ``--db``.
"""

from __future__ import annotations

from recallbox.cli.app import VERSION, cli, main

__all__ = ["VERSION", "cli", "main"]
