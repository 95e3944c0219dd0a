"""``serve``, ``recallbox ui`` and ``python -m recallbox.web.serve``: the URL line, host refusal,
Ctrl-C."""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.web.server import launch, running, stop

import recallbox
from recallbox.web.serve import allowed_hosts, check_bind, is_loopback, main, serve, url_host


@pytest.fixture
def db(db_path: Path) -> Path:
    with recallbox.open(db_path) as box:
        box.append("demo", "user", "hello")
    return db_path


def get(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    host, port = re.match(r"http://([^:/]+):(\d+)/", url).groups()  # type: ignore[union-attr]
    connection = http.client.HTTPConnection(host, int(port))
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.0.1", "localhost", "::1", "[::1]"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)
    check_bind(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.org"])
def test_a_non_loopback_host_needs_a_token(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(recallbox.InvalidArgument, match="without a token"):
        check_bind(host, None)
    check_bind(host, "t")
    with pytest.raises(recallbox.InvalidArgument, match="must not be empty"):
        check_bind(host, " ")


def test_serve_refuses_before_binding(box: recallbox.Box) -> None:
    with pytest.raises(recallbox.InvalidArgument):
        serve(box, "0.0.0.0", 0, None)


def test_allowed_hosts_name_the_port() -> None:
    assert allowed_hosts("127.0.0.1", 9) == ("127.0.0.1:9", "localhost:9")
    assert allowed_hosts("::1", 9) == ("[::1]:9", "localhost:9", "127.0.0.1:9")
    assert url_host("::1") == "[::1]"


def test_module_refuses_0000_without_a_token_with_exit_2(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(db), "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--token" in err and "RECALLBOX_UI_TOKEN" in err


def test_module_refuses_a_missing_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.db"
    assert main(["--db", str(missing), "--port", "0"]) == 1
    assert "no database at" in capsys.readouterr().err and not missing.exists()


def test_first_line_is_the_url_and_ctrl_c_stops_cleanly(db: Path, tmp_home: Path) -> None:
    process = launch(db, tmp_home)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\n", line)
    assert get(line, "/healthz") == (200, "ok")
    assert get(line, "/healthz", {"host": "evil.example"})[0] == 403
    code, err = stop(process)
    assert code == 130 and "Traceback" not in err


def test_token_mode_over_http(db: Path, tmp_home: Path) -> None:
    with running(db, tmp_home, "--token", "tok") as server:
        assert get(server.url, "/")[0] == 401
        assert get(server.url, "/", {"authorization": "Bearer tok"})[0] == 200
        assert get(server.url, "/?token=tok")[0] == 303


def test_a_port_in_use_is_one_error(db: Path, tmp_home: Path) -> None:
    with running(db, tmp_home) as server:
        port = server.url.rsplit(":", 1)[1].strip("/")
        code = main(["--db", str(db), "--port", port])
        assert code == 1


def _ui(db: Path, home: Path, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RECALLBOX_HOME": str(home)}
    env.pop("RECALLBOX_UI_TOKEN", None)
    if token is not None:
        env["RECALLBOX_UI_TOKEN"] = token
    command = [sys.executable, "-m", "recallbox", "ui", "--db", str(db), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_recallbox_ui_refuses_0000_without_a_token_with_one_line_and_exit_2(
    db: Path, tmp_home: Path
) -> None:
    done = _ui(db, tmp_home, "--host", "0.0.0.0", "--port", "0")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "--token" in done.stderr and "RECALLBOX_UI_TOKEN" in done.stderr


def test_recallbox_ui_refuses_a_missing_database_and_a_bad_port(tmp_path: Path, tmp_home: Path) -> None:
    missing = tmp_path / "none.db"
    done = _ui(missing, tmp_home, "--port", "0")
    assert done.returncode == 1 and "no database at" in done.stderr and not missing.exists()
    assert _ui(missing, tmp_home, "--port", "70000").returncode == 2


def test_recallbox_ui_takes_the_token_from_the_environment(db: Path, tmp_home: Path) -> None:
    env = {**os.environ, "RECALLBOX_HOME": str(tmp_home), "RECALLBOX_UI_TOKEN": "envtok"}
    command = [sys.executable, "-m", "recallbox", "ui", "--db", str(db), "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        url = process.stdout.readline()
        assert re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\n", url)
        assert get(url, "/")[0] == 401
        assert get(url, "/", {"authorization": "Bearer envtok"})[0] == 200
    finally:
        code, err = stop(process)
    assert code == 130 and "Traceback" not in err


def test_recallbox_ui_defaults_to_loopback_port_8765_without_a_token(
    db: Path, tmp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from recallbox.cli.app import cli

    served: list[tuple[str, int, str | None]] = []
    monkeypatch.setattr("recallbox.web.serve.serve", lambda box, h, p, t: served.append((h, p, t)))
    monkeypatch.delenv("RECALLBOX_UI_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["--db", str(db), "ui"], env={"RECALLBOX_HOME": str(tmp_home)})
    assert result.exit_code == 0, result.output
    assert served == [("127.0.0.1", 8765, None)]
