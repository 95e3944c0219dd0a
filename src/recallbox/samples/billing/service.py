"""The billing service's entry point."""

from __future__ import annotations

from .db import ReplicaUnreachable, connect_replica


def start(env: str) -> int:
    """Start billing in ``env``: exit status 1 when the database replica refuses the connection."""
    try:
        connect_replica(env)
    except ReplicaUnreachable:
        return 1
    return 0


def health(env: str) -> str:
    """The /health answer: ok when billing reaches its database replica."""
    return "ok" if start(env) == 0 else "database unreachable"
