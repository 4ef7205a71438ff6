"""Street-view imagery from Google's Street View Static API, served from our own origin.

The API takes the server key in the query string, so the browser never
calls it: the server reads a panorama's metadata (free), fetches the image
with the key, keeps it in a small disk cache and serves it at
`/api/trips/<tripId>/street-view/<name>` to the trip's members only.

`<name>` is `<panoId>.<heading>.<signature>`: the signature is an HMAC over
the trip, the panorama and the heading with the app's secret, so a member
can only load images the server grounded for that trip (each image fetch is
billed; nobody can make the server fetch arbitrary panoramas, or another
trip's).

The key is never in a response, a log line or an error: failures are logged
with the path only, and httpx's own INFO request log (which prints whole
URLs) is quietened at start-up (app/lifecycle.py).

Outcomes of `metadata`: a `Pano`, None when Google has no imagery near the
point (ZERO_RESULTS / NOT_FOUND), `Invalid` for INVALID_REQUEST, and
`Unavailable` for anything else (a denied key, a quota, a timeout, a 5xx,
an unreadable answer).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from ..errors import Invalid, NotFound, Unavailable
from .outbound import OutboundClient
from ..shared_reads import SingleFlight

log = logging.getLogger("wayline.streetview")

IMAGE_SIZE = "640x400"       # the API's maximum is 640x640
SEARCH_RADIUS_M = 50         # a panorama this close to the place, outdoors
MAX_IMAGE_BYTES = 2 * 1024 * 1024
CACHE_FILES = 300            # about 60 KiB each: ~20 MiB on disk at most
CACHE_TTL_S = 7 * 24 * 3600
PANO_ID = re.compile(r"^[A-Za-z0-9_-]{1,150}$")
NAME = re.compile(r"^([A-Za-z0-9_-]{1,150})\.(\d{1,3})\.([0-9a-f]{24})$")
UNAVAILABLE = "Street view is unavailable right now"


@dataclass(frozen=True)
class Pano:
    pano_id: str
    lat: float
    lng: float
    date: str | None
    copyright: str


def heading(from_lat: float, from_lng: float, to_lat: float, to_lng: float) -> int:
    """The compass bearing (0-359) from the panorama to the place: where the camera looks."""
    p1, p2 = math.radians(from_lat), math.radians(to_lat)
    dl = math.radians(to_lng - from_lng)
    x = math.sin(dl) * math.cos(p2)
    y = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return round(math.degrees(math.atan2(x, y))) % 360


class StreetView:
    def __init__(self, settings: Any, http: OutboundClient, cache_dir: Path, secret: str):
        if not settings.google_maps_api_key:
            raise ValueError("StreetView needs GOOGLE_MAPS_API_KEY")
        self._key = settings.google_maps_api_key
        self._secret = secret.encode()
        self.base = settings.google_maps_base_url.rstrip("/")
        self.http = http
        self.cache_dir = cache_dir
        self._flight = SingleFlight()

    def __repr__(self) -> str:  # never show the key
        return f"StreetView(base={self.base!r})"

    # -- Google ----------------------------------------------------------------

    async def metadata(self, lat: float, lng: float) -> Pano | None:
        data = await self._get("/maps/api/streetview/metadata", {
            "location": f"{lat:.6f},{lng:.6f}", "radius": SEARCH_RADIUS_M, "source": "outdoor"})
        try:
            body = data.json()
            status = body.get("status")
        except (ValueError, AttributeError):
            raise self._unavailable("metadata", "a body that is not JSON") from None
        if status in ("ZERO_RESULTS", "NOT_FOUND"):
            return None
        if status == "INVALID_REQUEST":
            raise Invalid("Street view could not use that place")
        location = body.get("location") if isinstance(body.get("location"), dict) else {}
        pano_id = body.get("pano_id")
        if status != "OK" or not isinstance(pano_id, str) or not PANO_ID.match(pano_id):
            raise self._unavailable("metadata", f"status {str(status)[:40]}")
        try:
            pano_lat, pano_lng = float(location["lat"]), float(location["lng"])
        except (KeyError, TypeError, ValueError):
            raise self._unavailable("metadata", "no location") from None
        date = body.get("date") if isinstance(body.get("date"), str) else None
        copyright_ = body.get("copyright") if isinstance(body.get("copyright"), str) else "© Google"
        return Pano(pano_id, pano_lat, pano_lng, date and date[:20], copyright_[:120] or "© Google")

    async def _fetch_image(self, pano_id: str, heading_deg: int) -> bytes | None:
        """The JPEG, or None when Google has no image for it (404 with return_error_code)."""
        response = await self._get("/maps/api/streetview", {
            "size": IMAGE_SIZE, "pano": pano_id, "heading": heading_deg, "pitch": 0, "fov": 80,
            "return_error_code": "true"}, not_found_ok=True)
        if response.status_code == 404:
            return None
        data = response.content
        if not data.startswith(b"\xff\xd8") or len(data) > MAX_IMAGE_BYTES:
            raise self._unavailable("image", "a body that is not a JPEG")
        return data

    async def _get(self, path: str, params: dict, not_found_ok: bool = False) -> httpx.Response:
        try:
            response = await self.http.get(self.base + path, params={**params, "key": self._key})
        except httpx.HTTPError as exc:
            # Only the exception's type: its text may carry the URL, and so the key.
            raise self._unavailable(path.rsplit("/", 1)[-1], type(exc).__name__) from None
        if response.status_code >= 400 and not (not_found_ok and response.status_code == 404):
            raise self._unavailable(path.rsplit("/", 1)[-1], f"HTTP {response.status_code}")
        return response

    def _unavailable(self, what: str, why: str) -> Unavailable:
        log.warning("street view %s failed: %s", what, why)
        return Unavailable(UNAVAILABLE, code="service_unavailable")

    # -- our image names --------------------------------------------------------

    def _signature(self, trip_id: str, pano_id: str, heading_deg: int) -> str:
        message = f"wayline-street-view-v1\x1f{trip_id}\x1f{pano_id}\x1f{heading_deg}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:24]

    def image_name(self, trip_id: str, pano_id: str, heading_deg: int) -> str:
        return f"{pano_id}.{heading_deg}.{self._signature(trip_id, pano_id, heading_deg)}"

    def image_url(self, trip_id: str, pano_id: str, heading_deg: int) -> str:
        return f"/api/trips/{trip_id}/street-view/{self.image_name(trip_id, pano_id, heading_deg)}"

    async def ground_image(self, trip_id: str, pano: Pano, heading_deg: int) -> str | None:
        """Fetch (or find cached) the image for a grounding; its same-origin URL,
        or None when Google has no image."""
        if await self._image(pano.pano_id, heading_deg) is None:
            return None
        return self.image_url(trip_id, pano.pano_id, heading_deg)

    async def image_for(self, trip_id: str, name: str) -> bytes:
        """The bytes the image route serves: NotFound unless the name was signed
        for this trip; Unavailable when Google fails."""
        match = NAME.match(name)
        if match is None:
            raise NotFound("No such image")
        pano_id, heading_deg, signature = match.group(1), int(match.group(2)), match.group(3)
        expected = self._signature(trip_id, pano_id, heading_deg)
        if heading_deg >= 360 or not hmac.compare_digest(expected, signature):
            raise NotFound("No such image")
        data = await self._image(pano_id, heading_deg)
        if data is None:
            raise NotFound("No such image")
        return data

    # -- the disk cache ----------------------------------------------------------

    async def _image(self, pano_id: str, heading_deg: int) -> bytes | None:
        path = self.cache_dir / (hashlib.sha256(f"{pano_id}|{heading_deg}".encode()).hexdigest()[:32] + ".jpg")
        cached = await asyncio.to_thread(_read_fresh, path)
        if cached is not None:
            return cached
        # The same image asked twice at once (a grounding and its first view): one fetch.
        return await self._flight.run(path.name, lambda: self._fetch_and_store(pano_id, heading_deg, path))

    async def _fetch_and_store(self, pano_id: str, heading_deg: int, path: Path) -> bytes | None:
        data = await self._fetch_image(pano_id, heading_deg)
        if data is not None:
            await asyncio.to_thread(_store, self.cache_dir, path, data)
        return data


def _read_fresh(path: Path) -> bytes | None:
    try:
        if time.time() - path.stat().st_mtime > CACHE_TTL_S:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _store(cache_dir: Path, path: Path, data: bytes) -> None:
    """Write atomically, then drop the oldest files past CACHE_FILES."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(path)
    files = list(cache_dir.glob("*.jpg"))
    if len(files) <= CACHE_FILES:
        return
    dated = []
    for file in files:
        try:
            dated.append((file.stat().st_mtime, file))
        except OSError:  # removed meanwhile by another writer
            continue
    for _, old in sorted(dated)[:max(0, len(dated) - CACHE_FILES)]:
        old.unlink(missing_ok=True)
