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
    TimedOut,
    UnsupportedFilter,
)
from recallbox.inventory_types import (
    CodeFileStatus,
    DayHits,
    DocumentStatus,
    KnowledgeDocument,
    MemoryForecast,
)
from recallbox.recall import MIN_RECALL_BUDGET_CHARS, RECALL_HEADER, RECALL_MAX_BUDGET_CHARS
from recallbox.recall_answer import OTHER_MEMORY_MAX_CHARS
from recallbox.recall_types import Bucket, BucketedRecall, HitStats
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
    StoredOutput,
    SyncReport,
    Thread,
)

__version__ = "0.1.0"


def open(path_or_url: str | Path, *, embedder: object = None, hit_log: bool = True) -> Box:
    """Open a recallbox store: a SQLite path (created with its parent dirs) or ``":memory:"``.

    Use it as a context manager: ``with recallbox.open("agent.db") as box: ...``.
    ``embedder`` is ``None`` (keyword ranking only), a name (``"minilm"``, ``"multilingual"``,
    ``"hash"``) or an object with ``model_id``, ``dim`` and ``embed()``. ``hit_log=False``
    records nothing in the hit-log (the CLI and the MCP server read ``RECALLBOX_HIT_LOG=0``).

    Raises:
        DependencyMissing: ``embedder`` names a model whose extra is not installed.
        InvalidArgument: an unusable location or embedder.
    """
    return open_box(path_or_url, embedder=embedder, hit_log=hit_log)


__all__ = [
    "FULL_INJECTION_TOKENS",
    "LITERAL_COUNT_LIMIT",
    "MEMORY_TYPES",
    "MIN_RECALL_BUDGET_CHARS",
    "MIN_TERM_CHARS",
    "OTHER_MEMORY_MAX_CHARS",
    "OTHER_MEMORY_TIMEOUT_S",
    "RECALL_CONTEXT_HEADER",
    "RECALL_CONTEXT_MAX_SECTIONS",
    "RECALL_CONTEXT_MAX_TOKENS",
    "RECALL_HEADER",
    "RECALL_MAX_BUDGET_CHARS",
    "SOURCE_NOT_AVAILABLE",
    "THREAD_LITERAL_MAX_CHARS",
    "THREAD_SEARCH_MAX_CHARS",
    "WINDOW_CHARS",
    "WINDOW_LEAD_CHARS",
    "Box",
    "Bucket",
    "BucketedRecall",
    "CodeFileStatus",
    "DayHits",
    "DecayReport",
    "DecayTransition",
    "DependencyMissing",
    "DoctorReport",
    "DocumentStatus",
    "FileImportReport",
    "Generation",
    "Hit",
    "HitStats",
    "ImportProgress",
    "ImportReport",
    "IndexHealth",
    "InvalidArgument",
    "InvalidQuery",
    "KnowledgeDocument",
    "MemoryEntry",
    "MemoryFieldChange",
    "MemoryFileLine",
    "MemoryForecast",
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
    "StoredOutput",
    "SyncReport",
    "Thread",
    "TimedOut",
    "UnsupportedFilter",
    "__version__",
    "bounded_thread_search",
    "estimate_tokens",
    "normalize_text",
    "open",
]
