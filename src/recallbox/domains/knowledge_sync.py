"""Writing knowledge: ``add_document`` and ``sync_directory`` (DESIGN §2, §4, #10).

Both split a document into sections (``knowledge_files.split_document``), plan the change
against the rows stored for the document (``knowledge_plan.plan_file``: keep, move, rename,
edit, restore, add, remove) and hand the plan to the store as one
:class:`~recallbox.storage.base.DocumentWrite`, applied in one transaction: each file is
atomic, and a file whose plan keeps everything opens no write transaction at all (a second
sync of an unchanged directory writes nothing).

``sync_directory`` walks the root (``knowledge_files``): an unreadable, binary, non-UTF-8 or
oversized file is counted and skipped with its reason and keeps its stored rows, as does
every file under a directory that could not be listed; a file that is gone has its rows
marked removed. A document is ``(scope, source)``: the same relative path synced from two
roots into one scope is one document (the last sync wins).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from recallbox.domains.knowledge_files import (
    Document,
    read_knowledge_file,
    split_document,
    walk_knowledge_files,
)
from recallbox.domains.knowledge_plan import (
    ACTION_ADD,
    ACTION_KEEP,
    ACTION_REMOVE,
    FilePlan,
    SectionChange,
    plan_file,
    plan_removed_file,
    removed_sources,
    sync_report,
)
from recallbox.domains.privacy import normalize_source_path
from recallbox.errors import InvalidArgument, NotFound
from recallbox.storage.base import DocumentWrite, SectionWrite, Store
from recallbox.text.normalize import normalize_text
from recallbox.types import Section, SkippedFile, SyncReport

#: ``progress(files_done, files_total)`` after each file of a sync.
SyncProgress = Callable[[int, int], None]


#: The longest project name a scope may be (the code domain's limit, ``MAX_SCOPE_CHARS``).
KNOWLEDGE_MAX_SCOPE_CHARS = 200


def check_scope(scope: object) -> str | None:
    """``None`` (the global library) or a project name, normalised.

    Raises:
        InvalidArgument: not a string, blank, or longer than
            :data:`KNOWLEDGE_MAX_SCOPE_CHARS`.
    """
    if scope is None:
        return None
    if not isinstance(scope, str):
        raise InvalidArgument(f"scope must be a project name or None, got {type(scope).__name__}")
    name = normalize_text(scope)
    if not name.strip():
        raise InvalidArgument(f"scope must be a project name or None, got {scope!r}")
    if len(name) > KNOWLEDGE_MAX_SCOPE_CHARS:
        raise InvalidArgument(
            f"scope must be a project name of at most {KNOWLEDGE_MAX_SCOPE_CHARS} characters "
            f"(got {len(name)})"
        )
    return name


def check_source(source: object) -> str:
    """A document's source name: normalised text, stripped, with a usable basename.

    Raises:
        InvalidArgument: not a string, blank, or without a basename (``"docs/"``).
    """
    if not isinstance(source, str) or not normalize_text(source).strip():
        raise InvalidArgument(f"source must be a document name such as 'notes.md', got {source!r}")
    cleaned = normalize_text(source).strip()
    normalize_source_path(cleaned)  # refuses a name without a basename
    return cleaned


def _write(change: SectionChange) -> SectionWrite:
    section = change.section
    assert section is not None
    return SectionWrite(
        id=None if change.action == ACTION_ADD else change.section_id,
        heading=section.heading,
        level=section.level,
        start_line=section.start_line,
        end_line=section.end_line,
        heading_line=section.heading_line,
        content=section.content,
        content_hash=section.content_hash,
        body_hash=section.body_hash,
    )


def document_write(
    plan: FilePlan, *, scope: str | None, identity: str | None, root: str | None
) -> DocumentWrite:
    """The store's write of ``plan`` (its kept sections write nothing)."""
    path = normalize_source_path(plan.source)
    return DocumentWrite(
        source=plan.source,
        scope=scope,
        source_path=path,
        source_name=path.rsplit("/", 1)[-1],
        identity=identity,
        root=root,
        writes=tuple(
            _write(c) for c in plan.changes if c.action not in (ACTION_KEEP, ACTION_REMOVE)
        ),
        removals=tuple(
            c.section_id
            for c in plan.changes
            if c.action == ACTION_REMOVE and c.section_id is not None
        ),
    )


def _sync_file(store: Store, doc: Document, *, scope: str | None, root: str) -> FilePlan:
    """Plan ``doc`` against its stored rows and, when it changes anything, write it in one
    transaction (planned again inside it, on the state it writes to)."""
    sections = split_document(doc.source, doc.text)
    plan = plan_file(doc.source, sections, store.document_sections(scope, doc.source))
    if not plan.writes:
        return plan
    with store.transaction():
        plan = plan_file(doc.source, sections, store.document_sections(scope, doc.source))
        store.write_document(document_write(plan, scope=scope, identity=doc.identity, root=root))
    return plan


def add_document(store: Store, text: object, source: object, scope: object = None) -> list[Section]:
    """Index ``text`` as the document ``source`` in ``scope``; its live sections by line (see
    ``Box.add_document``). One transaction; an unchanged document writes nothing."""
    if not isinstance(text, str):
        raise InvalidArgument(f"text must be a string, got {type(text).__name__}")
    name = check_source(source)
    where = check_scope(scope)
    body = normalize_text(text.replace("\r\n", "\n").replace("\r", "\n"))
    sections = split_document(name, body)
    with store.transaction():
        plan = plan_file(name, sections, store.document_sections(where, name))
        return store.write_document(document_write(plan, scope=where, identity=None, root=None))


def _protected(skipped: Sequence[SkippedFile]) -> tuple[str, ...]:
    """Prefixes of the directories that could not be listed: their stored files stay."""
    return tuple(
        "" if skip.source in ("./", "/") else skip.source
        for skip in skipped
        if skip.source.endswith("/")
    )


def sync_directory(
    store: Store,
    path: str | os.PathLike[str],
    scope: object = None,
    *,
    progress: SyncProgress | None = None,
) -> SyncReport:
    """Sync the knowledge files under ``path`` into ``scope`` (see ``Box.sync_directory``)."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidArgument(f"path must be a directory path, got {type(path).__name__}")
    where = check_scope(scope)
    base = Path(path).expanduser()
    if not base.is_dir():
        raise NotFound(f"no directory at {os.fspath(path)!r}; give the folder of your notes")
    root = str(base.resolve())
    walk = walk_knowledge_files(base)
    skipped: list[SkippedFile] = list(walk.skipped)
    plans: list[FilePlan] = []
    for done, file in enumerate(walk.files, start=1):
        doc = read_knowledge_file(file)
        if isinstance(doc, SkippedFile):
            skipped.append(doc)
        else:
            plans.append(_sync_file(store, doc, scope=where, root=root))
        if progress is not None:
            progress(done, len(walk.files))
    protected = _protected(walk.skipped)
    stored = [s for s in store.document_sources(where, root) if not s.startswith(protected)]
    for source in removed_sources(stored, (f.source for f in walk.files)):
        plan = plan_removed_file(source, store.document_sections(where, source))
        if plan.writes:
            store.write_document(document_write(plan, scope=where, identity=None, root=root))
        plans.append(plan)
    return sync_report(root, where, plans, skipped)
