"""FTS5 discipline and the heal probe: integrity after any writes, desync detected, repaired."""

from __future__ import annotations

from pathlib import Path

import apsw
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.storage.sqlite.schema import FTS_INDEXES

TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"), st.sampled_from(list("召回机制压缩摘要 abc_/.\\\n\x00"))
    ),
    max_size=60,
)
ACTION = st.one_of(
    st.tuples(st.just("append"), TEXT, st.booleans(), st.booleans()),
    st.tuples(st.just("tool"), TEXT, st.booleans(), st.booleans()),
    st.tuples(st.just("supersede"), st.integers(0, 50), st.integers(0, 50), st.booleans()),
    st.tuples(st.just("deliver"), st.integers(0, 50), st.booleans(), st.booleans()),
    st.tuples(st.just("compact"), TEXT, st.booleans(), st.booleans()),
)


def _integrity(conn: apsw.Connection) -> None:
    for name in FTS_INDEXES:
        conn.execute(f"INSERT INTO {name}({name}, rank) VALUES ('integrity-check', 1)")


@settings(max_examples=40)
@given(st.lists(ACTION, max_size=25))
def test_integrity_after_any_sequence_of_writes(tmp_path: Path, actions: list) -> None:
    path = tmp_path / f"p{abs(hash(str(actions)))}.db"
    with recallbox.open(path) as box:
        ids: list[str] = []
        for action, a, b, c in actions:
            if action == "append":
                ids.append(box.append("t", "user", a, pending=b, model_visible=c).id)
            elif action == "tool":
                ids.append(
                    box.append(
                        "t",
                        "assistant",
                        "",
                        tool_calls=[{"id": "1", "name": "n", "arguments": {"x": a}}],
                    ).id
                )
            elif action == "supersede" and ids:
                box.supersede(ids[a % len(ids)], ids[b % len(ids)])
            elif action == "deliver" and ids:
                box.deliver(ids[a % len(ids)])
            elif action == "compact":
                box.append("t", "user", "")
                box.compact("t", "summary " + a)  # an empty summary is refused (§3.4)
        _integrity(box.store.pool.connection())
        assert box.doctor().healthy


def _desync(box: recallbox.Box, new_text: str) -> None:
    conn = box.store.pool.connection()
    for index in FTS_INDEXES.values():
        for trigger in index.trigger_names():
            conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute(
        "UPDATE messages SET content = ?, content_seg = ? WHERE seq = 1", (new_text, new_text)
    )


def _fill(box: recallbox.Box, texts: list[str]) -> None:
    for text in texts:
        box.append("t", "user", text)


def test_doctor_detects_and_repairs_desync(box: recallbox.Box) -> None:
    _fill(box, [f"deploy billing service number {i} to staging" for i in range(30)])
    assert box.doctor().healthy
    _desync(box, "completely different words now")
    report = box.doctor()
    assert not report.healthy
    assert any(not ix.integrity_ok for ix in report.indexes)
    assert any(not ix.triggers_ok for ix in report.indexes)
    repaired = box.doctor(repair=True)
    assert repaired.healthy and len(repaired.repaired) == len(FTS_INDEXES)
    assert len(box.messages("t")) == 30
    conn = box.store.pool.connection()
    hits = conn.execute(
        "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'completely'"
    ).fetchone()[0]
    assert hits == 1
    # triggers are back: a new write stays in sync
    box.append("t", "user", "after repair")
    assert box.doctor().healthy


def test_doctor_detects_desync_in_all_cjk_corpus(box: recallbox.Box) -> None:
    _fill(box, [f"压缩摘要之后召回机制第{i}次工作正常" for i in range(25)])
    assert box.doctor().healthy
    _desync(box, "完全不同的内容")
    assert not box.doctor().healthy
    assert box.doctor(repair=True).healthy
    assert len(box.messages("t")) == 25


def test_probe_catches_missing_index_rows(box: recallbox.Box) -> None:
    _fill(box, ["alpha beta gamma", "delta epsilon", "召回 机制"])
    conn = box.store.pool.connection()
    # Remove one row from the index only (with its correct old values: no corruption).
    row = conn.execute("SELECT id, content_seg FROM messages WHERE seq = 2").fetchone()
    conn.execute(
        "INSERT INTO messages_fts(messages_fts, rowid, content_seg) VALUES ('delete', ?, ?)", row
    )
    report = box.doctor()
    fts = next(ix for ix in report.indexes if ix.table == "messages_fts")
    assert fts.index_rows == 2 and fts.content_rows == 3
    assert not report.healthy
    assert box.doctor(repair=True).healthy


def test_repair_recreates_a_dropped_index(box: recallbox.Box) -> None:
    _fill(box, ["one two three", "four five six"])
    conn = box.store.pool.connection()
    conn.execute("DROP TABLE messages_trgm")
    assert not box.doctor().healthy
    report = box.doctor(repair=True)
    assert report.healthy and "recreated" in " ".join(report.repaired)
    found = conn.execute(
        "SELECT count(*) FROM messages_trgm WHERE content LIKE '%five%'"
    ).fetchone()[0]
    assert found == 1
