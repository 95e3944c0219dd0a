"""Serve the inspector with uvicorn: ``serve(box, host, port, token)``, and a module entry point.

``python -m recallbox.web.serve [--db PATH] [--host 127.0.0.1] [--port 8765] [--token T]``
(``--port 0`` picks a free port). The socket is bound and listening before the first line is
written, so the URL on that line — ``http://HOST:PORT/``, flushed at once — answers as soon as
it is read. Ctrl-C stops the server cleanly (exit 130 from the entry point).

Binding anything but a loopback address needs a token (``--token`` or ``RECALLBOX_UI_TOKEN``):
without one :func:`serve` raises :class:`~recallbox.InvalidArgument` (a usage error, exit 2).
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import recallbox
from recallbox import Box, InvalidArgument, RecallError
from recallbox.config import load_settings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
ENV_TOKEN = "RECALLBOX_UI_TOKEN"
LISTEN_BACKLOG = 64
#: How long a Ctrl-C waits for open requests before closing them.
GRACEFUL_SHUTDOWN_S = 3
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse a non-loopback ``host`` without a token, and an empty token.

    Raises:
        InvalidArgument: as above, with one line that says what to do.
    """
    if token is not None and not token.strip():
        raise InvalidArgument("the inspector's token must not be empty")
    if not is_loopback(host) and token is None:
        raise InvalidArgument(
            f"refusing to serve the inspector on non-loopback host {host!r} without a token; "
            f"pass --token or set {ENV_TOKEN}"
        )


def _bind(host: str, port: int) -> socket.socket:
    name = "127.0.0.1" if host.lower() == "localhost" else host.strip("[]")
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say TCP, and without it
    # every keep-alive response waits ~40 ms for a delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((name, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        raise RecallError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


def url_host(host: str) -> str:
    """``host`` as it stands in a URL (an IPv6 address in brackets)."""
    bare = host.strip("[]")
    return f"[{bare}]" if ":" in bare else bare


def allowed_hosts(host: str, port: int) -> tuple[str, ...]:
    """The ``Host`` values served: the bound address, ``localhost`` and ``127.0.0.1`` (and
    ``[::1]`` when bound there), each with the port."""
    names = dict.fromkeys([url_host(host).lower(), "localhost", "127.0.0.1"])
    if url_host(host) == "[::1]":
        names["[::1]"] = None
    return tuple(f"{name}:{port}" for name in names)


def serve(
    box: Box,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    *,
    out: TextIO | None = None,
) -> None:
    """Serve the inspector over ``box`` until Ctrl-C; the first line on ``out`` is the URL.

    Raises:
        InvalidArgument: a non-loopback ``host`` without a token, or an empty token.
        RecallError: the address cannot be bound (in use, not local, ...).
    """
    import uvicorn

    from recallbox.web.app import build_app

    check_bind(host, token)
    sock = _bind(host, port)
    bound_port = int(sock.getsockname()[1])
    app = build_app(box, token=token, allowed_hosts=allowed_hosts(host, bound_port))
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        server_header=False,
        lifespan="off",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    stream = out if out is not None else sys.stdout
    print(f"http://{url_host(host)}:{bound_port}/", file=stream, flush=True)
    if token is not None:
        print(
            "token required: open the URL once with ?token=<token> (the browser keeps a "
            "cookie), or send Authorization: Bearer <token>",
            file=sys.stderr,
            flush=True,
        )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m recallbox.web.serve", description="Serve the recallbox web inspector."
    )
    parser.add_argument("--db", default=None, help="database path (default: RECALLBOX_DB)")
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to bind (loopback)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument("--token", default=os.environ.get(ENV_TOKEN), help=f"or {ENV_TOKEN}")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """The module entry point; returns the exit code."""
    args = _arguments(argv)
    try:
        check_bind(args.host, args.token)
        location = load_settings(args.db).db
        if location != ":memory:" and "://" not in location and not Path(location).exists():
            print(f"no database at {location} (run `recallbox init`)", file=sys.stderr)
            return 1
        with recallbox.open(location) as box:
            serve(box, args.host, args.port, args.token)
    except InvalidArgument as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RecallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return 0


if __name__ == "__main__":
    sys.exit(main())
