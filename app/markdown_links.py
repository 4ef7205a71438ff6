"""Where a Markdown link or image in member text may point: this trip's
uploads, or a web address. Nothing else.

Notes (stops, days), comments and chat messages are shown with a small
Markdown subset (public/planner/ui.js), where `![alt](url)` becomes an image
the browser fetches at once with the viewer's cookie. A prefix check let
`![a](/api/uploads/../trips/<id>/live?1)` through, which the browser
resolves to the trip's live stream: any same-origin GET was reachable. So
every link is resolved and normalised (as a browser would) before it is
allowed:

- `upload`: exactly `/api/uploads/trips/<this trip>/<one of our stored
  names>` (or that on our own origin, in canonical form): no query, no
  fragment, no `..`, no escapes, nothing a browser would rewrite;
- `web`: an `http(s)://host/...` address on another origin (a link; the
  page never shows another site's image inline);
- anything else (`javascript:`, `data:`, another trip's files, any other
  path of ours, a host with `%`, `\\` or a user in it): refused, 422 naming
  the field.

public/links.js is the page's twin; both run spec/fixtures/markdown_links.json.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from .errors import Invalid

# The page's own pattern (public/planner/ui.js): what it turns into a link or an image.
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
STORED = r"[0-9a-f]{16}\.(?:png|jpg|webp|pdf|txt|md|csv)"
TRIP_ID = re.compile(r"[0-9a-f]{16}")
WEB = re.compile(r"https?://", re.IGNORECASE)
DEFAULT_PORTS = {"http": 80, "https": 443}
Target = Literal["upload", "web"]


def _origin(url: str) -> tuple[str, str, int | None] | None:
    try:
        parts = urlsplit(url)
        scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None
    return (scheme, host, port if port is not None else DEFAULT_PORTS.get(scheme)) if host else None


def link_target(url: str, trip_id: str, origin: str | None = None) -> Target | None:
    """What `url` is in a note of trip `trip_id` shown at `origin` (ours, e.g.
    WAYLINE_PUBLIC_URL; None when unknown): "upload", "web", or None (refused)."""
    if not TRIP_ID.fullmatch(trip_id or ""):
        return None
    path = f"/api/uploads/trips/{trip_id}/"
    if url.startswith(path) and re.fullmatch(STORED, url[len(path):]):
        return "upload"
    if not WEB.match(url):
        return None
    authority = url.split("/", 3)[2]
    if any(c in authority for c in "%\\@") or any(ord(c) <= 32 for c in url):
        return None
    theirs = _origin(url)
    if theirs is None:
        return None
    ours = _origin(origin) if origin else None
    if ours is not None and theirs == ours:   # our origin: only an upload, written as a browser keeps it
        scheme, host, port = ours
        base = f"{scheme}://{host}" + ("" if port == DEFAULT_PORTS.get(scheme) else f":{port}")
        rest = url[len(base):] if url.startswith(base) else ""
        return "upload" if rest.startswith(path) and re.fullmatch(STORED, rest[len(path):]) else None
    return "web"


def check_links(text: str | None, trip_id: str, field: str, origin: str | None = None) -> None:
    """422 naming `field` when `text` links or shows anything but this trip's uploads or a web address."""
    for match in LINK.finditer(text or ""):
        url = match.group(3)
        if link_target(url, trip_id, origin) is None:
            shown = url if len(url) <= 80 else url[:77] + "..."
            raise Invalid(f"{field}: a link may point at a web address (https://...) or at one of this trip's "
                          f"files, and {shown} is neither", field=field)
