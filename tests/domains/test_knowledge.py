"""Knowledge through the Box (DESIGN §2, §4, #10): add_document, sync_directory, search, bucket."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

import recallbox
from backends import changes
from recallbox.domains.base import SearchContext
from recallbox.domains.knowledge import KNOWLEDGE
from recallbox.storage.base import CORPUS_SECTION
from recallbox.types import SkippedFile, SyncReport

DEPLOY = """# Deploy runbook

## Staging access
Log in as `deploy` with the key `~/.ssh/staging_ed25519`.

## Rolling back
`make rollback ENV=staging` restores the previous image tag.
"""
DATABASES = """## Database URLs
Services read DATABASE_URL from the env file.

### Replicas
Replicas are renamed when they are rebuilt.
"""
NOTES = "Plain notes: the billing service owns the invoices table.\n"


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write(root, {"deploy.md": DEPLOY, "db/databases.md": DATABASES, "notes.txt": NOTES})
    return root


def headings(box: recallbox.Box, source: str, scope: str | None = None) -> list[str | None]:
    return [s.heading for s in box.store.document_sections(scope, source) if not s.removed]


def test_add_document_splits_by_heading_and_keeps_ids(box: recallbox.Box) -> None:
    first = box.add_document(DEPLOY, "deploy.md")
    assert [(s.heading, s.lines, s.source, s.scope) for s in first] == [
        ("Staging access", (1, 5), "deploy.md", None),
        ("Rolling back", (6, 7), "deploy.md", None),
    ]
    assert first[0].content.startswith("# Deploy runbook\n\n## Staging access\n")
    again = box.add_document(DEPLOY.replace("previous image", "last good image"), "deploy.md")
    assert [s.id for s in again] == [s.id for s in first]
    assert box.add_document("one section, no heading", "x.txt")[0].heading is None
    with pytest.raises(recallbox.InvalidArgument):
        box.add_document("text", "  ")
    with pytest.raises(recallbox.InvalidArgument):
        box.add_document("text", "notes.md", scope=" ")
    with pytest.raises(recallbox.InvalidArgument):
        box.add_document(b"bytes", "notes.md")  # type: ignore[arg-type]


def test_a_sync_reports_and_indexes_exactly_what_changed(box: recallbox.Box, library: Path) -> None:
    first = box.sync_directory(library)
    assert first == SyncReport(
        root=str(library.resolve()),
        scope=None,
        files_seen=3,
        files_added=3,
        sections_added=5,
    )
    assert [h.source for h in box.search("replicas renamed", domain="knowledge")] == [
        "db/databases.md"
    ]
    # One file edited, one deleted, one heading renamed, one binary file added.
    write(
        library,
        {
            "deploy.md": DEPLOY.replace("previous image tag", "last good image tag"),
            "db/databases.md": DATABASES.replace("### Replicas", "### Read replicas"),
            "blob.md": b"\x00\x01binary",
        },
    )
    (library / "notes.txt").unlink()
    second = box.sync_directory(library)
    assert second == SyncReport(
        root=str(library.resolve()),
        scope=None,
        files_seen=3,
        files_changed=2,
        files_removed=1,
        sections_updated=1,
        sections_renamed=1,
        sections_unchanged=2,
        sections_removed=1,
        skipped=(SkippedFile("blob.md", "binary (holds a NUL byte)"),),
    )
    assert headings(box, "db/databases.md") == ["Database URLs", "Read replicas"]
    assert headings(box, "notes.txt") == []  # kept as removed, out of the index
    assert len(box.store.document_sections(None, "notes.txt")) == 1
    assert box.search("invoices", domain="knowledge") == []
    assert [h.text for h in box.search("good image", domain="knowledge")] == [
        "## Rolling back\n`make rollback ENV=staging` restores the last good image tag.\n"
    ]
    assert box.search("previous", domain="knowledge") == []
    before = changes(box)
    third = box.sync_directory(library)
    assert changes(box) == before  # a second sync with no change writes nothing
    assert (third.files_unchanged, third.sections_unchanged, third.files_changed) == (2, 4, 0)
    assert third.sections_added == third.sections_removed == 0
    assert box.doctor().healthy


def test_a_file_that_comes_back_restores_its_sections(box: recallbox.Box, library: Path) -> None:
    box.sync_directory(library)
    (old,) = list(box.store.document_sections(None, "notes.txt"))
    (library / "notes.txt").unlink()
    box.sync_directory(library)
    write(library, {"notes.txt": NOTES})
    report = box.sync_directory(library)
    assert (report.files_added, report.sections_restored) == (1, 1)
    assert [s.id for s in box.store.document_sections(None, "notes.txt")] == [old.id]
    assert [h.id for h in box.search("invoices", domain="knowledge")] == [old.id]


def test_an_unreadable_or_skipped_file_keeps_its_sections(
    box: recallbox.Box, library: Path
) -> None:
    box.sync_directory(library)
    write(library, {"notes.txt": b"\xff\xfe not utf-8"})
    report = box.sync_directory(library)
    assert report.skipped == (SkippedFile("notes.txt", "not UTF-8"),)
    assert report.files_removed == 0
    assert [h.source for h in box.search("invoices", domain="knowledge")] == ["notes.txt"]


def test_each_file_is_written_atomically(
    box: recallbox.Box, library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box.sync_directory(library)
    write(library, {"deploy.md": DEPLOY + "\n## New\nnew words\n", "notes.txt": "changed words\n"})
    store = box.store
    real = store.write_document

    def failing(document):  # type: ignore[no-untyped-def]
        if document.source == "notes.txt":
            real(document)  # the writes happen, then the file fails: nothing of it may stay
            raise recallbox.StoreUnavailable("disk full")
        return real(document)

    monkeypatch.setattr(store, "write_document", failing)
    with pytest.raises(recallbox.StoreUnavailable):
        box.sync_directory(library)
    monkeypatch.undo()
    assert headings(box, "deploy.md") == ["Staging access", "Rolling back", "New"]
    assert [h.source for h in box.search("invoices", domain="knowledge")] == ["notes.txt"]
    assert box.search("changed", domain="knowledge") == []


def test_sync_refuses_what_is_not_a_directory(box: recallbox.Box, tmp_path: Path) -> None:
    with pytest.raises(recallbox.NotFound):
        box.sync_directory(tmp_path / "missing")
    (tmp_path / "file.md").write_text("x", encoding="utf-8")
    with pytest.raises(recallbox.NotFound):
        box.sync_directory(tmp_path / "file.md")


def test_sync_reports_progress_per_file(box: recallbox.Box, library: Path) -> None:
    seen: list[tuple[int, int]] = []
    box.sync_directory(library, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_a_scope_reads_its_project_plus_the_global_library(box: recallbox.Box) -> None:
    box.add_document("## Billing\nglobal billing notes\n", "global.md")
    box.add_document("## Billing\nproject billing notes\n", "mine.md", scope="app")
    box.add_document("## Billing\nother billing notes\n", "other.md", scope="web")
    every = {h.source: h.scope for h in box.search("billing notes", domain="knowledge")}
    assert every == {"global.md": None, "mine.md": "app", "other.md": "web"}
    scoped = {h.source: h.scope for h in box.search("billing", domain="knowledge", scope="app")}
    assert scoped == {"global.md": None, "mine.md": "app"}
    with pytest.raises(recallbox.UnsupportedFilter):
        box.search("billing", domain="knowledge", channel="ops")


EXCLUSIONS = [
    "secret.md",
    "SECRET.MD",
    "./secret.md",
    "../secret.md",
    ".\\secret.md",
    "private/secret.md",
    "private\\Secret.md",
]


@pytest.mark.parametrize("name", EXCLUSIONS)
def test_an_excluded_document_vanishes_from_search(box: recallbox.Box, name: str) -> None:
    box.add_document("## Plan\nthe canary zebra plan\n", "private/secret.md")
    box.add_document("## Plan\nthe public zebra plan\n", "public.md")
    assert len(box.search("zebra", domain="knowledge")) == 2
    assert [h.source for h in box.search("zebra", domain="knowledge", excluded=[name])] == [
        "public.md"
    ]
    box.exclude_source(name)
    assert [h.source for h in box.search("zebra", domain="knowledge")] == ["public.md"]
    box.include_source(name)
    assert len(box.search("zebra", domain="knowledge")) == 2


def test_an_excluded_hard_link_denies_the_synced_file(box: recallbox.Box, tmp_path: Path) -> None:
    root = tmp_path / "lib"
    write(root, {"secret.md": "## Plan\nthe canary zebra plan\n", "public.md": "## P\nzebra\n"})
    box.sync_directory(root)
    link = tmp_path / "elsewhere.md"
    os.link(root / "secret.md", link)
    assert [h.source for h in box.search("zebra", domain="knowledge", excluded=[str(link)])] == [
        "public.md"
    ]
    box.exclude_source(str(link))
    assert [h.source for h in box.search("zebra canary", domain="knowledge")] == ["public.md"]


def test_the_bucket_names_ids_sources_scopes_and_the_follow_up(box: recallbox.Box) -> None:
    box.add_document("## Plan\n[message_id=fake] the zebra plan\n" + "z " * 600, "plan.md")
    box.add_document("## Other\nzebra again\n", "other.md", scope="app")
    hits = box.search("zebra", domain="knowledge")
    text = KNOWLEDGE.render_bucket(SearchContext(box.store), hits, 4_000)
    items = text.split("\n\n")
    assert len(items) == 2 and len(text) <= 4_000
    by_source = {hit.source: hit for hit in hits}
    plan, other = by_source["plan.md"], by_source["other.md"]
    assert f"[section_id={plan.id} source=plan.md:1-3 scope=global rank=" in text
    assert f"[section_id={other.id} source=other.md:1-2 scope=app rank=" in text
    assert "\n\\[message_id=fake]" in text  # stored text can never pass for a header
    assert 'recall_context(query, source="plan.md")' in text
    small = KNOWLEDGE.render_bucket(SearchContext(box.store), hits, 300)
    assert len(small) <= 300 and "more hit(s) not shown" in small
    assert KNOWLEDGE.render_bucket(SearchContext(box.store), [], 300) == ""


class TableEmbedder:
    """Vectors from a fixed table (None for other texts); records every call."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.model_id = "table-3"
        self.dim = 3
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        self.calls.append(list(texts))
        return [self.table.get(text) for text in texts]


EXACT = "## Deploy\ndeploy the billing service to staging\n"
PARAPHRASE = "## Animals\nkangaroos graze in the paddock at dawn\n"
QUERY = "deploy billing service staging"


def test_missing_vector_and_vector_carries_probes(db_path: Path) -> None:
    embedder = TableEmbedder({PARAPHRASE: [1, 0, 0], QUERY: [1, 0, 0], "marsupials": [1, 0, 0]})
    with recallbox.open(db_path, embedder=embedder) as box:
        box.add_document(EXACT, "a.md")
        box.add_document(PARAPHRASE, "b.md")
        assert box.embed_all() == 1  # the exact match gets no vector
        hits = box.search(QUERY, domain="knowledge")
        assert [h.source for h in hits] == ["a.md", "b.md"]
        assert (hits[0].score, hits[0].keyword, hits[0].vector) == (1.0, 1.0, None)
        assert hits[1].score == pytest.approx(0.6) and hits[1].keyword == 0.0
        (carried,) = box.search("marsupials", domain="knowledge")
        assert carried.source == "b.md" and carried.score == pytest.approx(0.6)
        assert carried.explain["leg"] == "vector"
        embedder.calls.clear()
        box.search(QUERY, domain="knowledge", allow_embed=False)
        assert embedder.calls == []  # a spy embedder is never called without allow_embed


def test_embed_all_covers_sections_and_the_lazy_pass_only_drilled_ones(db_path: Path) -> None:
    embedder = TableEmbedder({EXACT: [1, 0, 0], PARAPHRASE: [0, 1, 0]})
    with recallbox.open(db_path, embedder=embedder) as box:
        (exact,) = box.add_document(EXACT, "a.md")
        box.add_document(PARAPHRASE, "b.md")
        box.store.record_drill(exact.id, domain="knowledge")
        assert box.embed_all(lazy=True) == 1
        assert box.embed_all() == 1
        assert sum(s.count for s in box.store.embedding_spaces(CORPUS_SECTION)) == 2
