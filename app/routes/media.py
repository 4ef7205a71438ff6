"""Upload trip media and serve it to members only."""

from __future__ import annotations

import asyncio
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse
from starlette.routing import Route

from .. import media
from ..ids import new_id, utcnow
from ..errors import BadRequest, NotFound, TooLarge, UnsupportedType
from .common import member, ok, services
from .openapi import describe

MULTIPART_OVERHEAD = 16 * 1024


def _too_large() -> TooLarge:
    return TooLarge(f"Files can be at most {media.MAX_BYTES // (1024 * 1024)} MiB")


@describe(multipart=True, summary="Upload a file to the trip (PNG, JPEG, WebP, PDF, text, Markdown, CSV; 2 MiB)")
async def upload(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id, needs="editor")
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > media.MAX_BYTES + MULTIPART_OVERHEAD:
        raise _too_large()
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise BadRequest("Send the file as multipart/form-data in a field named file", code="not_multipart")
    try:
        form = await request.form(max_files=1, max_fields=5)
    except Exception:
        raise BadRequest("The upload could not be read as multipart/form-data", code="bad_multipart") from None
    try:
        upload_file = form.get("file")
        if upload_file is None or isinstance(upload_file, str):
            raise BadRequest("Add the file in a field named file", code="no_file", field="file")
        data = await upload_file.read(media.MAX_BYTES + 1)
        filename = media.display_name(upload_file.filename)
    finally:
        await form.close()
    if len(data) > media.MAX_BYTES:
        raise _too_large()
    if not data:
        raise BadRequest("The file is empty", code="empty_file", field="file")
    media_type = media.sniff(data, filename)
    if media_type is None:
        raise UnsupportedType("Only PNG, JPEG, WebP, PDF, plain text, Markdown and CSV files can be uploaded")
    media_id = new_id()
    name = f"{media_id}.{media.EXTENSIONS[media_type]}"
    svc = services(request)
    path = media.stored_path(svc.settings.uploads_dir, trip_id, name)
    await asyncio.to_thread(_write, path, data)
    await svc.db.execute_write(
        "INSERT INTO media (id, trip_id, name, filename, media_type, size, uploaded_by, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (media_id, trip_id, name, filename, media_type, len(data), user["id"], utcnow()))
    return ok({"id": media_id, "url": media.upload_url(trip_id, name), "mediaType": media_type,
               "filename": filename, "size": len(data)}, status=201)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.replace(path)


@describe(summary="The trip's uploads")
async def list_media(request: Request):
    trip_id = request.path_params["tripId"]
    await member(request, trip_id)
    rows = await services(request).db.fetchall(
        "SELECT id, name, filename, media_type, size, uploaded_by, created_at FROM media WHERE trip_id = ? "
        "ORDER BY created_at DESC", (trip_id,))
    return ok({"media": [{"id": r["id"], "url": media.upload_url(trip_id, r["name"]), "filename": r["filename"],
                          "mediaType": r["media_type"], "size": r["size"], "uploadedBy": r["uploaded_by"],
                          "createdAt": r["created_at"]} for r in rows]})


@describe(summary="Serve an uploaded file to members of its trip")
async def serve(request: Request):
    trip_id, name = request.path_params["tripId"], request.path_params["name"]
    await member(request, trip_id)
    svc = services(request)
    path = media.stored_path(svc.settings.uploads_dir, trip_id, name)
    row = path and await svc.db.fetchone(
        "SELECT media_type, filename FROM media WHERE trip_id = ? AND name = ?", (trip_id, name))
    if not row or not path.is_file():
        raise NotFound("No such file")
    inline = row["media_type"].startswith("image/") or row["media_type"] == "application/pdf"
    return FileResponse(
        path, media_type=row["media_type"], filename=row["filename"], content_disposition_type="inline" if inline else "attachment",
        headers={"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox; default-src 'none'",
                 "Cache-Control": "private, max-age=3600"})


routes = [
    Route("/api/trips/{tripId}/media", upload, methods=["POST"]),
    Route("/api/trips/{tripId}/media", list_media, methods=["GET"]),
    Route("/api/uploads/trips/{tripId}/{name}", serve, methods=["GET"]),
]
