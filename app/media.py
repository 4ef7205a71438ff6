"""Uploaded trip media: the type comes from the bytes, never the name.

Files live at `{uploads_dir}/{trip_id}/{id}.{ext}`; names are ours, so a
client's `../` or odd characters never reach the file system."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

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


def parse_upload_url(url: str) -> tuple[str, str] | None:
    """(trip_id, name) for one of our upload URLs (absolute same-path or relative), else None."""
    match = re.fullmatch(r"(?:https?://[^/]+)?/api/uploads/trips/([0-9a-f]{16})/([0-9a-f]{16}\.[a-z]{2,4})", url or "")
    return (match.group(1), match.group(2)) if match else None
