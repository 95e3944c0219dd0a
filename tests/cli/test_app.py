"""The ``recallbox`` group as users run it: the installed script, --version, --help."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from backends import DbLocation
from recallbox.cli.shared import EXIT_INTERRUPTED


def test_version_is_fast_and_light() -> None:
    code = (
        "import sys; from recallbox.cli import main; sys.argv=['recallbox','--version'];\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('apsw', 'rich', 'mcp', 'onnxruntime') if m in sys.modules]\n"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "0.1.0" in out.stdout
    assert "HEAVY []" in out.stdout


def test_the_installed_script_end_to_end(
    db_location: DbLocation, tmp_path: Path, run_script
) -> None:
    db = str(db_location("x"))
    assert run_script("--version").out == "recallbox, version 0.1.0\n"
    r = run_script("append", "ops", "user", "deploy pg-primary-9 to staging", "--db", db)
    assert r.code == 0 and r.out.startswith("m_")
    r = run_script("search-memory", "pg-primary-9", "--db", db)
    assert r.code == 0 and "deploy pg-primary-9 to staging" in r.out


def test_the_installed_script_errors(
    bad_db: tuple[str, str], tmp_path: Path, run_script
) -> None:
    r = run_script("--db", str(tmp_path / "typo" / "x.db"), "search", "foo", "--json")
    assert (r.code, r.err) == (1, "")
    assert r.json() == {
        "error": f"no database at {tmp_path / 'typo' / 'x.db'} (run `recallbox init`)",
        "code": 1,
    }
    bad, says = bad_db
    r = run_script("--db", bad, "search", "foo")
    assert r.code == 1 and r.out == "" and len(r.err.splitlines()) == 1 and says in r.err
    r = run_script("--db", "", "search", "foo")
    assert r.code == 2 and "is empty" in r.err
    r = run_script("--db", bad, "read", "x" * 100_000, "--json")
    assert r.code == 1 and len(r.out) < 1_000 and r.json()["code"] == 1


def test_ctrl_c_exits_130(db_location: DbLocation, tmp_path: Path, fixtures: Path) -> None:
    """A real SIGINT during `import --watch`: exit 130, "interrupted", no traceback."""
    script = Path(sys.executable).parent / "recallbox"
    chat = fixtures / "openai" / "chat.json"
    args = ["--db", str(db_location("x")), "import", "openai", str(chat), "--watch"]
    proc = subprocess.Popen(
        [str(script), *args, "--interval", "0.1", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the first sync is done: the watch loop is running
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=60)
    assert json.loads(first)["added"] == 7
    assert proc.returncode == EXIT_INTERRUPTED
    assert err.splitlines()[-1] == "interrupted" and "Traceback" not in rest + err


def test_no_command_shows_the_help_and_exits_2(run) -> None:
    r = run()
    assert r.code == 2 and r.out == "" and r.err.startswith("Usage: ")
    assert "Commands:" in r.err
    r = run("policy", "--json")
    assert r.code == 2 and r.json() == {"error": "No such option '--json'.", "code": 2}
