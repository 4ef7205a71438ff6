"""Upload trip media and serve it to members only: parse, call app/media.py, respond."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from .. import media
from ..errors import BadRequest, TooLarge
from .common import member, ok, services
from .openapi import describe


def _too_large() -> TooLarge:
    return TooLarge(f"Files can be at most {media.MAX_BYTES // (1024 * 1024)} MiB")


@describe(multipart=True, summary="Upload a file to the trip (PNG, JPEG, WebP, PDF, text, Markdown, CSV; 2 MiB)")
async def upload(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id, needs="editor")
    # The whole body is bounded while it is read (app/web/bodies.py: 2 MiB plus
    # multipart overhead), so a chunked upload is refused before it is spooled.
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise BadRequest("Send the file as multipart/form-data in a field named file", code="not_multipart")
    try:
        form = await request.form(max_files=1, max_fields=5, max_part_size=64 * 1024)
    except TooLarge:
        raise
    except Exception:
        raise BadRequest("The upload could not be read as multipart/form-data", code="bad_multipart") from None
    try:
        upload_file = form.get("file")
        if upload_file is None or isinstance(upload_file, str):
            raise BadRequest("Add the file in a field named file", code="no_file", field="file")
        # The parser spooled the part (to disk past 1 MiB): its size is known,
        # and media.save_upload streams it from there.
        if upload_file.size is not None and upload_file.size > media.MAX_BYTES:
            raise _too_large()
        if not upload_file.size:
            raise BadRequest("The file is empty", code="empty_file", field="file")
        svc = services(request)
        saved = await media.save_upload(svc.db, svc.files, trip_id, user["id"], upload_file.file,
                                        upload_file.filename, trip_mb=svc.settings.upload_mb_per_trip,
                                        user_mb=svc.settings.upload_mb_per_user)
    finally:
        await form.close()
    return ok(saved, status=201)


@describe(summary="The trip's uploads")
async def list_media(request: Request):
    trip_id = request.path_params["tripId"]
    await member(request, trip_id)
    return ok({"media": await media.list_uploads(services(request).db, trip_id)})


@describe(summary="Delete an upload (its uploader, or an owner)")
async def delete_media(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id, needs="editor")
    svc = services(request)
    await media.delete_upload(svc.db, svc.files, trip_id, user["id"], request.path_params["mediaId"])
    return ok({"deleted": True})


@describe(summary="Serve an uploaded file to members of its trip")
async def serve(request: Request):
    trip_id, name = request.path_params["tripId"], request.path_params["name"]
    await member(request, trip_id)
    svc = services(request)
    found = await media.find_upload(svc.db, svc.files, trip_id, name)
    # Only images are shown in place (the page draws them; they run nothing).
    # Everything else is a download: a PDF can carry scripts and forms for the
    # viewer that opens it, and it never opens on our origin.
    inline = found.media_type.startswith("image/")
    return StreamingResponse(
        found.chunks, media_type=found.media_type,
        headers={"Content-Length": str(found.size),
                 "Content-Disposition": content_disposition("inline" if inline else "attachment", found.filename),
                 "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox; default-src 'none'",
                 "Cache-Control": "private, max-age=3600"})


def content_disposition(kind: str, filename: str) -> str:
    """The header with the client's file name, as Starlette's FileResponse writes it (RFC 6266)."""
    quoted = quote(filename)
    if quoted != filename:
        return f"{kind}; filename*=utf-8''{quoted}"
    return f'{kind}; filename="{filename}"'


routes = [
    Route("/api/trips/{tripId}/media", upload, methods=["POST"]),
    Route("/api/trips/{tripId}/media", list_media, methods=["GET"]),
    Route("/api/trips/{tripId}/media/{mediaId}", delete_media, methods=["DELETE"]),
    Route("/api/uploads/trips/{tripId}/{name}", serve, methods=["GET"]),
]
