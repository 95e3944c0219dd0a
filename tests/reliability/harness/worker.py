"""A child process running one job: ``python -m reliability.harness.worker KIND DB WORK ACKS
WRITER PARAMS_JSON``. It prints ``ready`` once its imports are done (the kill clock starts
there), and exits 0 when the job finished."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from reliability.harness.ack import AckLog
from reliability.harness.jobs import JOB_KINDS, JobContext

READY = "ready"


def main(argv: list[str]) -> int:
    kind, db, work, acks, writer, params = argv
    job = JOB_KINDS[kind]
    args = json.loads(params)
    if "busy_ms" in args:  # a reader that must not wait: fail fast instead of after 30 s
        from recallbox.storage.sqlite import connection

        connection.BUSY_TIMEOUT_MS = int(args["busy_ms"])

    def ready() -> None:
        sys.stdout.write(READY + "\n")
        sys.stdout.flush()

    with AckLog(Path(acks)) as ack:
        location = db if "://" in db else Path(db)  # a PostgreSQL URL, or a SQLite file
        job.run(JobContext(location, Path(work), ack, writer, args, ready))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
