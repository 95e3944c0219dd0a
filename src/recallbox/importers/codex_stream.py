"""The streaming reader of Codex CLI rollouts (the incremental face of
:mod:`recallbox.importers.codex`; the mapping rules are listed there).

A rollout maps line by line, so the reader only remembers what later lines inherit: the session
meta (thread name, parent thread) and the ``cwd``/``model`` of the last ``turn_context``. Each
item's record key is the hash of its source line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recallbox.importers._common import OTHER_SESSION_IDS_KEY
from recallbox.importers.codex import _Rollout, session_id_from_filename
from recallbox.importers.records import FORMAT_CODEX
from recallbox.importers.stream import Output, SourceLine

STATE_FIELDS = ("session_id", "parent_id", "meta_seen", "cwd", "git_branch", "model")


class CodexReader:
    """Reads one Codex rollout incrementally."""

    def __init__(self, path: Path, *, state: dict[str, Any] | None = None) -> None:
        self.path = path
        self._rollout = _Rollout(source_file=str(path))
        self.report = self._rollout.report
        for name in STATE_FIELDS:
            if state and name in state:
                setattr(self._rollout, name, state[name])
        others = (state or {}).get(OTHER_SESSION_IDS_KEY)
        if isinstance(others, list):
            self._rollout.other_ids = [str(o) for o in others]
        self._keys: dict[int, str] = {}

    def feed(self, line: SourceLine, data: dict[str, Any]) -> None:
        before = len(self._rollout.items)
        self._rollout.add(line.number, data)
        if len(self._rollout.items) != before:
            self._keys[line.number] = line.key()

    def _channels(self) -> tuple[str, str | None]:
        rollout = self._rollout
        session_id = rollout.session_id or session_id_from_filename(self.path)
        parent = f"{FORMAT_CODEX}:{rollout.parent_id}" if rollout.parent_id else None
        return f"{FORMAT_CODEX}:{session_id}", parent

    def drain(self, *, final: bool) -> list[Output]:
        channel, parent = self._channels()
        items, self._rollout.items = self._rollout.items, []
        keys, self._keys = self._keys, {}
        return [
            Output(channel=channel, item=item, key=keys[item.line_start], parent_channel=parent)
            for item in items
        ]

    def hold_line(self) -> int | None:
        return None

    def dirty_trees(self, *, full: bool = False) -> set[tuple[str, bool]]:
        return set()

    def titles(self, is_live: Any) -> dict[str, str | None]:
        return {}

    def state(self) -> dict[str, Any]:
        state = {name: getattr(self._rollout, name) for name in STATE_FIELDS}
        if self._rollout.other_ids:
            state[OTHER_SESSION_IDS_KEY] = list(self._rollout.other_ids)
        return state
