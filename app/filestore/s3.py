"""Uploads in the replica's bucket (`{prefix}/uploads/{trip_id}/{name}`),
through boto3, the AWS SDK (S3-compatible stores such as Fly's Tigris
through `WAYLINE_REPLICA_ENDPOINT`). Imported only when a replica is
configured: boto3 is the `replica` extra.

boto3's calls block, so each runs on a worker thread; an object is written
with one PUT streamed from the spooled upload (S3 makes it visible whole or
not at all) and read back in chunks."""

from __future__ import annotations

import asyncio
from typing import Any, BinaryIO
from collections.abc import AsyncIterator

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from ..settings import ReplicaLocation, Settings
from .base import CHUNK, StoreUnavailable, StoredFile

MISSING = {"NoSuchKey", "404", "NotFound"}


class S3FileStore:
    def __init__(self, client: Any, bucket: str, prefix: str):
        self.client = client
        self.bucket = bucket
        self.prefix = prefix   # ends with "/"

    @classmethod
    def from_settings(cls, settings: Settings, location: ReplicaLocation) -> S3FileStore:
        client = boto3.session.Session().client(
            "s3", endpoint_url=settings.replica_endpoint, region_name=settings.aws_region,
            aws_access_key_id=settings.aws_access_key_id, aws_secret_access_key=settings.aws_secret_access_key,
            config=Config(s3={"addressing_style": "path"}, retries={"mode": "standard", "max_attempts": 3},
                          connect_timeout=5, read_timeout=30))
        return cls(client, location.bucket, location.uploads_prefix)

    async def _call(self, method: str, **kwargs: Any) -> Any:
        try:
            return await asyncio.to_thread(getattr(self.client, method), Bucket=self.bucket, **kwargs)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in MISSING:
                return None
            raise StoreUnavailable(f"file storage refused {method}") from exc
        except BotoCoreError as exc:
            raise StoreUnavailable(f"file storage unreachable ({method})") from exc

    async def write(self, key: str, source: BinaryIO, size: int, media_type: str) -> None:
        source.seek(0)
        await self._call("put_object", Key=self.prefix + key, Body=source, ContentLength=size,
                         ContentType=media_type)

    async def open(self, key: str) -> StoredFile | None:
        answer = await self._call("get_object", Key=self.prefix + key)
        if answer is None:
            return None
        return StoredFile(answer["ContentLength"], _chunks(answer["Body"]))

    async def read(self, key: str, limit: int) -> bytes | None:
        answer = await self._call("get_object", Key=self.prefix + key, Range=f"bytes=0-{max(limit - 1, 0)}")
        if answer is None:
            return None
        body = answer["Body"]
        try:
            return await asyncio.to_thread(body.read, limit)
        finally:
            body.close()

    async def delete(self, key: str) -> None:
        await self._call("delete_object", Key=self.prefix + key)

    async def delete_folder(self, trip_id: str) -> None:
        folder = f"{self.prefix}{trip_id}/"
        while True:
            listed = await self._call("list_objects_v2", Prefix=folder, MaxKeys=1000)
            keys = [{"Key": item["Key"]} for item in (listed or {}).get("Contents", [])]
            if not keys:
                return
            await self._call("delete_objects", Delete={"Objects": keys, "Quiet": True})


async def _chunks(body: Any) -> AsyncIterator[bytes]:
    try:
        while chunk := await asyncio.to_thread(body.read, CHUNK):
            yield chunk
    except (BotoCoreError, OSError) as exc:
        raise StoreUnavailable("file storage stopped sending") from exc
    finally:
        body.close()
