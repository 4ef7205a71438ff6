"""The Content-Security-Policy of the pages (not the JSON API; uploads carry
their own sandbox policy).

Scripts and styles come from our own origin only (the pages have no inline
script or style), images from ourselves, data: URLs and the map tile host,
connections go to ourselves. Google's map hosts are allowed only when a
browser key is set: the Maps JavaScript API loads its scripts from them,
evaluates code and injects its own styles (Google's allowlist policy).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ..settings import Settings

DEFAULT_TILES_URL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
GOOGLE_SCRIPTS = ("https://*.googleapis.com", "https://*.gstatic.com", "https://*.google.com", "'unsafe-eval'", "blob:")
GOOGLE_IMAGES = ("https://*.googleapis.com", "https://*.gstatic.com", "https://*.google.com",
                 "https://*.googleusercontent.com")
GOOGLE_CONNECT = ("https://*.googleapis.com", "https://*.google.com", "https://*.gstatic.com", "data:", "blob:")


def tile_source(tiles_url: str | None) -> str:
    """The origin of a tile URL template, `{s}`-style placeholders in the
    host as wildcards: https://{s}.tile.example/{z}/{x}/{y}.png -> https://*.tile.example."""
    parts = urlsplit(tiles_url or DEFAULT_TILES_URL)
    host = re.sub(r"\{[^}]*\}", "*", parts.netloc)
    if parts.scheme not in ("http", "https") or not host:
        parts, host = urlsplit(DEFAULT_TILES_URL), urlsplit(DEFAULT_TILES_URL).netloc
    return f"{parts.scheme}://{host}"


def content_security_policy(settings: Settings) -> str:
    google = bool(settings.google_maps_browser_key)
    directives = {
        "default-src": ["'self'"],
        "script-src": ["'self'", *(GOOGLE_SCRIPTS if google else ())],
        "style-src": ["'self'", *(("'unsafe-inline'", "https://fonts.googleapis.com") if google else ())],
        "img-src": ["'self'", "data:", tile_source(getattr(settings, "map_tiles_url", None)),
                    *(GOOGLE_IMAGES if google else ())],
        "font-src": ["'self'", *(("https://fonts.gstatic.com",) if google else ())],
        "connect-src": ["'self'", *(GOOGLE_CONNECT if google else ())],
        "worker-src": ["'self'", *(("blob:",) if google else ())],
        "frame-src": ["https://*.google.com"] if google else ["'none'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
    return "; ".join(f"{name} {' '.join(dict.fromkeys(sources))}" for name, sources in directives.items())
