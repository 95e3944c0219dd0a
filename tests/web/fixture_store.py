"""The inspector's fixture store: every kind of record a page shows, with canaries and hostile
content (issue #20 acceptance).

* ``DEPLOY`` — a channel with ``/``, ``#`` and spaces, compacted twice (three generations),
  tool calls with nested arguments, a 50 000-character tool output that ends in ``LONG_END``,
  and pending, hidden, superseded and machine-event messages;
* ``HOSTILE`` — a thread whose channel, title, content, arguments and metadata try to run
  script or break out of the markup;
* ``SECRET`` — a quarantined thread (compacted once) whose text, arguments, metadata and summary
  carry ``CANARY_QUARANTINED``;
* an imported OpenAI transcript ``private-export.json`` whose source is excluded, its text
  carrying ``CANARY_EXCLUDED``;
* memory entries in every state (active, evergreen, dormant, archived, superseded), a knowledge
  directory (one document edited after the sync: stale), a small code index (one file edited
  after indexing: stale) and hit-log rows from a recall and a drill.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import recallbox
from recallbox.domains.memory_ops import remember

DEPLOY = "ops/deploy #42 staging"
HOSTILE = 'notes <b>&</b> "odd" channel?'
SECRET = "secret-thread"
EXCLUDED_FILE = "private-export.json"
EXCLUDED_CHANNEL = "openai:conv-private"
CANARY_QUARANTINED = "CANARYQ5d1f0c"
CANARY_EXCLUDED = "CANARYXa93e27"
LONG_CHARS = 50_000
LONG_END = "END-OF-LONG-OUTPUT-7c1e"
#: Set by any of the hostile payloads if one ever runs.
PWNED_FLAG = "__recallbox_pwned"
HOSTILE_TEXT = (
    f'<script>window.{PWNED_FLAG} = "script"</script>\n'
    f"<img src=x onerror=\"window.{PWNED_FLAG}='img'\">\n"
    f"<a href=\"javascript:window.{PWNED_FLAG}='link'\">click me</a>\n"
    f"</textarea></pre></details><svg onload=\"window.{PWNED_FLAG}='svg'\"></svg>\n"
    "{{ 7 * 7 }} {% raw %} ${7*7}"
)
START = datetime(2025, 7, 1, 8, 0, tzinfo=UTC)
MEMORY_ACTIVE = "Run the billing migrations before the rollout, never after."
MEMORY_EVERGREEN = "Verify a deploy by its pods, not by the CI badge."
MEMORY_DORMANT = "The staging cluster needs the VPN profile named ops-eu."
MEMORY_ARCHIVED = "The old release script lived in tools/release.sh."
KNOWLEDGE_DIR = "kb"
KNOWLEDGE_STALE = "deploy.md"
KNOWLEDGE_FRESH = "runbook.txt"
CODE_DIR = "billing-svc"
CODE_STALE = "util.py"
CODE_FRESH = "app.py"


@dataclass(frozen=True)
class Fixture:
    """Ids the tests look for."""

    long_output_id: str
    nested_call_id: str
    hostile_id: str
    secret_ids: tuple[str, ...]
    excluded_ids: tuple[str, ...]
    pending_id: str
    superseded_id: str
    memory_keys: tuple[str, ...] = ()


def _at(minutes: int) -> datetime:
    return START + timedelta(minutes=minutes)


def long_output() -> str:
    """A 50 000-character tool output whose last characters are :data:`LONG_END`."""
    line = "2025-07-01T08:03:00Z deploy[77]: waiting for rollout of billing (3/4 ready)\n"
    body = (line * (LONG_CHARS // len(line) + 1))[: LONG_CHARS - len(LONG_END)]
    return body + LONG_END


def _deploy(box: recallbox.Box) -> tuple[str, str, str, str]:
    box.create_thread(DEPLOY, title="Deploy billing to staging")
    first = box.append_many(
        DEPLOY,
        [
            {"role": "system", "kind": "machine_event", "content": "session started in /srv/billing", "created_at": _at(0)},
            {"role": "user", "content": "Roll out billing 4f2c9e1 to staging and watch it.", "created_at": _at(1)},
            {
                "role": "assistant",
                "content": "Rolling out with kubectl.",
                "created_at": _at(2),
                "tool_calls": [
                    {
                        "id": "call_rollout",
                        "name": "bash",
                        "arguments": {
                            "command": "kubectl rollout status deploy/billing -n staging",
                            "options": {"namespace": "staging", "flags": ["--watch", {"timeout": 300}]},
                            "files": [{"path": "/srv/billing/deploy.yaml"}, {"path": "/srv/billing/env"}],
                        },
                    }
                ],
            },
            {"role": "tool", "content": long_output(), "tool_call_id": "call_rollout", "created_at": _at(3)},
            {"role": "assistant", "content": "A draft answer that was replaced.", "created_at": _at(4)},
            {"role": "assistant", "content": "The rollout finished: 4/4 pods ready.", "created_at": _at(5)},
        ],
    )
    box.supersede(first[4].id, by=first[5].id)
    box.compact(DEPLOY, "Billing 4f2c9e1 rolled out to staging; the rollout took three minutes.")
    box.append_many(
        DEPLOY,
        [
            {"role": "user", "content": "Now run the billing migrations on staging.", "created_at": _at(30)},
            {"role": "assistant", "content": "Internal note the model never saw.", "model_visible": False, "created_at": _at(31)},
        ],
    )
    box.compact(DEPLOY, "Migrations were requested after the staging rollout.")
    pending = box.append(DEPLOY, "user", "Queued: check the error budget.", pending=True, created_at=_at(60))
    return first[3].id, first[2].id, first[4].id, pending.id


def _hostile(box: recallbox.Box) -> str:
    box.create_thread(HOSTILE, title='<img src=x onerror="alert(1)"> title')
    message = box.append(
        HOSTILE,
        "assistant",
        HOSTILE_TEXT,
        tool_calls=[{"id": "call_x", "name": "<script>tool</script>", "arguments": {"<b>key</b>": HOSTILE_TEXT}}],
        metadata={"note": HOSTILE_TEXT},
        created_at=_at(90),
    )
    return message.id


def _secret(box: recallbox.Box) -> tuple[str, ...]:
    box.create_thread(SECRET, title="Quarantined work")
    first = box.append_many(
        SECRET,
        [
            {"role": "user", "content": f"the vault password is {CANARY_QUARANTINED}", "created_at": _at(10)},
            {
                "role": "assistant",
                "content": "Storing it.",
                "metadata": {"secret": CANARY_QUARANTINED},
                "tool_calls": [{"id": "call_v", "name": "vault_put", "arguments": {"value": CANARY_QUARANTINED}}],
                "created_at": _at(11),
            },
        ],
    )
    box.compact(SECRET, f"The summary repeats {CANARY_QUARANTINED}.")
    later = box.append(SECRET, "user", f"again {CANARY_QUARANTINED}", created_at=_at(12))
    box.quarantine(SECRET)
    return (*(m.id for m in first), later.id)


def _excluded(box: recallbox.Box, folder: Path) -> tuple[str, ...]:
    path = folder / EXCLUDED_FILE
    document = {
        "id": EXCLUDED_CHANNEL.removeprefix("openai:"),
        "title": "Private export",
        "messages": [
            {"role": "user", "content": f"my private note {CANARY_EXCLUDED}"},
            {"role": "assistant", "content": f"Noted: {CANARY_EXCLUDED}."},
        ],
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    report = box.import_transcripts("openai", path)
    assert report.errors == () and report.added == 2
    box.exclude_source(EXCLUDED_FILE)
    return tuple(m.id for m in box.messages(EXCLUDED_CHANNEL))


def _memory(box: recallbox.Box) -> tuple[str, ...]:
    today = date.today()
    active = box.remember(MEMORY_ACTIVE, type="process", title="Migrations first")
    evergreen = box.remember(MEMORY_EVERGREEN, type="principle", title="Pods, not badges")
    dormant = remember(box.store, MEMORY_DORMANT, "pitfall", "VPN for staging", today=today - timedelta(days=120))
    archived = remember(box.store, MEMORY_ARCHIVED, "decision", "Release script", today=today - timedelta(days=400))
    old = box.remember("Deploy on Fridays only with a second reviewer.", type="guideline")
    new = box.remember("Deploy on any weekday with a second reviewer.", type="guideline")
    box.supersede_memory(old.key, by=new.key)
    box.decay(today - timedelta(days=100))  # the 400-day-old entry goes dormant
    box.decay(today)  # ... and archived; the 120-day-old one dormant
    box.touch(active.key)
    return (active.key, evergreen.key, dormant.key, archived.key, old.key, new.key)


def _knowledge(box: recallbox.Box, folder: Path) -> None:
    root = folder / KNOWLEDGE_DIR
    root.mkdir()
    (root / KNOWLEDGE_STALE).write_text(
        "# Deploying billing\n\n## Staging\n\nRoll out with kubectl.\n\n## Production\n\nAsk first.\n",
        encoding="utf-8",
    )
    (root / KNOWLEDGE_FRESH).write_text("Check the error budget before any rollout.\n", encoding="utf-8")
    box.sync_directory(root)
    (root / KNOWLEDGE_STALE).write_text(
        "# Deploying billing\n\n## Staging\n\nRoll out with helm now.\n", encoding="utf-8"
    )


def _code(box: recallbox.Box, folder: Path) -> None:
    root = folder / CODE_DIR
    root.mkdir()
    (root / CODE_STALE).write_text("def rollout_ready(pods):\n    return all(pods)\n", encoding="utf-8")
    (root / CODE_FRESH).write_text(
        "from util import rollout_ready\n\n\nclass Deployer:\n    def watch(self, pods):\n"
        "        return rollout_ready(pods)\n",
        encoding="utf-8",
    )
    box.index_code(root)
    (root / CODE_STALE).write_text("def rollout_ready(pods):\n    return bool(pods) and all(pods)\n", encoding="utf-8")


def build_fixture(box: recallbox.Box, folder: Path, *, hostile: bool = True) -> Fixture:
    """Fill ``box`` with the fixture (``folder`` receives the transcript file); without
    ``hostile`` the hostile thread is left out (the screenshots)."""
    long_id, call_id, superseded_id, pending_id = _deploy(box)
    secret_ids = _secret(box)
    excluded_ids = _excluded(box, folder)
    hostile_id = _hostile(box) if hostile else ""
    memory_keys = _memory(box)
    _knowledge(box, folder)
    _code(box, folder)
    box.recall("billing rollout staging")
    box.read_message(call_id)
    return Fixture(
        long_output_id=long_id,
        nested_call_id=call_id,
        hostile_id=hostile_id,
        secret_ids=secret_ids,
        excluded_ids=excluded_ids,
        pending_id=pending_id,
        superseded_id=superseded_id,
        memory_keys=memory_keys,
    )
