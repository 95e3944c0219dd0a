"""Privacy gate rules that are not SQL: how source names and files are matched (DESIGN §5).

A source matches by normalised name — the casefolded basename, with ``/`` and ``\\`` both
separators and ``./``/``../`` prefixes ignored — and by file identity (device and inode), so a
hard link to an excluded file is excluded too. For knowledge documents an exclusion holding a
``/`` matches by path instead (:func:`knowledge_source_excluded`), and ``MEMORY.md`` denotes
the memory entries (:func:`memory_excluded`). The SQL side of the gate lives in the backend
(``THREAD_ALLOWED_SQL``) and is applied on every read path.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
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


#: The source name that denotes the memory entries (and every source with that basename).
MEMORY_SOURCE_NAME = "memory.md"


def normalize_source_path(name: str) -> str:
    """``"./Docs\\\\Guide/./Secrets.MD"`` → ``"docs/guide/secrets.md"``.

    Text normalisation, ``\\`` read as ``/``, leading ``./`` and ``../`` dropped, empty and
    ``.`` segments dropped, casefolded (DESIGN §5 "Matching a source").

    Raises:
        InvalidArgument: for a name with no usable basename.
    """
    normalize_source_name(name)  # the same refusals
    cleaned = normalize_text(name).strip().replace("\\", "/")
    parts = [part for part in cleaned.split("/") if part not in ("", ".")]
    while parts and parts[0] == "..":
        parts.pop(0)
    return "/".join(parts).casefold()


def knowledge_source_excluded(source: str, exclusion: str) -> bool:
    """True when ``exclusion`` denies the knowledge document stored as ``source``.

    An exclusion without ``/`` matches every document with that basename; one with ``/``
    matches a document whose source equals it or ends with ``/`` + it (both normalised).
    File identity (hard links) is matched by the store, not here.
    """
    wanted = normalize_source_path(exclusion)
    stored = normalize_source_path(source)
    if "/" not in wanted:
        return stored.rsplit("/", 1)[-1] == wanted
    return stored == wanted or stored.endswith("/" + wanted)


def memory_excluded(exclusions: Iterable[str]) -> bool:
    """True when one of ``exclusions`` is ``MEMORY.md`` (any case, ``./``, ``\\``): the memory
    entries are denied."""
    return any(normalize_source_path(name) == MEMORY_SOURCE_NAME for name in exclusions)


def knowledge_source_denied(
    source: str,
    identity: str | None,
    exclusions: Iterable[str],
    excluded_identities: Collection[str] = (),
) -> bool:
    """True when the knowledge document ``source`` (file identity ``identity``) is denied:
    by name (:func:`knowledge_source_excluded`) or as a hard link of an excluded file."""
    if identity is not None and identity in excluded_identities:
        return True
    return any(knowledge_source_excluded(source, name) for name in exclusions)


def call_exclusions(excluded: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A verb's per-call ``excluded=`` as (normalised exclusions, file identities).

    Each name is normalised as :meth:`Box.exclude_source` does (``normalize_source_path``); a
    name that is an existing file also yields its identity, so a hard link to it is denied.
    Per-call exclusions only add to the stored policy (DESIGN §5).

    Raises:
        InvalidArgument: ``excluded`` is a bare string, or holds a non-string or unusable name.
    """
    if isinstance(excluded, str) or not isinstance(excluded, Iterable):
        raise InvalidArgument(
            "excluded must be a list of source names (e.g. excluded=['secrets.md']), "
            f"got {type(excluded).__name__}"
        )
    names: list[str] = []
    identities: list[str] = []
    for name in excluded:
        if not isinstance(name, str):
            raise InvalidArgument(f"excluded holds source names, got {type(name).__name__}")
        names.append(normalize_source_path(name))
        identity = file_identity(name)
        if identity is not None:
            identities.append(identity)
    return tuple(dict.fromkeys(names)), tuple(dict.fromkeys(identities))
