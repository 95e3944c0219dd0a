"""``recallbox migrate``: copy a whole store to another location, across backends (#16 item 5).

Opens the source (it must exist) and the destination (created or migrated to the current
schema), copies every table and vector with :func:`recallbox.storage.transfer.copy_store` —
progress reported, counts verified, a stopped copy resumed by running it again — and closes
both. Both locations may be a SQLite path or a ``postgresql://`` URL, in either direction.
"""

from __future__ import annotations

from recallbox.errors import InvalidArgument
from recallbox.storage import open_store
from recallbox.storage.capability import require
from recallbox.storage.transfer import Progress, StoreTransfer, TransferReport, copy_store


def migrate_store(
    source: str, destination: str, *, progress: Progress | None = None
) -> TransferReport:
    """Copy the store at ``source`` into ``destination`` (see the module docs).

    Raises:
        InvalidArgument: both name the same location.
        StoreUnavailable: either cannot be opened, the destination holds other data, or the
            copy's counts differ from the source's.
    """
    if source == destination:
        raise InvalidArgument("--from and --to name the same database; name two")
    with _Opened(source) as src, _Opened(destination) as dst:
        return copy_store(
            require(src, StoreTransfer), require(dst, StoreTransfer), progress=progress
        )


class _Opened:
    def __init__(self, location: str) -> None:
        self.location = location

    def __enter__(self) -> object:
        self.store = open_store(self.location)
        return self.store

    def __exit__(self, *exc: object) -> None:
        self.store.close()


__all__ = ["migrate_store"]
