"""A fork server for job children: ``python -m reliability.harness.zygote [MODULE ...]`` imports
the job code (and ``MODULE``\\ s) once, then forks one child per request. A kill series starts
80-odd children per CI run; each paid the interpreter's start and the imports of recallbox and
the harness (about 0.35 s of CPU) before its ``ready`` line, and now a fork (milliseconds).
What is killed is unchanged: a child is a process of its own, in its own session, running the
same :func:`reliability.harness.worker.main`; a job that drives the CLI or an MCP server still
starts them as real processes.

Protocol, one JSON line each way, one request at a time:

* ``{"argv": [...], "cwd": D, "env": {...}, "stdout": FIFO, "stderr": PATH}`` → ``{"pid": N}``:
  the child runs in a new session (``kill -9`` of its group ends it and what it started), in
  ``D`` with exactly ``env``, stdin ``/dev/null``, stdout the FIFO the parent reads (opened here
  before the fork, so the parent never sees an end of file before the child exists), stderr
  appended to ``PATH``;
* ``{"wait": N, "timeout": T}`` → ``{"code": C}``: the child's exit code as
  :class:`subprocess.Popen` gives it (``-9`` when killed), or ``null`` still running after
  ``T`` seconds (``0``: just look; ``null``: wait for the end).

End of input ends the zygote (children live on, as children of a killed parent would).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import time
from typing import Any

POLL_S = 0.005
"""How often a timed wait looks at its child again."""


def _child(request: dict[str, Any], fifo_fd: int) -> None:
    """In the forked child: set up its session and files, run the job, never return."""
    code = 1
    try:
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(fifo_fd, 1)
        os.dup2(os.open(request["stderr"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), 2)
        os.close(fifo_fd)
        from reliability.harness import worker

        code = worker.main(request["argv"])
    except SystemExit as exit_:  # as the interpreter ends on one: a message is printed, exit 1
        if exit_.code is None or isinstance(exit_.code, int):
            code = exit_.code or 0
        else:
            sys.stderr.write(f"{exit_.code}\n")
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _wait(pid: int, timeout: float | None) -> int | None:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, 0 if deadline is None else os.WNOHANG)
        if done == pid:
            return os.waitstatus_to_exitcode(status)
        if deadline is not None and time.monotonic() >= deadline:
            return None
        time.sleep(POLL_S)


def main(preload: list[str]) -> int:
    from reliability.harness import worker  # noqa: F401  (imported once, for every child)

    for module in preload:
        importlib.import_module(module)
    answer = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        if "argv" in request:
            fifo_fd = os.open(request["stdout"], os.O_WRONLY)
            answer.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(request, fifo_fd)
            os.close(fifo_fd)
            reply: dict[str, Any] = {"pid": pid}
        else:
            reply = {"code": _wait(int(request["wait"]), request.get("timeout"))}
        answer.write(json.dumps(reply) + "\n")
        answer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
