"""What every file store is: the interface (`FileStore`), a stored file, the
chunk size, and the one error a store raises (app/filestore/__init__.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Protocol
from collections.abc import AsyncIterator

CHUNK = 64 * 1024


class StoreUnavailable(Exception):
    """The store could not be reached or refused us (not: the file is missing)."""


class StoreFull(StoreUnavailable):
    """The store has no room for the bytes (a full disk, a read-only one); nothing was kept."""


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
