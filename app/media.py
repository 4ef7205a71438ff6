"""Uploaded trip media: the type comes from the bytes, never the name.

Files live at `{uploads_dir}/{trip_id}/{id}.{ext}`; names are ours, so a
client's `../` or odd characters never reach the file system. The `media`
table records each file (who, when, the client's name for display)."""

from __future__ import annotations

import asyncio
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from .db import Database
from .errors import NotFound, UnsupportedType
from .ids import new_id, utcnow

MAX_BYTES = 2 * 1024 * 1024
STORED_NAME = re.compile(r"^[0-9a-f]{16}\.(png|jpg|webp|pdf|txt|md|csv)$")
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "application/pdf": "pdf",
              "text/plain": "txt", "text/markdown": "md", "text/csv": "csv"}
TEXT_TYPES = {"md": "text/markdown", "markdown": "text/markdown", "csv": "text/csv"}


def sniff(data: bytes, filename: str) -> str | None:
    """The media type the bytes prove, or None when we do not accept them."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith(b"%PDF-"):
        return "application/pdf"
    if b"\x00" in data:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Plain text proven by the bytes; the name only picks among text flavours.
    ext = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    return TEXT_TYPES.get(ext, "text/plain")


def display_name(filename: str | None) -> str:
    name = (filename or "upload").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip()
    return (name or "upload")[:120]


def trip_folder(uploads_dir: str, trip_id: str) -> Path | None:
    """The trip's upload folder; None for anything that is not one of our ids."""
    if not re.fullmatch(r"[0-9a-f]{16}", trip_id):
        return None
    return Path(uploads_dir) / trip_id


def stored_path(uploads_dir: str, trip_id: str, name: str) -> Path | None:
    folder = trip_folder(uploads_dir, trip_id)
    if folder is None or not STORED_NAME.match(name):
        return None
    return folder / name


def upload_url(trip_id: str, name: str) -> str:
    return f"/api/uploads/trips/{trip_id}/{name}"


def _write_file(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.replace(path)


async def save_upload(db: Database, uploads_dir: str, trip_id: str, user_id: str, data: bytes,
                      client_name: str | None) -> dict:
    """Store checked bytes under our own name and record them; 415 for a type we don't accept."""
    filename = display_name(client_name)
    media_type = sniff(data, filename)
    if media_type is None:
        raise UnsupportedType("Only PNG, JPEG, WebP, PDF, plain text, Markdown and CSV files can be uploaded")
    media_id = new_id()
    name = f"{media_id}.{EXTENSIONS[media_type]}"
    path = stored_path(uploads_dir, trip_id, name)
    if path is None:
        raise NotFound("Trip not found")
    await asyncio.to_thread(_write_file, path, data)
    await db.execute_write(
        "INSERT INTO media (id, trip_id, name, filename, media_type, size, uploaded_by, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (media_id, trip_id, name, filename, media_type, len(data), user_id, utcnow()))
    return {"id": media_id, "url": upload_url(trip_id, name), "mediaType": media_type, "filename": filename,
            "size": len(data)}


async def list_uploads(db: Database, trip_id: str) -> list[dict]:
    rows = await db.fetchall(
        "SELECT id, name, filename, media_type, size, uploaded_by, created_at FROM media WHERE trip_id = ? "
        "ORDER BY created_at DESC", (trip_id,))
    return [{"id": r["id"], "url": upload_url(trip_id, r["name"]), "filename": r["filename"],
             "mediaType": r["media_type"], "size": r["size"], "uploadedBy": r["uploaded_by"],
             "createdAt": r["created_at"]} for r in rows]


@dataclass(frozen=True)
class StoredUpload:
    path: Path
    name: str
    filename: str
    media_type: str
    size: int


async def find_upload(db: Database, uploads_dir: str, trip_id: str, name: str) -> StoredUpload:
    """One of the trip's uploads by its stored name; 404 when it is not ours or not on disk."""
    path = stored_path(uploads_dir, trip_id, name)
    row = path and await db.fetchone(
        "SELECT name, filename, media_type, size FROM media WHERE trip_id = ? AND name = ?", (trip_id, name))
    if not row or path is None or not path.is_file():
        raise NotFound("No such file")
    return StoredUpload(path, row["name"], row["filename"], row["media_type"], row["size"])
