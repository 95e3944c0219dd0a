"""The arguments of a code index run, checked before anything is opened or written (issue #11):
the repository root and the scope name. Pure: the CLI checks them before it opens the
database, so a missing folder or a bad name creates nothing."""

from __future__ import annotations

import os
from pathlib import Path

from recallbox.errors import InvalidArgument
from recallbox.text.normalize import normalize_text

#: The largest scope name accepted (a project name, not a document).
MAX_SCOPE_CHARS = 200


def check_scope(scope: object, default: str | None = None) -> str:
    """A scope name: normalised text, stripped, non-empty (``None``: ``default``).

    Raises:
        InvalidArgument: not a string, empty, or too long.
    """
    if scope is None and default is not None:
        scope = default
    if not isinstance(scope, str):
        raise InvalidArgument(f"scope must be a project name, got {type(scope).__name__}")
    name = normalize_text(scope).strip()
    if not name or len(name) > MAX_SCOPE_CHARS:
        raise InvalidArgument(
            f"scope must be a non-empty project name of at most {MAX_SCOPE_CHARS} characters"
        )
    return name


def check_root(path: object) -> Path:
    """The repository root ``path`` names, resolved.

    Raises:
        InvalidArgument: not a path, or not a directory.
    """
    if not isinstance(path, str | os.PathLike):
        raise InvalidArgument(f"path must be a directory path, got {type(path).__name__}")
    root = Path(path).expanduser()
    if not root.is_dir():
        raise InvalidArgument(f"not a directory: {str(path)[:200]!r}")
    return root.resolve()


__all__ = ["MAX_SCOPE_CHARS", "check_root", "check_scope"]
