"""The rules behind the Box's thread verbs that are more than one store call (DESIGN §2, §3.4).

* a thread is looked up by its (normalised) channel; an unknown one is ``NotFound``;
* a generation number is 1-based and must exist;
* a compaction needs a summary with text; the engine appends, mechanically, the closed
  generation's resource directory and the line that says how to recover a resource
  (``recallbox.domains.resources``), then opens the next generation with it.
"""

from __future__ import annotations

from recallbox.domains.messages import build_row, check_channel
from recallbox.domains.resources import summary_with_directory
from recallbox.errors import InvalidArgument, NotFound
from recallbox.storage.base import ThreadStore
from recallbox.text.normalize import normalize_text
from recallbox.types import Generation, Thread


def find_thread(store: ThreadStore, channel: str) -> Thread:
    """The thread of ``channel``.

    Raises:
        InvalidArgument: ``channel`` is not a non-empty string.
        NotFound: no thread has this channel.
    """
    thread = store.get_thread(check_channel(channel))
    if thread is None:
        raise NotFound(f"unknown channel {channel!r}; see `recallbox thread list`")
    return thread


def check_generation(thread: Thread, generation: int | None) -> int | None:
    """``generation`` when it names a generation of ``thread`` (``None``: all of them).

    Raises:
        InvalidArgument: not a 1-based number.
        NotFound: the thread has fewer generations.
    """
    if generation is None:
        return None
    if not isinstance(generation, int) or generation < 1:
        raise InvalidArgument(f"generation is a 1-based number, got {generation!r}")
    if generation > thread.generation_count:
        raise NotFound(
            f"thread {thread.channel!r} has {thread.generation_count} generation(s), "
            f"not {generation}"
        )
    return generation


def check_summary(summary: object) -> str:
    """A compaction summary: a string with some text (DESIGN §3.4).

    Raises:
        InvalidArgument: not a string, or empty / whitespace only.
    """
    if not isinstance(summary, str):
        raise InvalidArgument(f"summary must be a string, got {type(summary).__name__}")
    if not normalize_text(summary).strip():
        raise InvalidArgument(
            "summary is empty; pass the text that sums up the generation being closed"
        )
    return summary


def compact(store: ThreadStore, thread: Thread, summary: str) -> Generation:
    """Close ``thread``'s current generation and open the next with ``summary`` (and the
    closed generation's resource directory) as its first message."""
    closing = store.current_generation(thread.channel)
    text = summary_with_directory(
        check_summary(summary),
        store.iter_messages(thread.channel, closing.number),
        thread.channel,
        closing.number,
    )
    store.append(thread.channel, [build_row("system", text, kind="compaction_summary")])
    return store.current_generation(thread.channel)
