"""Blocks every network connection except Unix-domain and loopback ones, in any Python process
started with this folder on ``PYTHONPATH`` (children inherit it). Each attempt is appended to
the file named by ``RECALLBOX_NETGUARD_LOG`` and fails with ``ENETUNREACH``."""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import traceback

LOG = os.environ.get("RECALLBOX_NETGUARD_LOG", "")
LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_sendto = socket.socket.sendto
_getaddrinfo = socket.getaddrinfo
_gethostbyname = socket.gethostbyname


def _loopback_host(host: object) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    name = str(host).strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


def _refuse(what: str, target: object) -> OSError:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as out:
            stack = "".join(traceback.format_stack(limit=12)[:-2])
            out.write(f"{os.getpid()} {what} {target!r}\n{stack}\n")
    return OSError(errno.ENETUNREACH, f"network blocked by the test: {what} {target!r}")


def _allowed(sock: socket.socket, address: object) -> bool:
    if sock.family == getattr(socket, "AF_UNIX", None):
        return True
    host = address[0] if isinstance(address, tuple) and address else address
    return _loopback_host(host)


def connect(self: socket.socket, address: object) -> None:
    if not _allowed(self, address):
        raise _refuse("connect", address)
    _connect(self, address)


def connect_ex(self: socket.socket, address: object) -> int:
    if not _allowed(self, address):
        raise _refuse("connect", address)
    return _connect_ex(self, address)


def sendto(self: socket.socket, data: bytes, *args: object) -> int:
    address = args[-1]
    if not _allowed(self, address):
        raise _refuse("sendto", address)
    return _sendto(self, data, *args)  # type: ignore[arg-type]


def getaddrinfo(host: object, *args: object, **kwargs: object) -> list:  # type: ignore[type-arg]
    if not _loopback_host(host):
        raise _refuse("getaddrinfo", host)
    return _getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]


def gethostbyname(host: str) -> str:
    if not _loopback_host(host):
        raise _refuse("gethostbyname", host)
    return _gethostbyname(host)


socket.socket.connect = connect  # type: ignore[method-assign]
socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
socket.socket.sendto = sendto  # type: ignore[method-assign,assignment]
socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
socket.gethostbyname = gethostbyname
os.environ.setdefault("RECALLBOX_NETGUARD", "on")
