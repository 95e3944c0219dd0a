"""Starting job children in their own process group, and killing the whole group with -9."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from reliability.harness.jobs import DEFAULT_PARAMS, env_for_children

READY_TIMEOUT_S = 120
"""Watchdog: a child that has not finished its imports by then is a failure, not a wait."""
JOB_TIMEOUT_S = 300
"""Watchdog on a job that must finish (a completing run, a concurrent writer)."""


ZYGOTE_PRELOAD = {"mcp_remember": ("anyio", "mcp", "mcp.client.stdio")}
"""What a zygote serving these kinds imports beyond the job code (the MCP client)."""


class Zygote:
    """A fork server (:mod:`reliability.harness.zygote`) started with the children's
    environment; :func:`spawn` given one forks each child from it. One client thread at a
    time (a kill series owns its zygote)."""

    def __init__(self, kinds: Iterable[str] = ()) -> None:
        preload = sorted({m for kind in kinds for m in ZYGOTE_PRELOAD.get(kind, ())})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reliability.harness.zygote", *preload],
            env=env_for_children(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"the zygote ended (exit {self.proc.wait()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=JOB_TIMEOUT_S)
        self.proc.stdout.close()

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Forked:
    """The part of :class:`subprocess.Popen` a :class:`Child` uses, for a zygote's child."""

    def __init__(self, zygote: Zygote, pid: int, stdout: IO[str]) -> None:
        self.zygote, self.pid, self.stdout = zygote, pid, stdout
        self.returncode: int | None = None

    def _ask(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.ask({"wait": self.pid, "timeout": timeout})["code"]
        return self.returncode

    def poll(self) -> int | None:
        return self._ask(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._ask(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"forked child {self.pid}", timeout or 0)
        return code


@dataclass(slots=True)
class Child:
    kind: str
    proc: subprocess.Popen[str] | Forked
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
    db: Path,
    work: Path,
    *,
    writer: str,
    params: dict[str, Any] | None = None,
    acks: Path | None = None,
    extra_paths: tuple[Path, ...] = (),
    extra_env: dict[str, str] | None = None,
    zygote: Zygote | None = None,
) -> Child:
    """Start ``kind`` in a new session (its own process group) with cwd ``work``: a new
    interpreter, or a fork of ``zygote`` (its imports done once for all its children)."""
    acks = acks or work / f"acks-{writer}.jsonl"
    stderr_path = work / f"stderr-{writer}.txt"
    stderr = stderr_path.open("a", encoding="utf-8")
    args = {**DEFAULT_PARAMS.get(kind, {}), **(params or {})}
    env = {
        **env_for_children(extra_paths),
        "RECALLBOX_HOME": str(work / "home"),
        **(extra_env or {}),
    }
    argv = [kind, str(db), str(work), str(acks), writer, json.dumps(args)]
    if zygote is not None:
        return Child(kind, _fork(zygote, argv, work, env, stderr_path), acks, stderr_path, stderr)
    proc = subprocess.Popen(
        [sys.executable, "-m", "reliability.harness.worker", *argv],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        start_new_session=True,
    )
    return Child(kind, proc, acks, stderr_path, stderr)


def _fork(zygote: Zygote, argv: list[str], work: Path, env: dict[str, str], stderr: Path) -> Forked:
    """Fork a child from ``zygote``; its stdout is a FIFO read here (see the zygote's module)."""
    fifo = work / f"stdout-{argv[4]}-{os.getpid()}.fifo"
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader first: the zygote's open returns
    try:
        request = {"argv": argv, "cwd": str(work), "env": env, "stdout": str(fifo)}
        pid = int(zygote.ask({**request, "stderr": str(stderr)})["pid"])
    except BaseException:
        os.close(fd)
        raise
    finally:
        fifo.unlink()
    os.set_blocking(fd, True)
    return Forked(zygote, pid, os.fdopen(fd, "r", encoding="utf-8"))
