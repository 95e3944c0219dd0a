"""Which source a ``recall_context`` call means, and its result (DESIGN §4.4, §5).

``source="MEMORY.md"`` means the memory entries, whether or not a file of that name exists:
a request without ``/`` whose name is ``MEMORY.md`` in any case. Any other request names an
indexed knowledge document: an exact match of its stored source, else a match of the
normalised path (``recallbox.domains.privacy.normalize_source_path``: case, ``./``, ``../``,
``\\``), else a unique basename match. Several allowed matches raise ``InvalidArgument``
naming them; a document whose basename is ``MEMORY.md`` is reachable only by a path holding a
``/`` (``./MEMORY.md``, ``notes/MEMORY.md``).

The privacy gate runs first and the caller passes only the sources it allows, so a denied
source and an unknown one give the same :func:`unavailable` result, and an ambiguity error
never names a denied source.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbox.domains.context_slice import ContextSlice
from recallbox.domains.privacy import MEMORY_SOURCE_NAME, normalize_source_path
from recallbox.errors import InvalidArgument
from recallbox.text.normalize import normalize_text
from recallbox.types import SOURCE_NOT_AVAILABLE, RecallResult

#: Layers a ``recall_context`` result names.
LAYER_KEYWORD = "keyword"
LAYER_HYBRID = "hybrid"
LAYER_NONE = "none"


def is_memory_request(source: str) -> bool:
    """True when ``source`` asks for the memory entries (``MEMORY.md``, no ``/``)."""
    if not isinstance(source, str):
        return False
    cleaned = normalize_text(source).strip()
    return "/" not in cleaned and "\\" not in cleaned and cleaned.casefold() == MEMORY_SOURCE_NAME


def _normalised(name: str) -> str | None:
    try:
        return normalize_source_path(name)
    except InvalidArgument:
        return None


def resolve_knowledge_source(requested: str, sources: Sequence[str]) -> str | None:
    """The stored source ``requested`` names among the allowed, indexed ``sources``.

    Returns ``None`` when nothing matches (the caller answers :func:`unavailable`).

    Raises:
        InvalidArgument: several sources match; the message names them.
    """
    if not isinstance(requested, str) or is_memory_request(requested):
        return None
    if requested in sources:
        return requested
    wanted = _normalised(requested)
    if wanted is None:
        return None
    by_path = sorted(s for s in sources if _normalised(s) == wanted)
    if not by_path and "/" not in wanted:
        by_path = sorted(
            s
            for s in sources
            if (path := _normalised(s)) is not None
            and path.rsplit("/", 1)[-1] == wanted
            and wanted != MEMORY_SOURCE_NAME
        )
    if len(by_path) > 1:
        raise InvalidArgument(
            f"source {requested!r} matches several documents: {', '.join(by_path)}; give the path"
        )
    return by_path[0] if by_path else None


def unavailable() -> RecallResult:
    """The result for a denied or unknown source: nothing, not even a size."""
    return RecallResult(allowed=False, content="", reason=SOURCE_NOT_AVAILABLE)


def context_result(piece: ContextSlice, *, layer: str, memory: bool) -> RecallResult:
    """The result of an allowed source from its slice.

    ``drilled`` holds the targets the hit-log records one drill row each for: the entry keys
    for memory, the section ids for knowledge. An empty slice names no layer.
    """
    if not piece.content:
        return RecallResult(allowed=True, content="", hit_layer=LAYER_NONE)
    drilled = piece.entries if memory else piece.sections
    return RecallResult(
        allowed=True,
        content=piece.content,
        sections=piece.sections,
        hit_layer=layer,
        drilled=drilled,
        truncated=piece.truncated,
    )
