"""The page's files (public/, Leaflet's), served from memory and compressed once.

Starlette's StaticFiles read each file through the thread pool on every
request, and the gzip middleware compressed each module again on every page
load: about 3 ms of CPU a file, and a first page load asks for about 60. Here
a file is read once per version (one `stat` a request notices an edit on disk,
as before), its brotli and gzip forms are made the first time a client asks
for them and kept for the whole process (every app instance serves the same
files), and an answer is bytes already in memory.

Every answer says `Cache-Control: no-cache`: the browser keeps the file and
asks again with its ETag (a 304 with no body). The modules' names carry no
version, so a heuristic freshness (what no header gives) could pair a new
index.html with an old module after a deploy; offline, the service worker
(app/web/service_worker.py) answers from its own cache.

Only GET and HEAD (others 405); a missing file, a directory without
index.html or a path that leaves the folder (`..`, a link out) is 404; both
through the app's error handlers, in the API's error shape.
"""

from __future__ import annotations

import email.utils
import hashlib
import mimetypes
import os
import stat
import threading
from dataclasses import dataclass, field

import anyio
import brotli
from starlette.exceptions import HTTPException
from starlette.types import Receive, Scope, Send

from .compression import MIN_BYTES, choose, compress

COMPRESSIBLE = ("text/", "application/javascript", "application/json", "application/manifest+json",
                "image/svg+xml")
NO_CACHE = (b"cache-control", b"no-cache")
VARY = (b"vary", b"Accept-Encoding")
STATIC_BROTLI_QUALITY = 9


@dataclass
class Asset:
    stamp: tuple[int, int]            # (size, mtime_ns) of the file these bytes were read from
    body: bytes
    media_type: bytes
    etag: bytes
    last_modified: bytes
    mtime: int                        # whole seconds, for If-Modified-Since
    compressible: bool
    coded: dict[str, bytes] = field(default_factory=dict)   # "br" / "gzip" -> the body so compressed

    async def encoded(self, coding: str | None) -> tuple[bytes, str | None]:
        if coding is None or not self.compressible:
            return self.body, None
        packed = self.coded.get(coding)
        if packed is None:   # once per file and coding, off the event loop (Leaflet's takes ~0.1 s)
            packed = self.coded[coding] = await anyio.to_thread.run_sync(compress_once, self.body, coding)
        return packed, coding


def compress_once(body: bytes, coding: str) -> bytes:
    """Brotli at quality 9, not the per-answer 4: done once, it makes the
    page's files 8% smaller than gzip (4 is no smaller than gzip on files
    this size), for about 0.5 CPU-seconds over all of them."""
    return brotli.compress(body, quality=STATIC_BROTLI_QUALITY) if coding == "br" else compress(body, coding)


# Process-wide: the files are the same for every app instance (tests build many).
_assets: dict[str, Asset] = {}
_reading = threading.Lock()   # tests run servers in several threads


def _media_type(path: str) -> bytes:
    media_type = mimetypes.guess_type(path)[0] or "text/plain"
    if media_type.startswith("text/"):
        media_type += "; charset=utf-8"
    return media_type.encode("latin-1")


def load(path: str, stamp: tuple[int, int]) -> Asset:
    """The file at `path` (real, absolute) as it is at `stamp`, read once."""
    asset = _assets.get(path)
    if asset is not None and asset.stamp == stamp:
        return asset
    with _reading:
        asset = _assets.get(path)
        if asset is None or asset.stamp != stamp:
            with open(path, "rb") as f:
                body = f.read()
            mtime = stamp[1] // 1_000_000_000
            media_type = _media_type(path)
            asset = _assets[path] = Asset(
                stamp=stamp, body=body, media_type=media_type,
                etag=b'"' + hashlib.blake2b(body, digest_size=16).hexdigest().encode() + b'"',
                last_modified=email.utils.formatdate(mtime, usegmt=True).encode(), mtime=mtime,
                compressible=len(body) >= MIN_BYTES and media_type.decode().startswith(COMPRESSIBLE))
    return asset


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def _not_modified(scope: Scope, asset: Asset) -> bool:
    if_none_match = _header(scope, b"if-none-match")
    if if_none_match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return "*" in tags or asset.etag.decode() in tags
    if_modified_since = _header(scope, b"if-modified-since")
    if if_modified_since:
        try:
            since = email.utils.parsedate_to_datetime(if_modified_since).timestamp()
        except (TypeError, ValueError):
            return False
        return asset.mtime <= since
    return False


class StaticAssets:
    """An ASGI app serving the files under `directory` (mount it; `html`:
    a folder's index.html answers for the folder, as for "/")."""

    def __init__(self, directory: str | os.PathLike[str], *, html: bool = False) -> None:
        self.root = os.path.realpath(directory)
        self.html = html

    def resolve(self, route_path: str) -> tuple[str, tuple[int, int]]:
        parts = [part for part in route_path.split("/") if part]
        if any(part in (".", "..") or "\\" in part or "\0" in part for part in parts):
            raise HTTPException(404)
        path = os.path.realpath(os.path.join(self.root, *parts))
        if path != self.root and not path.startswith(self.root + os.sep):
            raise HTTPException(404)   # a link that leads out of the folder
        try:
            st = os.stat(path)
            if self.html and stat.S_ISDIR(st.st_mode):
                path = os.path.join(path, "index.html")
                st = os.stat(path)
        except OSError:
            raise HTTPException(404) from None
        if not stat.S_ISREG(st.st_mode):   # the stat already made: no second look at the disk
            raise HTTPException(404)
        return path, (st.st_size, st.st_mtime_ns)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            raise HTTPException(405, headers={"Allow": "GET, HEAD"})
        try:
            asset = load(*self.resolve(route_path(scope)))
        except OSError:   # gone (or unreadable) between its stat and its read
            raise HTTPException(404) from None
        headers = [NO_CACHE, (b"etag", asset.etag), (b"last-modified", asset.last_modified)]
        if asset.compressible:
            headers.append(VARY)
        if _not_modified(scope, asset):
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        body, coding = await asset.encoded(choose(_header(scope, b"accept-encoding")))
        headers += [(b"content-type", asset.media_type), (b"content-length", str(len(body)).encode())]
        if coding is not None:
            headers.append((b"content-encoding", coding.encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


def route_path(scope: Scope) -> str:
    """The request's path below the mount point (what Starlette's own
    StaticFiles serves: `path` without the `root_path` a Mount adds)."""
    path: str = scope["path"]
    root_path: str = scope.get("root_path", "")
    if root_path and path.startswith(root_path) and (len(path) == len(root_path) or path[len(root_path)] == "/"):
        return path[len(root_path):]
    return path
