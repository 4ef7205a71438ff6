"""Uploaded trip media: the type comes from the bytes, never the name.

Files are stored under `{trip_id}/{id}.{ext}` in the file store
(app/filestore/: the volume, or the replica's bucket); names are ours, so a
client's `../` or odd characters never reach a path or a key. The `media`
table records each file (who, when, the client's name for display). Bytes
stream through in chunks: an upload is checked and stored without being
held whole in memory."""

from __future__ import annotations

import asyncio
import codecs
import logging
import re
import sqlite3
import unicodedata
from dataclasses import dataclass
from typing import BinaryIO
from collections.abc import AsyncIterator

from .db import Database, Tx
from .errors import Forbidden, NotFound, Unavailable, UnsupportedType, storage_unavailable
from .filestore import CHUNK, FileStore, StoreFull, StoreUnavailable
from .ids import new_id, utcnow
from .quotas import check_upload
from .roles import ROLE_RANK, require_role_in

log = logging.getLogger("wayline")

MAX_BYTES = 2 * 1024 * 1024
STORED_NAME = re.compile(r"^[0-9a-f]{16}\.(png|jpg|webp|pdf|txt|md|csv)$")
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "application/pdf": "pdf",
              "text/plain": "txt", "text/markdown": "md", "text/csv": "csv"}
# Names that promise an image or a PDF: text under such a name is refused, not kept as text.
NOT_TEXT = {"png", "jpg", "jpeg", "jpe", "webp", "gif", "svg", "svgz", "bmp", "ico", "tif", "tiff", "heic", "heif",
            "avif", "pdf"}
TEXT_TYPES = {"md": "text/markdown", "markdown": "text/markdown", "csv": "text/csv"}


def sniff(data: bytes, filename: str) -> str | None:
    """The media type the bytes prove, or None when we do not accept them."""
    checker = TypeCheck(filename)
    checker.feed(data)
    return checker.result()


class TypeCheck:
    """`sniff` fed in chunks: the head decides binary types; text must be
    UTF-8 without NUL bytes from the first byte to the last."""

    def __init__(self, filename: str):
        self.filename = filename
        self.head = b""
        self.text = True
        self.decoder = codecs.getincrementaldecoder("utf-8")()

    def feed(self, chunk: bytes) -> None:
        if len(self.head) < 12:
            self.head += chunk[:12 - len(self.head)]
        if self.text:
            try:
                self.decoder.decode(chunk)
            except UnicodeDecodeError:
                self.text = False
            self.text = self.text and b"\x00" not in chunk

    def result(self) -> str | None:
        head = self.head
        if head.startswith(b"\x89PNG\r\n\x1a\n"):
            return "image/png"
        if head.startswith(b"\xff\xd8\xff"):
            return "image/jpeg"
        if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
            return "image/webp"
        if head.startswith(b"%PDF-"):
            return "application/pdf"
        if not self.text:
            return None
        try:
            self.decoder.decode(b"", final=True)   # a sequence cut off at the end
        except UnicodeDecodeError:
            return None
        # Plain text proven by the bytes; the name only picks among text flavours.
        ext = self.filename.rsplit(".", 1)[-1].lower() if "." in self.filename else ""
        if ext in NOT_TEXT:
            # Text named as an image or PDF (an HTML page or SVG called photo.png):
            # the person meant a picture, and the bytes are not one.
            return None
        return TEXT_TYPES.get(ext, "text/plain")


def _check_type(source: BinaryIO, filename: str) -> tuple[str | None, int]:
    """Read the spooled upload once, in chunks: its media type and size."""
    checker = TypeCheck(filename)
    size = 0
    source.seek(0)
    while chunk := source.read(CHUNK):
        checker.feed(chunk)
        size += len(chunk)
    source.seek(0)
    return checker.result(), size


def _read_at(source: BinaryIO, offset: int, count: int) -> bytes:
    source.seek(offset)
    return source.read(count)


PNG_IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"


def _whole_png(source: BinaryIO, size: int) -> bool:
    """Chunk by chunk from IHDR to an IEND that ends the file: a cut-off file
    runs past its end, and nothing may follow IEND (a page or script glued on)."""
    if _read_at(source, 8, 8) != b"\x00\x00\x00\x0dIHDR":
        return False
    pos = 8
    while pos + 12 <= size:
        head = _read_at(source, pos, 8)
        length = int.from_bytes(head[:4], "big")
        if head[4:8] == b"IEND":
            return length == 0 and pos + 12 == size and _read_at(source, pos, 12) == PNG_IEND
        pos += 12 + length
    return False


def _whole_jpeg(source: BinaryIO, size: int) -> bool:
    """Segment by segment to the first scan, then an end-of-image marker after
    it. (Data after that marker is allowed: phones append their own there.)"""
    pos, segments = 2, 0
    while True:
        marker = _read_at(source, pos, 4)
        segments += 1
        if len(marker) < 4 or marker[0] != 0xFF or segments > 10_000:
            return False
        if marker[1] == 0xFF:   # fill byte before a marker
            pos += 1
            continue
        if marker[1] == 0xD9 or marker[1] == 0xD8:
            return False        # an image that ends (or starts again) before any scan
        if 0xD0 <= marker[1] <= 0xD7 or marker[1] == 0x01:
            pos += 2
            continue
        pos += 2 + int.from_bytes(marker[2:4], "big")
        if pos > size:
            return False
        if marker[1] == 0xDA:   # start of scan: the entropy-coded data follows
            break
    last = b""
    source.seek(pos)
    while chunk := source.read(CHUNK):
        if b"\xff\xd9" in last + chunk:
            return True
        last = chunk[-1:]
    return False


def _whole_webp(source: BinaryIO, size: int) -> bool:
    """The RIFF header's length is the file's (padded to an even size)."""
    riff = int.from_bytes(_read_at(source, 4, 4), "little")
    return size in (riff + 8, riff + 9) and riff >= 4 + 8


def _whole_pdf(source: BinaryIO, size: int) -> bool:
    """A PDF ends with %%EOF (readers look in the last 1024 bytes)."""
    return b"%%EOF" in _read_at(source, max(0, size - 1024), 1024)


WHOLE = {"image/png": _whole_png, "image/jpeg": _whole_jpeg, "image/webp": _whole_webp,
         "application/pdf": _whole_pdf}


def _is_whole(source: BinaryIO, media_type: str, size: int) -> bool:
    """Whether an image or PDF is all there: its first bytes name the type, but a
    cut-off download or a file with something glued on would be stored and
    shown as a broken image. Reads the spooled file by offset, never whole."""
    check = WHOLE.get(media_type)
    try:
        return check is None or check(source, size)
    finally:
        source.seek(0)


def display_name(filename: str | None) -> str:
    name = (filename or "upload").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip()
    return (name or "upload")[:120]


def stored_key(trip_id: str, name: str) -> str | None:
    """The file store's key for one of our stored names; None for anything else."""
    if not re.fullmatch(r"[0-9a-f]{16}", trip_id) or not STORED_NAME.match(name):
        return None
    return f"{trip_id}/{name}"


def upload_url(trip_id: str, name: str) -> str:
    return f"/api/uploads/trips/{trip_id}/{name}"


def _unavailable() -> Unavailable:
    return Unavailable("Files cannot be reached right now; try again in a moment", code="files_unavailable")


def _stored_bytes(conn: sqlite3.Connection | Tx, trip_id: str, user_id: str) -> tuple[int, int]:
    """What the trip and the uploader store already (the upload quotas)."""
    row = conn.execute(
        "SELECT (SELECT COALESCE(SUM(size), 0) FROM media WHERE trip_id = ?), "
        "(SELECT COALESCE(SUM(size), 0) FROM media WHERE uploaded_by = ?)", (trip_id, user_id)).fetchone()
    return row[0], row[1]


async def save_upload(db: Database, files: FileStore, trip_id: str, user_id: str, source: BinaryIO,
                      client_name: str | None, *, trip_mb: int, user_mb: int) -> dict:
    """Store checked bytes under our own name and record them; 415 for a type we
    don't accept, 413 past the upload quotas (`trip_mb`, `user_mb`: app/quotas.py).
    `source` is the spooled upload (read in chunks, never whole).

    The quotas are checked before the bytes are written (nothing is written
    for a refused upload) and again in the transaction that records them, so
    uploads racing in parallel cannot pass them together."""
    filename = display_name(client_name)
    media_type, size = _check_type(source, filename)
    if media_type is None:
        if filename.rsplit(".", 1)[-1].lower() in NOT_TEXT:
            raise UnsupportedType(f"{filename} is not a PNG, JPEG or WebP image or a PDF, whatever its name says. "
                                  "Only PNG, JPEG, WebP, PDF, plain text, Markdown and CSV files can be uploaded")
        raise UnsupportedType("Only PNG, JPEG, WebP, PDF, plain text, Markdown and CSV files can be uploaded")
    if not await asyncio.to_thread(_is_whole, source, media_type, size):
        kind = "PDF" if media_type == "application/pdf" else "image"
        raise UnsupportedType(f"{filename} is not a whole {kind}: it looks cut off or damaged. "
                              "Save or export it again and upload that.", code="damaged_file")
    check_upload(size, *await db.read(_stored_bytes, trip_id, user_id), trip_mb=trip_mb, user_mb=user_mb)
    media_id = new_id()
    name = f"{media_id}.{EXTENSIONS[media_type]}"
    key = stored_key(trip_id, name)
    if key is None:
        raise NotFound("Trip not found")
    try:
        await files.write(key, source, size, media_type)
    except StoreFull:   # a full disk: the same plain 503 as a database write on it
        raise storage_unavailable() from None
    except StoreUnavailable:
        raise _unavailable() from None
    try:
        def record(tx: Tx) -> None:
            check_upload(size, *_stored_bytes(tx, trip_id, user_id), trip_mb=trip_mb, user_mb=user_mb)
            tx.execute(
                "INSERT INTO media (id, trip_id, name, filename, media_type, size, uploaded_by, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (media_id, trip_id, name, filename, media_type, size, user_id, utcnow()))

        await db.write(record)
    except BaseException:
        await files.delete(key)   # no file without its record
        raise
    return {"id": media_id, "url": upload_url(trip_id, name), "mediaType": media_type, "filename": filename,
            "size": size}


async def list_uploads(db: Database, trip_id: str) -> list[dict]:
    rows = await db.fetchall(
        "SELECT id, name, filename, media_type, size, uploaded_by, created_at FROM media WHERE trip_id = ? "
        "ORDER BY created_at DESC", (trip_id,))
    return [{"id": r["id"], "url": upload_url(trip_id, r["name"]), "filename": r["filename"],
             "mediaType": r["media_type"], "size": r["size"], "uploadedBy": r["uploaded_by"],
             "createdAt": r["created_at"]} for r in rows]


@dataclass(frozen=True)
class StoredUpload:
    name: str
    filename: str
    media_type: str
    size: int
    chunks: AsyncIterator[bytes]


async def find_upload(db: Database, files: FileStore, trip_id: str, name: str) -> StoredUpload:
    """One of the trip's uploads by its stored name, ready to stream; 404 when
    it is not ours or not stored."""
    key = stored_key(trip_id, name)
    row = key and await db.fetchone(
        "SELECT name, filename, media_type, size FROM media WHERE trip_id = ? AND name = ?", (trip_id, name))
    if not row or key is None:
        raise NotFound("No such file")
    try:
        stored = await files.open(key)
    except StoreUnavailable:
        raise _unavailable() from None
    if stored is None:
        raise NotFound("No such file")
    return StoredUpload(row["name"], row["filename"], row["media_type"], stored.size, stored.chunks)


async def delete_upload(db: Database, files: FileStore, trip_id: str, actor_id: str, media_id: str) -> None:
    """Delete one of the trip's uploads: its uploader (while an editor or owner)
    or an owner may. The record goes first, in one transaction that checks the
    actor's role as it is then; the bytes after the commit. Text that linked
    the file keeps its words (members' text is theirs to change); the file
    then answers 404 to everyone, and the page's kept thumbnail is not shown
    for it (public/sw.js). Its bytes no longer count toward the quotas."""
    def work(tx: Tx) -> str:
        role = require_role_in(tx, trip_id, actor_id, "editor")
        row = tx.fetchone("SELECT name, uploaded_by FROM media WHERE id = ? AND trip_id = ?", (media_id, trip_id))
        if row is None:
            raise NotFound("No such file", code="upload_not_found")
        if row["uploaded_by"] != actor_id and ROLE_RANK[str(role)] < ROLE_RANK["owner"]:
            raise Forbidden("Only the member who uploaded this file, or an owner, can delete it.")
        tx.execute("DELETE FROM media WHERE id = ?", (media_id,))
        return str(row["name"])

    name = await db.write(work)
    key = stored_key(trip_id, name)
    if key is None:
        return
    try:
        await files.delete(key)
    except StoreUnavailable:   # the record is gone: no one can reach the bytes; the log says what is left
        log.warning("upload %s of trip %s could not be removed (file storage unreachable)", name, trip_id)


async def read_upload(files: FileStore, trip_id: str, name: str, limit: int) -> bytes | None:
    """Up to `limit` bytes of a stored upload (the agent's attachments); None when missing."""
    key = stored_key(trip_id, name)
    if key is None:
        return None
    try:
        return await files.read(key, limit)
    except StoreUnavailable:
        return None


async def delete_trip_files(files: FileStore, trip_id: str) -> None:
    """Remove a deleted trip's files. The trip is gone already: a store that
    cannot be reached leaves files no one can reach either, and says so in the log."""
    if not re.fullmatch(r"[0-9a-f]{16}", trip_id):
        return
    try:
        await files.delete_folder(trip_id)
    except StoreUnavailable:
        log.warning("the files of deleted trip %s could not be removed (file storage unreachable)", trip_id)
