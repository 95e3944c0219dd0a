"""Privacy gate rules that are not SQL: how source names and files are matched (DESIGN §5).

A source matches by normalised name — the casefolded basename, with ``/`` and ``\\`` both
separators and ``./``/``../`` prefixes ignored — and by file identity (device and inode), so a
hard link to an excluded file is excluded too. The SQL side of the gate lives in the backend
(``THREAD_ALLOWED_SQL``) and is applied on every read path.
"""

from __future__ import annotations

import os
from pathlib import Path

from recallbox.errors import InvalidArgument
from recallbox.text.normalize import normalize_text


def normalize_source_name(name: str) -> str:
    """``"./Docs\\\\Secrets.MD"`` → ``"secrets.md"``.

    Raises:
        InvalidArgument: for an empty name.
    """
    if not isinstance(name, str):
        raise InvalidArgument("a source name must be a string")
    cleaned = normalize_text(name).strip().replace("\\", "/").rstrip("/")
    base = cleaned.rsplit("/", 1)[-1]
    if base in ("", ".", ".."):
        raise InvalidArgument(f"not a usable source name: {name!r}")
    return base.casefold()


def file_identity(path: str | os.PathLike[str]) -> str | None:
    """``"<device>:<inode>"`` of an existing file (shared by its hard links), else ``None``."""
    try:
        st = Path(path).expanduser().stat()
    except (OSError, ValueError):
        return None
    return f"{st.st_dev}:{st.st_ino}"
