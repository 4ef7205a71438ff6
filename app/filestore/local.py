"""Uploads on the local volume: `{uploads_dir}/{trip_id}/{name}`."""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
from pathlib import Path
from typing import BinaryIO
from collections.abc import AsyncIterator

from .base import CHUNK, StoredFile, StoreFull

# The disk refuses more bytes: full, over a quota, a file size limit, read-only.
NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}


class LocalFileStore:
    def __init__(self, root: str):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key

    async def write(self, key: str, source: BinaryIO, size: int, media_type: str) -> None:
        try:
            await asyncio.to_thread(self._write, self._path(key), source)
        except OSError as exc:
            if exc.errno in NO_ROOM:
                raise StoreFull(os.strerror(exc.errno)) from None
            raise

    @staticmethod
    def _write(path: Path, source: BinaryIO) -> None:
        # A whole file or none: the bytes go to a sibling, which replaces the
        # name only once they are all there (and is removed when they are not,
        # a full disk included).
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".part")
        try:
            with open(partial, "wb") as out:
                shutil.copyfileobj(source, out, CHUNK)
            os.replace(partial, path)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise

    async def open(self, key: str) -> StoredFile | None:
        path = self._path(key)
        try:
            handle = await asyncio.to_thread(open, path, "rb")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        size = os.fstat(handle.fileno()).st_size
        return StoredFile(size, _chunks(handle))

    async def read(self, key: str, limit: int) -> bytes | None:
        def read() -> bytes | None:
            try:
                with open(self._path(key), "rb") as handle:
                    return handle.read(limit)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return None
        return await asyncio.to_thread(read)

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self._path(key).unlink, True)

    async def delete_folder(self, trip_id: str) -> None:
        await asyncio.to_thread(shutil.rmtree, self.root / trip_id, True)


async def _chunks(handle: BinaryIO) -> AsyncIterator[bytes]:
    try:
        while chunk := await asyncio.to_thread(handle.read, CHUNK):
            yield chunk
    finally:
        handle.close()
