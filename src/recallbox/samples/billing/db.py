"""The billing service's database connection."""

from __future__ import annotations

from pathlib import Path

#: Where each environment's service settings live: ``deploy/<env>/<service>.env``.
DEPLOY_DIR = Path("deploy")


class ReplicaUnreachable(ConnectionError):
    """Connection refused by the database replica that DATABASE_URL names."""


def database_url(env: str, service: str = "billing") -> str:
    """The DATABASE_URL of ``service`` in ``env``, read from deploy/<env>/<service>.env."""
    settings = (DEPLOY_DIR / env / f"{service}.env").read_text(encoding="utf-8")
    for line in settings.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "DATABASE_URL":
            return value.strip()
    raise KeyError(f"no DATABASE_URL in {env}/{service}.env")


def replica_host(url: str) -> str:
    """The host part of a postgresql:// URL (``pg-replica-2`` of ``…@pg-replica-2/billing``)."""
    return url.rpartition("@")[2].partition("/")[0].partition(":")[0]


def connect_replica(env: str) -> str:
    """Connect billing to its database replica; a refused connection raises ReplicaUnreachable."""
    url = database_url(env)
    host = replica_host(url)
    if not host:
        raise ReplicaUnreachable(f"connection refused: no host in {url!r}")
    return host
