"""Trip uploads as model input (agent attachments, the readTripMedia tool): parse, never fetch.

A file part or a `readTripMedia` call names a URL. Only this trip's uploads
are accepted: `/api/uploads/trips/<tripId>/<name>` (optionally absolute on
one of our own hosts). The path is parsed, the `media` row looked up, and the
bytes read from the file store (app/filestore/: the volume or the bucket). Nothing is ever requested
over the network, so no URL a member or a model writes can make the server
reach another host (SSRF) or another trip's files.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from . import media
from .db import Database
from .errors import Invalid
from .filestore import FileStore

UPLOAD_PATH = re.compile(r"^/api/uploads/trips/([A-Za-z0-9_-]{1,64})/([A-Za-z0-9_-]{1,80}\.[A-Za-z0-9]{1,8})$")
SUPPORTED_TYPES = ("image/png", "image/jpeg", "image/webp", "application/pdf",
                   "text/plain", "text/markdown", "text/csv")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp")
TEXT_TYPES = ("text/plain", "text/markdown", "text/csv")
MAX_BYTES = 2 * 1024 * 1024
MAX_TEXT_CHARS = 20_000
MAX_FILES = 8


class RefusedURL(Invalid):
    code = "refused_url"


@dataclass(frozen=True)
class Upload:
    trip_id: str
    name: str
    filename: str
    media_type: str
    size: int

    @property
    def url(self) -> str:
        return f"/api/uploads/trips/{self.trip_id}/{self.name}"

    def part(self) -> dict[str, Any]:
        """The AI SDK file part we persist (never a data: URL)."""
        return {"type": "file", "mediaType": self.media_type, "url": self.url, "filename": self.filename}


def upload_name(url: Any, trip_id: str, own_hosts: tuple[str, ...] = (), field: str = "url") -> str:
    """The stored file name a URL points at, or RefusedURL (422) naming `field`
    (anything that is not such a URL, whatever its type)."""
    if not isinstance(url, str) or not url or len(url) > 2000:
        raise RefusedURL(f"{field}: must be a URL of one of this trip's uploads", field=field)
    parts = urlsplit(url.strip())
    if parts.scheme or parts.netloc:
        own = parts.scheme in ("http", "https") and parts.netloc.lower() in {h.lower() for h in own_hosts if h}
        if not own:
            raise RefusedURL(f"{field}: external URLs are refused; attach a file uploaded to this trip "
                             f"(/api/uploads/trips/{trip_id}/...)", field=field)
    if parts.query or parts.fragment:
        raise RefusedURL(f"{field}: must be a plain upload URL without query or fragment", field=field)
    match = UPLOAD_PATH.match(unquote(parts.path))
    if match is None:
        raise RefusedURL(f"{field}: only this trip's uploads (/api/uploads/trips/{trip_id}/...) can be attached",
                         field=field)
    if match.group(1) != trip_id:
        raise RefusedURL(f"{field}: that file belongs to another trip", field=field)
    return match.group(2)


async def resolve(db: Database, trip_id: str, url: Any, own_hosts: tuple[str, ...] = (),
                  field: str = "url") -> Upload:
    name = upload_name(url, trip_id, own_hosts, field)
    row = await db.fetchone(
        "SELECT name, filename, media_type, size FROM media WHERE trip_id = ? AND name = ?", (trip_id, name))
    if row is None:
        raise RefusedURL(f"{field}: no such upload in this trip", field=field)
    return Upload(trip_id, row["name"], row["filename"], row["media_type"], row["size"])


async def clean_file_parts(db: Database, trip_id: str, files: list[Any], own_hosts: tuple[str, ...] = (),
                           field: str = "files") -> list[dict[str, Any]]:
    """Validated file parts for persistence: this trip's uploads only (any other
    URL is refused with 422); types we cannot give the model are dropped. The
    media type comes from our record (checked from the bytes at upload), not
    from what the client claims."""
    if len(files) > MAX_FILES:
        raise Invalid(f"{field}: at most {MAX_FILES} files", field=field)
    parts = []
    for i, f in enumerate(files):
        url = f.get("url") if isinstance(f, dict) else getattr(f, "url", None)
        upload = await resolve(db, trip_id, url, own_hosts, field=f"{field}.{i}.url")
        if upload.media_type in SUPPORTED_TYPES and upload.size <= MAX_BYTES:
            parts.append(upload.part())
    return parts


async def read_bytes(files: FileStore, upload: Upload) -> bytes:
    data = await media.read_upload(files, upload.trip_id, upload.name, MAX_BYTES)
    if data is None:
        raise OSError(f"upload {upload.name} is not stored")
    return data


async def model_content(files: FileStore, upload: Upload) -> dict[str, Any]:
    """The Responses API input part for an upload: text as text, images and
    PDFs inline as data URLs read from the file store."""
    try:
        data = await read_bytes(files, upload)
    except OSError:
        return {"type": "input_text", "text": f"[attachment {upload.filename}: the file could not be read]"}
    if upload.media_type in TEXT_TYPES:
        text = data.decode("utf-8", errors="replace")[:MAX_TEXT_CHARS]
        return {"type": "input_text", "text": f"[attachment {upload.filename} ({upload.media_type})]\n{text}"}
    encoded = base64.b64encode(data).decode("ascii")
    if upload.media_type in IMAGE_TYPES:
        return {"type": "input_image", "image_url": f"data:{upload.media_type};base64,{encoded}", "detail": "auto"}
    return {"type": "input_file", "filename": upload.filename,
            "file_data": f"data:{upload.media_type};base64,{encoded}"}
