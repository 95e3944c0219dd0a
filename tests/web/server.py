"""Run the real inspector in a subprocess (``recallbox ui``, as ``python -m recallbox ui``) for a
test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: How long a starting server may take to print its URL before the test gives up (a guard
#: against a hung test, not a speed assertion).
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Server:
    """A running inspector: its URL (first stdout line) and its process."""

    url: str
    process: subprocess.Popen[str]

    @property
    def origin(self) -> str:
        """The URL without its trailing ``/``."""
        return self.url.rstrip("/")


def _first_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(START_TIMEOUT_S)
    if not line or not line[0]:
        process.kill()
        _, err = process.communicate(timeout=STOP_TIMEOUT_S)
        raise AssertionError(f"the inspector printed no URL; stderr:\n{err}")
    return line[0].rstrip("\n")


def launch(db: Path, home: Path, *extra: str) -> subprocess.Popen[str]:
    """Start ``recallbox ui --db DB --port 0 EXTRA…`` (not waiting)."""
    env = {**os.environ, "RECALLBOX_HOME": str(home)}
    env.pop("RECALLBOX_UI_TOKEN", None)
    command: Sequence[str] = [sys.executable, "-m", "recallbox", "ui", "--db", str(db), "--port", "0", *extra]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Ctrl-C the server and wait for it; returns (exit code, stderr)."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return process.returncode, err


@contextmanager
def running(db: Path, home: Path, *extra: str) -> Iterator[Server]:
    """The inspector over ``db`` on a free port, stopped (Ctrl-C) on exit."""
    process = launch(db, home, *extra)
    try:
        yield Server(_first_line(process), process)
    finally:
        stop(process)
