"""``recall``, ``resume``, ``expand`` and ``stats hits`` through the real CLI (#12)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import recallbox
from backends import DbLocation
from recallbox.cli.commands.recall import no_vectors_warning
from recallbox.injection import RESUME_HEADER
from recallbox.recall import RECALL_HEADER, RECALL_JSON_MAX_CHARS
from recallbox.recall_types import JSON_HIT_TEXT_MAX_CHARS, JSON_NAME_MAX_CHARS
from recallbox.text.compress import EXPAND_HEADER
from table_dump import hit_log_rows


def seed(db: str) -> dict[str, str]:
    with recallbox.open(db) as box:
        first = box.append("ops", "user", "deploy billing to staging-03").id
        box.append("ops", "assistant", "billing deployed on staging-03")
        stored = box.store_tool_output("ok\n" * 6_000 + "ERROR disk full on staging-03\n")
        assert stored.handle is not None
    return {"first": first, "handle": stored.handle}


def test_recall_text_and_json(db: str, run) -> None:
    ids = seed(db)
    r = run("--db", db, "recall", "billing staging-03")
    assert r.code == 0 and r.out.startswith(RECALL_HEADER) and ids["first"] in r.out
    assert "[bucket=sessions layer=keyword]" in r.out and len(r.out) <= 12_001
    data = run(
        "--db", db, "recall", "billing", "--domains", "sessions,transcripts", "--json"
    ).json()
    assert [b["domain"] for b in data["buckets"]] == ["sessions", "transcripts"]
    assert data["buckets"][0]["hits"][0]["id"].startswith("m_") and data["text"].startswith(
        RECALL_HEADER
    )
    small = run("--db", db, "recall", "billing", "--budget", "1000")
    assert small.code == 0 and len(small.out) <= 1_001


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "999"], "budget_chars must be an int from 1000 to 12000"),
        (["--budget", "12001"], "budget_chars"),
        (["--domains", "bogus"], "unknown domain 'bogus'"),
        (["--domains", ","], "--domains names none of"),
        (["--scope", ""], "scope must be a project name or None, got a blank string"),
        (["--scope", " \t"], "scope must be a project name or None, got a blank string"),
    ],
)
def test_recall_usage_errors(db: str, run, args: list[str], message: str) -> None:
    r = run("--db", db, "recall", "billing", *args)
    assert r.code == 2 and message in r.error_line
    data = run("--db", db, "recall", "billing", *args, "--json")
    assert data.code == 2 and message in data.json()["error"] and data.json()["code"] == 2


def test_resume(db: str, run) -> None:
    seed(db)
    r = run("--db", db, "resume", "ops")
    assert r.code == 0 and r.out.startswith(RESUME_HEADER) and "staging-03" in r.out
    data = run("--db", db, "resume", "ops", "--budget", "1500", "--json").json()
    assert data["channel"] == "ops" and len(data["text"]) <= 1_500
    nothing = run("--db", db, "resume", "nope")
    assert nothing.code == 0 and "no stored messages a model can read" in nothing.out


def test_expand(db: str, run) -> None:
    ids = seed(db)
    r = run("--db", db, "expand", ids["handle"])
    assert r.code == 0 and r.out.startswith(EXPAND_HEADER)
    assert f"Continue with expand({ids['handle']}, offset=" in r.out
    last = run("--db", db, "expand", ids["handle"], "--offset", "17990", "--json").json()
    assert "ERROR disk full on staging-03" in last["text"] and last["offset"] == 17_990
    unknown = run("--db", db, "expand", "o_0000000000000000")
    assert unknown.code == 1 and "unknown handle" in unknown.error_line
    past = run("--db", db, "expand", ids["handle"], "--offset", "999999")
    assert past.code == 2


def test_stats_hits(db: str, run) -> None:
    ids = seed(db)
    run("--db", db, "recall", "billing")
    run("--db", db, "read", ids["first"])
    r = run("--db", db, "stats", "hits")
    assert r.code == 0 and "hit-log: 3 rows (2 hits, 1 drills), 0 dropped" in r.out
    assert f"sessions {ids['first']}" in r.out and "never recalled:" in r.out
    data = run("--db", db, "stats", "hits", "--json").json()
    assert data["hit_rows"] == 2 and data["drill_rows"] == 1 and data["dropped"] == 0


def test_the_hit_log_is_off_with_the_environment(
    db_location: DbLocation, tmp_path: Path, run_script
) -> None:
    db = str(db_location("off"))
    seed(db)
    env = {"RECALLBOX_HIT_LOG": "0"}
    assert run_script("--db", db, "recall", "billing", env=env).code == 0
    assert hit_log_rows(db) == []
    assert run_script("--db", db, "recall", "billing").code == 0
    assert hit_log_rows(db) != []


@pytest.mark.parametrize(
    "command", [["recall", "x"], ["resume", "ops"], ["expand", "o_1"], ["stats", "hits"]]
)
def test_a_missing_database_is_refused_not_created(tmp_path: Path, run, command: list[str]) -> None:
    db = tmp_path / "typo" / "x.db"
    r = run("--db", str(db), *command)
    assert r.code == 1 and "no database at" in r.error_line and not db.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["recall", "{big}"],
        ["resume", "{big}"],
        ["expand", "{big}"],
        ["recall", "billing", "--scope", "{big}"],
    ],
)
def test_huge_arguments_stay_under_the_cap(db: str, run, command: list[str]) -> None:
    """A 100 000-character argument is never echoed whole, in text or ``--json`` (cli-smoke)."""
    seed(db)
    big = "x" * 100_000
    args = [a.format(big=big) for a in command]
    for flags in ([], ["--json"]):
        r = run("--db", db, *args, *flags)
        assert r.code in (0, 1), r.out[:200]
        assert len(r.out) <= 12_001 and len(r.err) <= 12_001
        if flags:
            assert r.json()


def test_recall_embedder_without_stored_vectors_warns_once_on_stderr(db: str, run) -> None:
    seed(db)
    plain = run("--db", db, "recall", "billing staging-03")
    asked = run("--db", db, "recall", "billing staging-03", "--embedder", "hash")
    assert asked.code == 0 and asked.out == plain.out  # the answer is the keyword-only one
    assert asked.err.count(no_vectors_warning("hash")) == 1 and plain.err == ""
    as_json = run("--db", db, "recall", "billing", "--embedder", "hash", "--json")
    assert as_json.json()["buckets"] and no_vectors_warning("hash") in as_json.err
    assert run("--db", db, "embed", "--all", "--embedder", "hash").code == 0
    embedded = run("--db", db, "recall", "billing staging-03", "--embedder", "hash")
    assert embedded.code == 0 and "layer=hybrid" in embedded.out and embedded.err == ""


def test_recall_embedder_whose_extra_is_missing_is_an_error(
    db: str, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(db)
    real = importlib.util.find_spec

    def find_spec(name: str, *args: object, **kwargs: object) -> object:
        return None if name == "onnxruntime" else real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    r = run("--db", db, "recall", "billing", "--embedder", "minilm")
    assert r.code == 1 and r.out == ""  # DESIGN §8: DependencyMissing is a runtime error
    assert "onnxruntime" in r.error_line and "pip install 'recallbox[embed]'" in r.error_line
    data = run("--db", db, "recall", "billing", "--embedder", "minilm", "--json").json()
    assert data["code"] == 1 and "onnxruntime" in data["error"]


def test_recall_json_is_bounded_whatever_the_hits_hold(db: str, run) -> None:
    long_channel = "c" * 400
    with recallbox.open(db) as box:
        for i in range(12):
            box.append(long_channel if i % 2 else f"ops-{i}", "user", "billing " * 3_000)
            box.remember("billing " * 900 + f"lesson {i}", type="guideline")
        section = "\n\n".join(f"## billing {i}\n\n" + "billing ledger " * 800 for i in range(12))
        box.add_document("# Billing\n\n" + section + "\n", "docs/" + "d" * 300 + ".md")
    r = run("--db", db, "recall", "billing", "--json")
    data = r.json()
    assert r.code == 0 and len(r.out) <= RECALL_JSON_MAX_CHARS
    hits = [h for b in data["buckets"] for h in b["hits"]]
    assert {"memory", "knowledge", "sessions"} <= {h["domain"] for h in hits}
    for hit in hits:
        assert len(hit["text"]) <= JSON_HIT_TEXT_MAX_CHARS < hit["text_chars"]
        assert hit["text"].endswith("…")  # the cut is marked; text_chars is the whole length
        for name in (hit["channel"], hit["source"]):
            assert name is None or len(name) <= JSON_NAME_MAX_CHARS
    assert len(data["text"]) <= data["budget_chars"]


def test_recall_scope_narrows_knowledge_and_code_only(db: str, run, tmp_path: Path) -> None:
    """``--scope`` is handed to the knowledge domain (the project plus the global library)
    and the code domain (that project's index); the other buckets ignore it."""
    with recallbox.open(db) as box:
        box.append("ops", "user", "zebra rollout notes")
        for scope in ("alpha", "beta"):
            box.add_document(
                f"# {scope}\n\n## zebra {scope}\n\nzebra runbook\n", f"{scope}.md", scope
            )
            repo = tmp_path / scope
            repo.mkdir()
            (repo / f"{scope}.py").write_text(f"def zebra_{scope}():\n    return 1\n")
            box.index_code(repo, scope=scope)
        box.add_document("# lib\n\n## zebra library\n\nzebra everywhere\n", "lib.md")
    everything = run("--db", db, "recall", "zebra", "--json").json()
    alpha = run("--db", db, "recall", "zebra", "--scope", "alpha", "--json").json()

    def sources(data: dict[str, object], domain: str) -> set[str]:
        (bucket,) = [b for b in data["buckets"] if b["domain"] == domain]  # type: ignore[attr-defined]
        return {h["source"] for h in bucket["hits"]}

    assert sources(everything, "knowledge") == {"alpha.md", "beta.md", "lib.md"}
    assert sources(alpha, "knowledge") == {"alpha.md", "lib.md"}
    assert sources(everything, "code") == {"alpha.py", "beta.py"}
    assert sources(alpha, "code") == {"alpha.py"}
    assert sources(alpha, "sessions") == sources(everything, "sessions") != set()
