"""The thread model of DESIGN §2 through the public API of §9."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import recallbox
from backends import execute
from recallbox import InvalidArgument, NotFound

NESTED_ARGS = {
    "command": "ssh -i ~/.ssh/id_ed25519 deploy@prod-1",
    "files": [{"path": "a.txt"}, {"path": "b.txt", "mode": 420}, {"path": "C:\\Users\\x\\id_rsa"}],
    "opts": {"retries": 3, "verbose": True, "tags": ["x", None, 1.5]},
}


def test_every_field_round_trips(box: recallbox.Box, db_path: Path) -> None:
    created = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    call = box.append(
        "ops",
        "assistant",
        "running it — 召回 ✓",
        tool_calls=[
            {"id": "c1", "name": "bash", "arguments": NESTED_ARGS},
            {"id": "c2", "name": "read", "arguments": '{"path": "/etc/hosts", "n": [1, 2]}'},
            {"id": "c3", "name": "raw", "arguments": "not json {"},
        ],
        created_at=created,
        metadata={"speaker": "Ana", "nested": {"ids": [1, 2]}, "uuid": "u-1"},
    )
    result = box.append("ops", "tool", "ok", tool_call_id="c1", model_visible=False, pending=True)
    with recallbox.open(db_path) as again:
        stored = again.messages("ops")
    assert [m.id for m in stored] == [call.id, result.id]
    first, second = stored
    assert first.role == "assistant" and first.kind == "message"
    assert first.content == "running it — 召回 ✓"
    assert first.tool_calls == [
        {"id": "c1", "name": "bash", "arguments": NESTED_ARGS},
        {"id": "c2", "name": "read", "arguments": {"path": "/etc/hosts", "n": [1, 2]}},
        {"id": "c3", "name": "raw", "arguments": "not json {"},
    ]
    assert first.created_at == created
    assert first.metadata == {"speaker": "Ana", "nested": {"ids": [1, 2]}, "uuid": "u-1"}
    assert first.generation == 1 and first.seq == 1
    assert first.model_visible and not first.pending and first.superseded_by is None
    assert second.tool_call_id == "c1"
    assert not second.model_visible and second.pending
    assert second.seq == 2 and second.generation_id == first.generation_id
    assert isinstance(first.id, str) and first.id != second.id


def test_unknown_channel_creates_thread_and_create_is_idempotent(box: recallbox.Box) -> None:
    box.append("new-one", "user", "hi")
    assert [t.channel for t in box.threads()] == ["new-one"]
    t1 = box.create_thread("ops", title="Ops")
    t2 = box.create_thread("ops", title="ignored")
    assert t1.title == t2.title == "Ops"
    assert [t.channel for t in box.threads()] == ["new-one", "ops"]


def test_generations_numbered_across_compactions(box: recallbox.Box) -> None:
    box.append("t", "user", "first")
    g2 = box.compact("t", "summary one")
    box.append("t", "user", "second")
    g3 = box.compact("t", "summary two")
    g4 = box.compact("t", "empty generation compacted")
    assert (g2.number, g3.number, g4.number) == (2, 3, 4)
    assert len({g2.id, g3.id, g4.id}) == 3
    assert [g.number for g in box.generations("t")] == [1, 2, 3, 4]
    gen1 = box.messages("t", 1)
    assert [m.content for m in gen1] == ["first"]
    gen2 = box.messages("t", 2)
    # the engine appends the resource directory to the summary (DESIGN §3.4)
    assert [(m.kind, m.role, m.content.split("\n\n")[0]) for m in gen2] == [
        ("compaction_summary", "system", "summary one"),
        ("message", "user", "second"),
    ]
    everything = box.messages("t")
    assert [(m.generation, m.seq) for m in everything] == [(1, 1), (2, 2), (2, 3), (3, 4), (4, 5)]
    with pytest.raises(NotFound):
        box.messages("t", 5)
    with pytest.raises(InvalidArgument):
        box.messages("t", 0)


def test_supersede_deliver_quarantine(box: recallbox.Box) -> None:
    old = box.append("t", "assistant", "draft")
    new = box.append("t", "assistant", "final")
    queued = box.append("t", "user", "later", pending=True)
    assert box.supersede(old.id, new.id).superseded_by == new.id
    assert box.deliver(queued.id).pending is False
    assert [m.superseded_by for m in box.messages("t")] == [new.id, None, None]
    box.quarantine("t")
    assert box.thread("t").quarantined and box.policy().quarantined == ("t",)
    box.unquarantine("t")
    assert not box.thread("t").quarantined and box.policy().quarantined == ()
    with pytest.raises(NotFound):
        box.supersede("m_nope", new.id)
    with pytest.raises(NotFound):
        box.supersede(old.id, "m_nope")
    with pytest.raises(NotFound):
        box.deliver("m_nope")
    with pytest.raises(NotFound):
        box.unquarantine("never-seen")


def test_append_many_is_one_transaction(box: recallbox.Box) -> None:
    box.append("t", "user", "before")
    with pytest.raises(InvalidArgument):
        box.append_many(
            "t", [{"role": "user", "content": "a"}, {"role": "robot", "content": "bad"}]
        )
    assert [m.content for m in box.messages("t")] == ["before"]
    made = box.append_many(
        "t",
        [
            {"role": "user", "content": "a"},
            {"role": "system", "content": "compacted", "kind": "compaction_summary"},
            {"role": "assistant", "content": "b"},
        ],
    )
    assert [(m.generation, m.seq, m.content) for m in made] == [
        (1, 2, "a"),
        (2, 3, "compacted"),
        (2, 4, "b"),
    ]


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"role": "robot"}, "role must be one of"),
        ({"role": "user", "kind": "weird"}, "kind must be one of"),
        ({"role": "user", "content": 5}, "content must be a string"),
        ({"role": "user", "metadata": [1]}, "metadata must be a mapping"),
        ({"role": "user", "metadata": {"x": object()}}, "JSON-serialisable"),
        ({"role": "user", "tool_calls": [{"name": "x"}]}, "needs string 'id' and 'name'"),
        ({"role": "user", "tool_calls": "oops"}, "tool_calls must be a list"),
        ({"role": "user", "created_at": "yesterday"}, "ISO-8601"),
    ],
)
def test_invalid_arguments_are_clear(box: recallbox.Box, kwargs: dict, fragment: str) -> None:
    kwargs = dict(kwargs)  # the parameter is shared by both backends' runs
    role = kwargs.pop("role")
    with pytest.raises(InvalidArgument, match=fragment):
        box.append("t", role, **kwargs)
    assert box.threads() == [] or box.messages("t") == []


def test_created_at_forms(box: recallbox.Box) -> None:
    naive = datetime(2025, 5, 1, 12, 0, 0)
    a = box.append("t", "user", "a", created_at=naive)
    b = box.append("t", "user", "b", created_at="2025-05-01T12:00:00Z")
    c = box.append("t", "user", "c", created_at=0)
    assert a.created_at == b.created_at == naive.replace(tzinfo=UTC)
    assert c.created_at == datetime(1970, 1, 1, tzinfo=UTC)
    d = box.append("t", "user", "d")
    assert abs(d.created_at - datetime.now(UTC)) < timedelta(minutes=1)


def test_normalisation_keeps_original_for_audit(box: recallbox.Box) -> None:
    raw = "a\x00b\x07c\td\ne\ud800f"
    m = box.append(
        "t", "tool", raw, tool_calls=[{"id": "x", "name": "n", "arguments": {"k": "v\x00\udc00"}}]
    )
    stored = box.messages("t")[0]
    assert stored.content == "a b c\td\ne\ufffdf" == m.content
    assert stored.raw_content == raw
    assert stored.tool_calls == [{"id": "x", "name": "n", "arguments": {"k": "v \ufffd"}}]
    plain = box.append("t", "user", "nothing to change")
    assert plain.raw_content is None


def test_metadata_stored_verbatim_even_with_odd_strings(box: recallbox.Box) -> None:
    meta = {"weird": "nul\x00 and \ud800", "list": [{"a": None}]}
    box.append("t", "user", "x", metadata=meta)
    assert box.messages("t")[0].metadata == meta


def test_ten_megabyte_message(box: recallbox.Box, db_path: Path) -> None:
    big = ("line of log text 0123456789 " * 40 + "\n") * 9_000
    assert len(big) > 10_000_000
    m = box.append("t", "tool", big + "needle-at-the-end")
    with recallbox.open(db_path) as again:
        assert again.message(m.id).content == big + "needle-at-the-end"
    assert box.doctor().healthy


def test_memory_database_and_reopen_file(db_path: Path) -> None:
    with recallbox.open(":memory:") as mem:
        mem.append("t", "user", "x")
        assert len(mem.messages("t")) == 1
    with recallbox.open(db_path) as b:
        b.append("t", "user", "kept")
        b.compact("t", "s")
    with recallbox.open(str(db_path)) as b:
        assert [m.content.split("\n\n")[0] for m in b.messages("t")] == ["kept", "s"]
        assert b.thread("t").generation_count == 2


def test_open_rejects_bad_locations() -> None:
    with pytest.raises(InvalidArgument):
        recallbox.open("")
    # a postgresql:// URL opens the PostgreSQL backend: no server there is a clear error
    with pytest.raises(recallbox.StoreUnavailable, match="cannot reach the PostgreSQL server"):
        recallbox.open("postgresql://127.0.0.1:9/x")


def test_a_url_made_a_path_is_refused_not_made_a_sqlite_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Path("postgresql://…")`` drops a '/' of '://': opened as a path it once made a SQLite
    file under a folder named ``postgresql:`` in the working directory."""
    monkeypatch.chdir(tmp_path)
    for url in ("postgresql://me@127.0.0.1:9/x", "postgres://h/x"):
        with pytest.raises(InvalidArgument, match="pass the URL as a str"):
            recallbox.open(Path(url))
    assert list(tmp_path.iterdir()) == []


def test_tool_calls_json_string_roundtrip_raw_kept(box: recallbox.Box) -> None:
    text = '{"command":  "ls -la"}'
    m = box.append("t", "assistant", "", tool_calls=[{"id": "1", "name": "b", "arguments": text}])
    row = box.store.get_message(m.id)
    assert row is not None and row.tool_calls == [
        {"id": "1", "name": "b", "arguments": {"command": "ls -la"}}
    ]
    (raw,) = execute(box, "SELECT tool_calls_raw, args_text FROM messages WHERE uid = ?", [m.id])
    assert json.loads(raw[0]) == [text]
    assert raw[1] == "ls -la"
