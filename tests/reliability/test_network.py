"""No network at run time (#15 item 5, DESIGN principle 10): the main paths — open, append,
import, search, search_memory, embed with the hash and MiniLM embedders, the CLI, MCP over stdio
and streamable HTTP on loopback — run with every socket blocked except Unix-domain and loopback
ones (a ``sitecustomize`` loaded in every process of the run), and attempt no other connection."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from backends import DbLocation
from reliability.harness.jobs import env_for_children
from reliability.harness.netpaths import SELF_CHECK

NETGUARD = Path(__file__).parent / "harness" / "netguard"
RUN_TIMEOUT_S = 600


def test_the_main_paths_attempt_no_connection(db_location: DbLocation, tmp_path: Path) -> None:
    log = tmp_path / "attempts.log"
    env = {
        **env_for_children((NETGUARD,)),
        "RECALLBOX_NETGUARD_LOG": str(log),
        "RECALLBOX_HOME": str(tmp_path / "home"),
        "HF_HUB_OFFLINE": "0",
    }
    done = subprocess.run(
        [sys.executable, "-m", "reliability.harness.netpaths", str(db_location("net"))],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert (done.returncode, done.stdout.strip().splitlines()[-1:]) == (0, ["ok"]), done.stderr
    attempts = [line for line in log.read_text().splitlines() if line and line[0].isdigit()]
    assert [a.split(" ", 1)[1] for a in attempts] == [f"connect {SELF_CHECK!r}"]
