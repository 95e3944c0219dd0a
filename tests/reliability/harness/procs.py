"""Starting job children in their own process group, and killing the whole group with -9."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from reliability.harness.jobs import DEFAULT_PARAMS, env_for_children

READY_TIMEOUT_S = 120
"""Watchdog: a child that has not finished its imports by then is a failure, not a wait."""
JOB_TIMEOUT_S = 300
"""Watchdog on a job that must finish (a completing run, a concurrent writer)."""


@dataclass(slots=True)
class Child:
    kind: str
    proc: subprocess.Popen[str]
    acks: Path
    stderr_path: Path
    _stderr: IO[str]

    def stderr(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self) -> None:
        """Block until the child printed ``ready`` (or fail if it died first)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if line.strip() == "ready":
                return
            if not line:
                raise AssertionError(f"{self.kind} died before ready: {self.stderr()[-2000:]}")
        raise AssertionError(f"{self.kind} not ready after {READY_TIMEOUT_S} s")

    def kill(self) -> int:
        """SIGKILL the child's whole process group (a CLI it runs dies with it), and the
        processes it started in sessions of their own (an MCP server the SDK spawned), which
        the child names in its pid file (:func:`record_pid`)."""
        for pid in _recorded_pids(self.stderr_path.with_name(_pid_file(self.stderr_path))):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):  # it may have ended by itself
            os.killpg(self.proc.pid, signal.SIGKILL)
        code = self.proc.wait()
        self.close()
        return code

    def wait(self, timeout: float = JOB_TIMEOUT_S) -> int:
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"{self.kind} still running after {timeout} s (a hang)") from None
        self.close()
        return code

    def close(self) -> None:
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._stderr.close()


def _pid_file(stderr_path: Path) -> str:
    return stderr_path.name.replace("stderr-", "pids-", 1)


def record_pid(work: Path, writer: str, pid: int) -> None:
    """Name ``pid`` (a process the job started outside its process group) for the kill."""
    with (work / _pid_file(Path(f"stderr-{writer}.txt"))).open("a") as out:
        out.write(f"{pid}\n")


def _recorded_pids(path: Path) -> list[int]:
    """The recorded pids still running a recallbox command (a pid reused since is left alone)."""
    if not path.exists():
        return []
    alive = []
    for line in path.read_text().split():
        cmdline = Path(f"/proc/{line}/cmdline")
        with contextlib.suppress(OSError):
            if b"recallbox" in cmdline.read_bytes():
                alive.append(int(line))
    return alive


def children_of(pid: int) -> list[int]:
    """The running processes whose parent is ``pid`` (read from ``/proc``)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def spawn(
    kind: str,
    db: Path | str,
    work: Path,
    *,
    writer: str,
    params: dict[str, Any] | None = None,
    acks: Path | None = None,
    extra_paths: tuple[Path, ...] = (),
    extra_env: dict[str, str] | None = None,
) -> Child:
    """Start ``kind`` in a new session (its own process group) with cwd ``work``."""
    acks = acks or work / f"acks-{writer}.jsonl"
    stderr_path = work / f"stderr-{writer}.txt"
    stderr = stderr_path.open("a", encoding="utf-8")
    args = {**DEFAULT_PARAMS.get(kind, {}), **(params or {})}
    env = {
        **env_for_children(extra_paths),
        "RECALLBOX_HOME": str(work / "home"),
        **(extra_env or {}),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reliability.harness.worker",
            kind,
            str(db),
            str(work),
            str(acks),
            writer,
            json.dumps(args),
        ],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        start_new_session=True,
    )
    return Child(kind, proc, acks, stderr_path, stderr)
