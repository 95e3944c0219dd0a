"""A watchdog for calls that must end: a hang is a failure, never a wait (and never a timed
assertion on speed). ``faulthandler`` fires from its own C thread, so it also catches a call
stuck inside SQLite; it dumps every thread's stack and ends the process."""

from __future__ import annotations

import faulthandler
import sys
from collections.abc import Iterator
from contextlib import contextmanager

CALL_WATCHDOG_S = 120
"""Any single hostile call ending later than this is a hang (normal calls take milliseconds)."""


@contextmanager
def watchdog(seconds: float = CALL_WATCHDOG_S) -> Iterator[None]:
    faulthandler.dump_traceback_later(seconds, exit=True, file=sys.__stderr__)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
