"""A cancel token for reads: what gives a recall domain's time limit its teeth (DESIGN §5).

A :class:`Deadline` is handed to ``store.read_snapshot(deadline=…)``; every statement the
calling thread runs inside that snapshot is stopped by the store once the deadline has passed
(or :meth:`Deadline.cancel` was called, from any thread), and raises
:class:`~recallbox.errors.TimedOut`. A statement is stopped where it stands — the SQLite backend
checks the token from a progress handler every few thousand virtual-machine steps, a PostgreSQL
backend sets ``statement_timeout`` from :meth:`Deadline.remaining` — so a slow domain frees its
worker at the deadline instead of running on after its caller gave up.

Backend-neutral: no driver here, only a clock (:func:`time.monotonic`).
"""

from __future__ import annotations

import time


class Deadline:
    """A point in time after which reads stop; cancellable and extendable from any thread.

    Args:
        seconds: how long from now reads may run; ``None`` means no time limit (only
            :meth:`cancel` stops them).
    """

    __slots__ = ("_at", "_cancelled")

    def __init__(self, seconds: float | None = None) -> None:
        self._at: float | None = None if seconds is None else time.monotonic() + seconds
        self._cancelled = False

    @property
    def expired(self) -> bool:
        """True once the deadline has passed or :meth:`cancel` was called."""
        if self._cancelled:
            return True
        at = self._at
        return at is not None and time.monotonic() >= at

    def remaining(self) -> float | None:
        """Seconds left (0.0 once expired); ``None`` for no time limit."""
        if self._cancelled:
            return 0.0
        at = self._at
        return None if at is None else max(0.0, at - time.monotonic())

    def cancel(self) -> None:
        """Stop the reads now (the next check of a running statement stops it)."""
        self._cancelled = True

    def extend(self, seconds: float) -> None:
        """Move the deadline to ``seconds`` from now (a cancelled deadline stays cancelled)."""
        self._at = time.monotonic() + seconds

    def __repr__(self) -> str:
        left = self.remaining()
        return f"Deadline(remaining={'none' if left is None else f'{left:.3f}s'})"
