"""Coverage-guided fuzzing (atheris) of the text entry points, for the reliability long run.

    python benchmarks/reliability_fuzz.py -runs=20000 -timeout=60

One input (bytes) becomes: an importer line (``decode_line`` and the Claude Code and Codex
readers), a query for ``search_memory`` / ``search`` / ``read_message``, and a message whose
content, tool-call arguments and metadata are drawn from it. A library error
(``RecallError``) is an answer; any other exception is a crash, and libFuzzer's ``-timeout``
is the per-input watchdog. Needs ``pip install atheris`` (not a recallbox dependency).
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src")]

import atheris  # noqa: E402

with atheris.instrument_imports():
    import recallbox
    from recallbox.importers._common import FileReport
    from recallbox.importers.stream import SourceLine, TruncatedTail, decode_line

BOX = recallbox.open(":memory:")
for i in range(20):
    BOX.append(f"t{i % 3}", "user", f"deploy staging item{i} 中文检索 pg-primary-9")
BOX.quarantine("t2")


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    line = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096))
    query = fdp.ConsumeUnicode(256)
    content = fdp.ConsumeUnicode(2048)
    with contextlib.suppress(TruncatedTail):
        decode_line(SourceLine(1, 0, len(line), line + b"\n"), FileReport())
    calls = [
        lambda: BOX.search_memory(query),
        lambda: BOX.search_memory(query, channel="t1"),
        lambda: BOX.search(query, allow_embed=False),
        lambda: BOX.read_message(query),
    ]
    for call in calls:
        with contextlib.suppress(recallbox.RecallError):
            call()
    try:
        arguments: object = json.loads(content)
    except (ValueError, RecursionError):
        arguments = content
    try:
        message = BOX.append(
            "fuzz",
            "assistant",
            content,
            metadata={"k": content[:64]},
            tool_calls=[{"id": "c", "name": "n", "arguments": arguments}],
        )
    except recallbox.InvalidArgument:
        return
    BOX.read_message(message.id)


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
