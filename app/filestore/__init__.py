"""Where uploaded files live: a small interface with two homes.

`LocalFileStore` keeps them on the volume (`WAYLINE_UPLOADS`), as always;
`S3FileStore` keeps them in the replica's bucket when `WAYLINE_REPLICA_URL`
is set, so a lost volume loses no upload (docs/deploy.md). Keys are
`{trip_id}/{stored name}`, built and checked by app/media.py; a store never
sees a client's file name.

Bytes move in chunks both ways: `write` copies from a readable file object
(the request's spooled upload), `open` hands back an async iterator, so no
upload is ever held whole in memory. `write` is the one place a file is
written: limits on it (a full disk, quotas) belong there or just before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Protocol
from collections.abc import AsyncIterator

from ..settings import Settings

CHUNK = 64 * 1024


class StoreUnavailable(Exception):
    """The store could not be reached or refused us (not: the file is missing)."""


@dataclass(frozen=True)
class StoredFile:
    size: int
    chunks: AsyncIterator[bytes]   # read it to the end or close it (aclose)


class FileStore(Protocol):
    async def write(self, key: str, source: BinaryIO, size: int, media_type: str) -> None:
        """Store `size` bytes read from `source` (at its start) under `key`,
        whole or not at all."""

    async def open(self, key: str) -> StoredFile | None:
        """The file's bytes in chunks; None when there is no such file."""

    async def read(self, key: str, limit: int) -> bytes | None:
        """Up to `limit` bytes of a small file (the agent's attachments); None when missing."""

    async def delete(self, key: str) -> None:
        """Remove one file (missing is fine)."""

    async def delete_folder(self, trip_id: str) -> None:
        """Remove every file of a trip (missing is fine)."""


def open_filestore(settings: Settings) -> FileStore:
    """The replica's bucket when one is configured, else the local folder.
    The S3 client library is imported only then: the default install stays light."""
    location = settings.replica
    if location is None:
        from .local import LocalFileStore
        return LocalFileStore(settings.uploads_dir)
    from .s3 import S3FileStore
    return S3FileStore.from_settings(settings, location)
