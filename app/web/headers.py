"""Response headers every answer gets, in one middleware.

Pages (not the JSON API) must not be framed by other sites or sniffed, and
run only our own scripts (app/web/csp.py). API answers are never sniffed
as another type (`nosniff`) and are not stored by browsers or proxies
(`Cache-Control: no-store`: they hold members' trips and names), unless the
route chose its own caching: the trip's ETag read (`private, no-cache`),
an upload or a street-view image (`private, max-age`), a live stream.
"""

from __future__ import annotations

from collections.abc import Awaitable

from ..settings import Settings
from .csp import content_security_policy

NOSNIFF = (b"x-content-type-options", b"nosniff")
API_HEADERS = [NOSNIFF]
NO_STORE = (b"cache-control", b"no-store")


def page_headers(settings: Settings) -> list[tuple[bytes, bytes]]:
    return [(b"x-frame-options", b"DENY"), NOSNIFF, (b"referrer-policy", b"same-origin"),
            (b"content-security-policy", content_security_policy(settings).encode())]


class ResponseHeadersMiddleware:
    def __init__(self, app, settings: Settings):
        self.app = app
        self.pages = page_headers(settings)

    def __call__(self, scope, receive, send) -> Awaitable[None]:
        # The inner app's own coroutine with `send` wrapped, not awaited here:
        # no frame of ours for the request's life (hours for a live stream).
        if scope["type"] != "http":
            return self.app(scope, receive, send)
        api = scope["path"].startswith("/api/")

        async def with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                if api:
                    headers += [h for h in API_HEADERS if h[0] not in names]
                    if b"cache-control" not in names:
                        headers.append(NO_STORE)
                else:
                    headers += self.pages
                message = {**message, "headers": headers}
            await send(message)

        return self.app(scope, receive, with_headers)
