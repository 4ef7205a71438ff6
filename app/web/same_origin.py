"""The same-origin rule for state-changing API requests, and its middleware.

A request that changes something must come from our own pages and carry a
JSON or multipart body (or none), which an HTML form on another site cannot
produce together. "Our own pages" is an origin: scheme, host and port, all
three (`https://host` is not `http://host`, nor `http://host:8443`).

Our origin is WAYLINE_PUBLIC_URL's when it is set (behind a proxy that ends
TLS the server itself sees plain http). Without it, the request's own scheme
and Host header, the scheme as a trusted proxy's `X-Forwarded-Proto` gives it
(the same trust as for client addresses, app/web/client_address.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import lru_cache
from urllib.parse import urlsplit

from starlette.responses import JSONResponse

from ..settings import Settings
from .client_address import peer_is_trusted

UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
DEFAULT_PORTS = {"http": 80, "https": 443}
REFUSED = "This request must come from Wayline's own pages with a JSON body."
Origin = tuple[str, str, int | None]


# The same few origins arrive on every request (our Host header, a browser's
# Origin): parsed once each (urlsplit and its port are a good part of a
# write's middleware time); bounded, as the header is the client's to choose.
@lru_cache(maxsize=256)
def parse_origin(text: str) -> Origin | None:
    """(scheme, host, port) with the scheme's default port filled in; None when unreadable."""
    try:
        parts = urlsplit(text.strip())
        scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    except ValueError:   # a port that is not a number
        return None
    if not scheme or not host:
        return None
    return scheme, host, port if port is not None else DEFAULT_PORTS.get(scheme)


def our_origin(scope, settings: Settings) -> Origin | None:
    if settings.public_url:
        return parse_origin(settings.public_url)
    headers = dict(scope["headers"])
    scheme = scope.get("scheme", "http")
    forwarded = headers.get(b"x-forwarded-proto")
    if forwarded and peer_is_trusted(scope, settings.trusted_proxies):
        scheme = forwarded.decode("latin-1").split(",")[0].strip().lower() or scheme
    host = headers.get(b"host", b"").decode("latin-1")
    return parse_origin(f"{scheme}://{host}") if host else None


def same_origin(headers: dict[str, str], ours: Callable[[], Origin | None]) -> bool:
    """True when a state-changing request comes from our own pages (or a non-browser client).

    Browsers send Sec-Fetch-Site; older ones send Origin. A request with
    neither is not from a browser form, so it cannot ride a member's cookie.
    `ours()` gives our origin: asked only when there is an Origin to compare."""
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = headers.get("origin")
    if origin is None:
        return True
    if origin == "null":
        return False
    mine = ours()
    return mine is not None and parse_origin(origin) == mine


class SameOriginMiddleware:
    """403 `cross_site` for a state-changing API request another site could forge."""

    def __init__(self, app, settings: Settings):
        self.app = app
        self.settings = settings

    def __call__(self, scope, receive, send) -> Awaitable[None]:
        if scope["type"] == "http" and scope["method"] in UNSAFE_METHODS and scope["path"].startswith("/api/"):
            return self._checked(scope, receive, send)
        return self.app(scope, receive, send)   # safe methods: no frame of ours for the request's life

    async def _checked(self, scope, receive, send) -> None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        length = headers.get("content-length")
        has_body = ctype != "" or (length not in (None, "0"))
        allowed_type = (not has_body) or ctype in ("application/json", "multipart/form-data")
        if not allowed_type or not same_origin(headers, lambda: our_origin(scope, self.settings)):
            response = JSONResponse({"error": {"code": "cross_site", "message": REFUSED}}, status_code=403)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
