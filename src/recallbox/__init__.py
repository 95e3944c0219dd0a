"""recallbox: a local-first recall engine for AI agents.

Everything an agent saw and said, kept verbatim in one SQLite file, handed back through a few
bounded, pull-based, reversible tools. Start with :func:`open`.
"""

from __future__ import annotations

from pathlib import Path

from recallbox.box import Box, open_box
from recallbox.domains.context_slice import (
    RECALL_CONTEXT_MAX_SECTIONS,
    RECALL_CONTEXT_MAX_TOKENS,
)
from recallbox.domains.memory_inject import FULL_INJECTION_TOKENS
from recallbox.domains.memory_model import MEMORY_TYPES
from recallbox.domains.threads import (
    LITERAL_COUNT_LIMIT,
    MIN_TERM_CHARS,
    OTHER_MEMORY_TIMEOUT_S,
    THREAD_LITERAL_MAX_CHARS,
)
from recallbox.errors import (
    DependencyMissing,
    InvalidArgument,
    InvalidQuery,
    NotFound,
    RecallError,
    SchemaMismatch,
    StoreUnavailable,
    UnsupportedFilter,
)
from recallbox.text.normalize import normalize_text
from recallbox.text.tokens import estimate_tokens
from recallbox.text.windows import (
    THREAD_SEARCH_MAX_CHARS,
    WINDOW_CHARS,
    WINDOW_LEAD_CHARS,
    bounded_thread_search,
)
from recallbox.types import (
    RECALL_CONTEXT_HEADER,
    SOURCE_NOT_AVAILABLE,
    DecayReport,
    DecayTransition,
    DoctorReport,
    FileImportReport,
    Generation,
    Hit,
    ImportProgress,
    ImportReport,
    IndexHealth,
    MemoryEntry,
    MemoryFieldChange,
    MemoryFileLine,
    MemoryImportReport,
    Message,
    Page,
    Policy,
    PurgeReport,
    RecallResult,
    Section,
    SkippedFile,
    SkippedRecord,
    SyncReport,
    Thread,
)

__version__ = "0.1.0"


def open(path_or_url: str | Path, *, embedder: object = None) -> Box:
    """Open a recallbox store: a SQLite path (created with its parent dirs) or ``":memory:"``.

    Use it as a context manager: ``with recallbox.open("agent.db") as box: ...``.
    ``embedder`` is ``None`` (keyword ranking only), a name (``"minilm"``, ``"multilingual"``,
    ``"hash"``) or an object with ``model_id``, ``dim`` and ``embed()``.

    Raises:
        DependencyMissing: ``embedder`` names a model whose extra is not installed.
        InvalidArgument: an unusable location or embedder.
    """
    return open_box(path_or_url, embedder=embedder)


__all__ = [
    "FULL_INJECTION_TOKENS",
    "LITERAL_COUNT_LIMIT",
    "MEMORY_TYPES",
    "MIN_TERM_CHARS",
    "OTHER_MEMORY_TIMEOUT_S",
    "RECALL_CONTEXT_HEADER",
    "RECALL_CONTEXT_MAX_SECTIONS",
    "RECALL_CONTEXT_MAX_TOKENS",
    "SOURCE_NOT_AVAILABLE",
    "THREAD_LITERAL_MAX_CHARS",
    "THREAD_SEARCH_MAX_CHARS",
    "WINDOW_CHARS",
    "WINDOW_LEAD_CHARS",
    "Box",
    "DecayReport",
    "DecayTransition",
    "DependencyMissing",
    "DoctorReport",
    "FileImportReport",
    "Generation",
    "Hit",
    "ImportProgress",
    "ImportReport",
    "IndexHealth",
    "InvalidArgument",
    "InvalidQuery",
    "MemoryEntry",
    "MemoryFieldChange",
    "MemoryFileLine",
    "MemoryImportReport",
    "Message",
    "NotFound",
    "Page",
    "Policy",
    "PurgeReport",
    "RecallError",
    "RecallResult",
    "SchemaMismatch",
    "Section",
    "SkippedFile",
    "SkippedRecord",
    "StoreUnavailable",
    "SyncReport",
    "Thread",
    "UnsupportedFilter",
    "__version__",
    "bounded_thread_search",
    "estimate_tokens",
    "normalize_text",
    "open",
]
