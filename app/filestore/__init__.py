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

from ..settings import Settings
from .base import CHUNK, FileStore, StoredFile, StoreFull, StoreUnavailable

__all__ = ["CHUNK", "FileStore", "StoreFull", "StoreUnavailable", "StoredFile", "open_filestore"]


def open_filestore(settings: Settings) -> FileStore:
    """The replica's bucket when one is configured, else the local folder.
    The S3 client library is imported only then: the default install stays light."""
    location = settings.replica
    if location is None:
        from .local import LocalFileStore
        return LocalFileStore(settings.uploads_dir)
    from .s3 import S3FileStore
    return S3FileStore.from_settings(settings, location)
