"""A loopback stand-in for Google Places API (New) and Routes API, for tests.

A real HTTP server (`loopback.PathScriptedServer`: 127.0.0.1, a free port) that
the app in a TestClient reaches with its real httpx code. One server answers both base
URLs: POST /v1/places:searchNearby, POST /v1/places:searchText,
GET /v1/places/{id}, POST /directions/v2:computeRoutes,
POST /distanceMatrix/v2:computeRouteMatrix.

Like Google it refuses a request without a key (403 PERMISSION_DENIED), with a
wrong key (400 INVALID_ARGUMENT, API_KEY_INVALID), without a field mask or
with an unknown field / a search field without `places.` (400), and
`routingPreference` outside DRIVE (400), in Google's error shape
`{"error": {"code", "message", "status"}}`. Answers hold only the masked
fields (`*` = all). Fixtures: 15 places around Lisbon (38.72, -9.14) with
weekly hours and dated `currentOpeningHours` for the 7 days from `today`: a
midday break, a late-night bar, a 24-hour pharmacy, a viewpoint with no hours,
kitchen hours, a special-day closure, a permanently closed cafe. Routes are
straight-line distance x a per-mode detour at per-mode speeds (not
app.legs' estimate speeds, so tests can tell them apart).

    from standins.google_standin import google_settings, google_standin  # noqa: F401

    def test_x(settings, google_standin):
        with make_client(google_settings(settings, google_standin)) as client: ...
        assert google_standin.calls["/v1/places:searchText"] == 1

Street View Static API (key in the query, as Google takes it there):
GET /maps/api/streetview/metadata (JSON `{status, pano_id, location, date,
copyright}`; statuses OK, ZERO_RESULTS when no panorama lies within `radius`,
INVALID_REQUEST, REQUEST_DENIED for a missing or wrong key, and whatever
`street_view_status` forces) and GET /maps/api/streetview (an error status
when `street_view_image_status` is set; else a tiny valid JPEG
for a known `pano`; 404 for an unknown one with `return_error_code=true`, a
grey placeholder JPEG without it, as Google does; 403 without the key; 400
for a size over 640x640). Panoramas: `panoramas` {pano_id: (lat, lng, date)},
`add_pano(pano_id, lat, lng, date)`; two by default, next to the Castelo and
the Mercado da Ribeira.

Scripting: `key`, `url`; `places` {id: place JSON} and `add_place(id, name,
lat, lng, types, **place_json kwargs)`; `today` (first dated day, default UTC
today); `fail(prefix, status=500, message=None, times=None)` (Google errors on
paths starting with prefix; None = until reset); `delay(prefix, seconds)`;
`no_route_modes` (e.g. {"TRANSIT"}); `answers` {path: JSON} (a 200 with exactly that body,
for answers of the wrong shape; unmasked); `speeds`, `detour`; `calls` (Counter of
paths; details: "/v1/places/<id>"); `requests` (RecordedRequest: method, path,
query, headers, body, raw); `last(path)`; `reset()` (scripting, calls, requests).
"""

from __future__ import annotations

import base64
import copy
import math
import secrets
import unicodedata
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import unquote

from .google_places import EVERY_DAY, MON_SAT, TUE_SUN, always_open, place_json, weekly
from .loopback import PathScriptedServer

PLACES_PREFIX = "/v1/places"
ROUTES_PATH = "/directions/v2:computeRoutes"
MATRIX_PATH = "/distanceMatrix/v2:computeRouteMatrix"
PLACE_FIELDS = {
    "name", "id", "displayName", "types", "primaryType", "primaryTypeDisplayName", "formattedAddress",
    "shortFormattedAddress", "location", "viewport", "rating", "userRatingCount", "priceLevel", "priceRange",
    "businessStatus", "utcOffsetMinutes", "timeZone", "regularOpeningHours", "currentOpeningHours",
    "regularSecondaryOpeningHours", "currentSecondaryOpeningHours", "googleMapsUri", "websiteUri",
    "nationalPhoneNumber", "internationalPhoneNumber", "editorialSummary", "photos", "reviews",
}
ROUTE_FIELDS = {"routes", "fallbackInfo", "geocodingResults"}
MATRIX_FIELDS = {"originIndex", "destinationIndex", "status", "condition", "distanceMeters", "duration",
                 "staticDuration", "travelAdvisory", "fallbackInfo", "localizedValues"}
STATUS_WORDS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
                500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
SPEEDS = {"WALK": 1.35, "BICYCLE": 4.2, "TRANSIT": 5.5, "DRIVE": 7.0}
DETOUR = {"WALK": 1.25, "BICYCLE": 1.3, "TRANSIT": 1.35, "DRIVE": 1.45}
TRANSIT_WAIT_S = 240
STREET_VIEW_PATH = "/maps/api/streetview"
STREET_VIEW_METADATA_PATH = "/maps/api/streetview/metadata"
# An 8x5 baseline JPEG (sky over street), made with a browser canvas.
STREET_VIEW_JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/4gHYSUNDX1BST0ZJTEUAAQEAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABhY3NwAAAA"
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "AAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAABUAAAABRyVFJDAAABZAAAAChn"
    "VFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAAAAgAAAAcAHMAUgBHAEJYWVogAAAAAAAA"
    "b6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9YWVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQA"
    "AAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAMZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAg"
    "ADIAMAAxADb/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBD"
    "ARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAAFAAgDASIAAhEB"
    "AxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAP/xAAYEAEAAwEAAAAAAAAAAAAAAAAAAQITUf/EABUBAQEAAAAAAAAAAAAAAAAAAAID/8QAGBEA"
    "AwEBAAAAAAAAAAAAAAAAAAJREhP/2gAMAwEAAhEDEQA/AJb25ACfR6LCw//Z")


# -- fixtures ---------------------------------------------------------------------

def default_places() -> dict[str, dict]:
    p = [
        place_json("ChIJ_mercado_ribeira", "Mercado da Ribeira", 38.7069, -9.1459, ["food_court", "restaurant", "food"],
                   rating=4.5, count=52000, price="PRICE_LEVEL_MODERATE", hours=weekly(EVERY_DAY, ("10:00", "00:00"))),
        place_json("ChIJ_tasca_esquina", "Tasca da Esquina", 38.7131, -9.1601,
                   ["portuguese_restaurant", "restaurant", "food"], rating=4.6, count=2100,
                   price="PRICE_LEVEL_MODERATE", hours=weekly(MON_SAT, ("12:00", "15:00"), ("19:00", "23:00"))),
        place_json("ChIJ_pensao_amor", "Pensão Amor", 38.7070, -9.1445, ["bar", "night_club"], rating=4.3, count=9000,
                   price="PRICE_LEVEL_MODERATE", hours=weekly(EVERY_DAY, ("18:00", "03:00"))),
        place_json("ChIJ_farmacia_24h", "Farmácia Estácio 24h", 38.7142, -9.1390, ["pharmacy", "health"],
                   rating=4.1, count=300, hours=always_open()),
        place_json("ChIJ_miradouro_luzia", "Miradouro de Santa Luzia", 38.7117, -9.1301,
                   ["tourist_attraction", "scenic_spot"], rating=4.7, count=30000),
        place_json("ChIJ_museu_azulejo", "Museu Nacional do Azulejo", 38.7247, -9.1135,
                   ["museum", "tourist_attraction"], rating=4.6, count=15000,
                   hours=weekly(TUE_SUN, ("10:00", "18:00"))),
        place_json("ChIJ_pasteis_belem", "Pastéis de Belém", 38.6975, -9.2032, ["bakery", "cafe", "food"],
                   rating=4.6, count=70000, price="PRICE_LEVEL_INEXPENSIVE",
                   hours=weekly(EVERY_DAY, ("08:00", "23:00"))),
        place_json("ChIJ_cervejaria_ramiro", "Cervejaria Ramiro", 38.7207, -9.1357,
                   ["seafood_restaurant", "restaurant", "food"], rating=4.5, count=25000, price="PRICE_LEVEL_EXPENSIVE",
                   hours=weekly(TUE_SUN, ("12:00", "00:30")), kitchen=weekly(TUE_SUN, ("12:00", "00:00"))),
        place_json("ChIJ_castelo_jorge", "Castelo de São Jorge", 38.7139, -9.1335,
                   ["tourist_attraction", "historical_landmark"], rating=4.5, count=80000,
                   hours=weekly(EVERY_DAY, ("09:00", "21:00"))),
        place_json("ChIJ_a_brasileira", "A Brasileira", 38.7107, -9.1424, ["cafe", "coffee_shop", "food"],
                   rating=4.0, count=11000, price="PRICE_LEVEL_INEXPENSIVE",
                   hours=weekly(EVERY_DAY, ("08:00", "02:00"))),
        place_json("ChIJ_mosteiro_jeronimos", "Mosteiro dos Jerónimos", 38.6979, -9.2068,
                   ["tourist_attraction", "church"], rating=4.7, count=60000,
                   hours=weekly(TUE_SUN, ("09:30", "18:00"))),
        place_json("ChIJ_lx_factory", "LX Factory", 38.7036, -9.1784, ["shopping_mall", "tourist_attraction"],
                   rating=4.5, count=40000, hours=weekly(EVERY_DAY, ("09:00", "00:00"))),
        place_json("ChIJ_oceanario", "Oceanário de Lisboa", 38.7635, -9.0937, ["aquarium", "tourist_attraction"],
                   rating=4.7, count=90000, hours=weekly(EVERY_DAY, ("10:00", "20:00"))),
        place_json("ChIJ_taberna_flores", "Taberna da Rua das Flores", 38.7099, -9.1440,
                   ["portuguese_restaurant", "restaurant", "food"], rating=4.6, count=3000,
                   price="PRICE_LEVEL_VERY_EXPENSIVE", hours=weekly(EVERY_DAY, ("12:00", "23:30")), special={2: []}),
        place_json("ChIJ_cafe_antigo", "Café Antigo do Chiado", 38.7112, -9.1410, ["cafe", "food"], rating=3.9,
                   count=150, status="CLOSED_PERMANENTLY", hours=weekly(EVERY_DAY, ("08:00", "19:00"))),
    ]
    return {place["id"]: place for place in p}


def dated(hours: dict, today: date, special: dict | None = None) -> dict:
    """currentOpeningHours for the 7 days from `today`: weekly periods with
    dates, special days replacing a date's periods."""
    special = {today + timedelta(days=k): v for k, v in (special or {}).items()}
    periods = []
    if len(hours.get("periods", [])) == 1 and "close" not in hours["periods"][0]:
        g = (today.weekday() + 1) % 7
        return {"openNow": True, "periods": [{"open": {"day": g, "hour": 0, "minute": 0, "date": _ymd(today)}}]}
    for k in range(7):
        d = today + timedelta(days=k)
        g = (d.weekday() + 1) % 7
        if d in special:
            spans = [({"day": g, "hour": int(o[:2]), "minute": int(o[3:])},
                      {"day": g, "hour": int(c[:2]), "minute": int(c[3:])}) for o, c in special[d]]
        else:
            spans = [(p["open"], p["close"]) for p in hours.get("periods", []) if p["open"]["day"] == g]
        for op, cl in spans:
            close_date = d + timedelta(days=(cl["day"] - op["day"]) % 7)
            periods.append({"open": dict(op, date=_ymd(d)), "close": dict(cl, date=_ymd(close_date))})
    out = {"openNow": True, "periods": periods}
    if special:
        out["specialDays"] = [{"date": _ymd(d)} for d in sorted(special)]
    return out


def _ymd(d: date) -> dict:
    return {"year": d.year, "month": d.month, "day": d.day}


# -- helpers ----------------------------------------------------------------------


def haversine_m(lat1, lng1, lat2, lng2) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
    return 2 * 6_371_000.0 * math.asin(math.sqrt(a))


def pick(value: Any, paths: list[list[str]]) -> Any:
    """Keep only the masked paths (lists: applied to each element)."""
    if isinstance(value, list):
        return [pick(v, paths) for v in value]
    if not isinstance(value, dict):
        return value
    heads: dict[str, list[list[str]]] = {}
    for path in paths:
        heads.setdefault(path[0], []).append(path[1:])
    out = {}
    for head, rests in heads.items():
        if head in value:
            out[head] = value[head] if any(not r for r in rests) else pick(value[head], rests)
    return out


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn")


class GoogleError(Exception):
    def __init__(self, status: int, message: str, word: str | None = None, reason: str | None = None):
        self.status, self.message = status, message
        self.word, self.reason = word or STATUS_WORDS.get(status, "UNKNOWN"), reason

    def payload(self) -> dict:
        error: dict[str, Any] = {"code": self.status, "message": self.message, "status": self.word}
        if self.reason:
            error["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": self.reason,
                                 "domain": "googleapis.com"}]
        return {"error": error}


class GoogleStandIn(PathScriptedServer):
    name = "google-standin"
    json_content_type = "application/json; charset=UTF-8"

    def __init__(self) -> None:
        super().__init__()
        self.key = "test-google-key-" + secrets.token_hex(8)
        self.places = default_places()
        self.today: date | None = None
        self.speeds, self.detour = dict(SPEEDS), dict(DETOUR)
        self.no_route_modes: set[str] = set()
        self.answers: dict[str, Any] = {}   # path -> the 200 body it answers, whatever was asked
        self.panoramas: dict[str, tuple[float, float, str]] = {
            "CAoSLEFGMVFpcE_castelo": (38.71382, -9.13372, "2023-06"),
            "CAoSLEFGMVFpcE_ribeira": (38.70701, -9.14571, "2022-09"),
        }
        self.street_view_status: str | None = None   # forces the metadata status (e.g. OVER_QUERY_LIMIT)
        self.street_view_image_status: int | None = None  # forces an HTTP error for the image only

    def add_pano(self, pano_id: str, lat: float, lng: float, date: str = "2024-05") -> None:
        with self.lock:
            self.panoramas[pano_id] = (lat, lng, date)
    def add_place(self, pid: str, name: str, lat: float, lng: float, types: list[str] | None = None, **kw) -> dict:
        place = place_json(pid, name, lat, lng, types or ["restaurant", "food"], **kw)
        with self.lock:
            self.places[pid] = place
        return place

    def reset(self) -> None:
        super().reset()
        self.no_route_modes.clear()
        self.answers.clear()
        self.street_view_status = None
        self.street_view_image_status = None

    def place_now(self, pid: str) -> dict:
        """The place as Google would answer today (dated hours added)."""
        place = copy.deepcopy(self.places[pid])
        special = place.pop("_special", None)
        today = self.today or datetime.now(UTC).date()
        if "regularOpeningHours" in place:
            place["currentOpeningHours"] = dated(place["regularOpeningHours"], today, special)
        if "regularSecondaryOpeningHours" in place:
            place["currentSecondaryOpeningHours"] = [
                dict(dated(h, today), secondaryHoursType=h.get("secondaryHoursType"))
                for h in place["regularSecondaryOpeningHours"]]
        return place

    # -- dispatch --------------------------------------------------------------

    def serve(self, request, handler) -> None:
        if not request.path.startswith(STREET_VIEW_PATH):
            super().serve(request, handler)
            return
        self.record(request)
        if not self.waited(request.path):
            handler.send_json(503, GoogleError(503, "The service is currently unavailable.").payload())
            return
        failure = self.scripted_failure(request.path)
        if failure:
            handler.send_bytes(failure[0], "text/plain; charset=UTF-8", (failure[1] or "Server Error").encode())
            return
        query = {k: v[0] for k, v in request.query.items()}
        if request.path == STREET_VIEW_METADATA_PATH:
            handler.send_json(200, self._street_view_metadata(query))
            return
        if request.path == STREET_VIEW_PATH:
            handler.send_bytes(*self._street_view_image(query))
            return
        handler.send_bytes(404, "text/plain; charset=UTF-8", b"Not Found")
    def handle(self, method, path, query, headers, body):
        if not self.waited(path):
            return 503, GoogleError(503, "The service is currently unavailable.").payload()
        try:
            self._check_key(headers, query)
            failure = self.scripted_failure(path)
            if failure:
                raise GoogleError(failure[0], failure[1] or "Internal error encountered.")
            with self.lock:
                if path in self.answers:
                    return 200, copy.deepcopy(self.answers[path])
            mask = headers.get("x-goog-fieldmask") or (query.get("$fields") or query.get("fields") or [""])[0]
            if not mask:
                raise GoogleError(400, "FieldMask is a required parameter. See https://cloud.google.com/apis/docs/"
                                       "system-parameters on how to provide it. As an example, you can set the "
                                       "header 'X-Goog-FieldMask' to value 'places.displayName'.")
            paths = [m.strip().split(".") for m in mask.split(",") if m.strip()]
            if method == "POST" and path in ("/v1/places:searchNearby", "/v1/places:searchText"):
                return 200, self._search(path, body if isinstance(body, dict) else {}, paths)
            if method == "GET" and path.startswith(PLACES_PREFIX + "/"):
                return 200, self._details(unquote(path[len(PLACES_PREFIX) + 1:]), paths)
            if method == "POST" and path == ROUTES_PATH:
                return 200, self._routes(body if isinstance(body, dict) else {}, paths)
            if method == "POST" and path == MATRIX_PATH:
                return 200, self._matrix(body if isinstance(body, dict) else {}, paths)
            raise GoogleError(404, f"Method not found: {method} {path}")
        except GoogleError as exc:
            return exc.status, exc.payload()

    def _check_key(self, headers, query) -> None:
        key = headers.get("x-goog-api-key") or (query.get("key") or [""])[0]
        if not key:
            raise GoogleError(403, "The request is missing a valid API key.")
        if key != self.key:
            raise GoogleError(400, "API key not valid. Please pass a valid API key.", reason="API_KEY_INVALID")

    def _check_mask(self, paths, allowed: set[str], prefix: str | None) -> list[list[str]]:
        if paths == [["*"]]:
            return []
        out = []
        for p in paths:
            if prefix is not None:
                if p[0] != prefix or len(p) < 2:
                    raise GoogleError(400, f"Invalid field: {'.'.join(p)}")
                p = p[1:]
            if p[0] not in allowed:
                raise GoogleError(400, f"Invalid field: {'.'.join(p)}")
            out.append(p)
        return out

    # -- places ----------------------------------------------------------------

    def _search(self, path: str, body: dict, paths) -> dict:
        fields = self._check_mask(paths, PLACE_FIELDS, "places")
        limit = body.get("maxResultCount", 20)
        if not isinstance(limit, int) or not 1 <= limit <= 20:
            raise GoogleError(400, "maxResultCount must be between 1 and 20.")
        with self.lock:
            candidates = list(self.places)
        if path.endswith("searchNearby"):
            circle = (body.get("locationRestriction") or {}).get("circle")
            if not circle:
                raise GoogleError(400, "locationRestriction is required.")
            wanted = set(body.get("includedTypes") or [])
            found = [pid for pid in candidates if not wanted or wanted & set(self.places[pid]["types"])]
            found = [pid for pid in found if self._distance(pid, circle["center"]) <= float(circle.get("radius", 0))]
            if body.get("rankPreference") == "DISTANCE":
                found.sort(key=lambda pid: self._distance(pid, circle["center"]))
            else:
                found.sort(key=lambda pid: -self.places[pid]["userRatingCount"])
        else:
            text = _fold(str(body.get("textQuery") or ""))
            if not text.strip():
                raise GoogleError(400, "textQuery is required.")
            words = [w for w in text.split() if len(w) >= 3]
            found = [pid for pid in candidates if any(
                w in _fold(self.places[pid]["displayName"]["text"]) or
                any(w in t.replace("_", " ") for t in self.places[pid]["types"]) for w in words)]
            circle = (body.get("locationBias") or {}).get("circle")
            if circle:
                found.sort(key=lambda pid: self._distance(pid, circle["center"]))
        places = [self.place_now(pid) for pid in found[:limit]]
        return {"places": pick(places, fields) if fields else places} if places else {}

    def _details(self, pid: str, paths) -> dict:
        fields = self._check_mask(paths, PLACE_FIELDS, None)
        if pid not in self.places:
            raise GoogleError(404, "Requested entity was not found.")
        place = self.place_now(pid)
        return pick(place, fields) if fields else place

    def _distance(self, pid: str, center: dict) -> float:
        loc = self.places[pid]["location"]
        return haversine_m(loc["latitude"], loc["longitude"], center["latitude"], center["longitude"])

    # -- street view -------------------------------------------------------------

    def _street_view_metadata(self, query: dict) -> dict:
        key = query.get("key")
        if not key:
            return {"status": "REQUEST_DENIED", "error_message": "You must use an API key to authenticate each "
                                                                   "request to Google Maps Platform APIs."}
        if key != self.key:
            return {"status": "REQUEST_DENIED", "error_message": "The provided API key is invalid."}
        if self.street_view_status:
            return {"status": self.street_view_status, "error_message": "Scripted by the test."}
        found = self._pano_for(query)
        if found == "invalid":
            return {"status": "INVALID_REQUEST"}
        if found is None:
            return {"status": "ZERO_RESULTS"}
        pano_id, (lat, lng, date_) = found
        return {"copyright": "© Google", "date": date_, "location": {"lat": lat, "lng": lng}, "pano_id": pano_id,
                "status": "OK"}

    def _pano_for(self, query: dict):
        if query.get("pano"):
            pano = query["pano"]
            return (pano, self.panoramas[pano]) if pano in self.panoramas else None
        try:
            lat, lng = (float(v) for v in query.get("location", "").split(","))
            radius = float(query.get("radius", 50))
        except ValueError:
            return "invalid"
        with self.lock:
            panos = list(self.panoramas.items())
        near = sorted((haversine_m(lat, lng, p[0], p[1]), pid, p) for pid, p in panos)
        return (near[0][1], near[0][2]) if near and near[0][0] <= radius else None

    def _street_view_image(self, query: dict) -> tuple[int, str, bytes]:
        if query.get("key") != self.key:
            return 403, "text/plain; charset=UTF-8", (
                b"The Google Maps Platform server rejected your request. The provided API key is invalid.")
        try:
            width, height = (int(v) for v in query.get("size", "").split("x"))
        except ValueError:
            width = height = 0
        if self.street_view_image_status:
            return self.street_view_image_status, "text/plain; charset=UTF-8", b"Server Error"
        if not (1 <= width <= 640 and 1 <= height <= 640):
            return 400, "text/plain; charset=UTF-8", b"Invalid request. Invalid 'size' parameter."
        found = self._pano_for(query)
        if found is None or found == "invalid":
            if query.get("return_error_code") == "true":
                return 404, "text/plain; charset=UTF-8", b"Not Found"
            return 200, "image/jpeg", STREET_VIEW_JPEG  # Google's grey "no imagery" picture
        return 200, "image/jpeg", STREET_VIEW_JPEG

    # -- routes ----------------------------------------------------------------

    def _leg(self, origin: dict, destination: dict, mode: str) -> tuple[int, int] | None:
        if mode in self.no_route_modes:
            return None
        a = ((origin or {}).get("location") or {}).get("latLng")
        b = ((destination or {}).get("location") or {}).get("latLng")
        if not a or not b:
            raise GoogleError(400, "Origin and destination must be set.")
        meters = haversine_m(a["latitude"], a["longitude"], b["latitude"], b["longitude"]) * self.detour[mode]
        seconds = meters / self.speeds[mode] + (TRANSIT_WAIT_S if mode == "TRANSIT" else 0)
        return int(round(meters)), int(round(seconds))

    def _mode(self, body: dict) -> str:
        mode = body.get("travelMode") or "DRIVE"
        if mode not in self.speeds:
            raise GoogleError(400, f"Invalid value at 'travel_mode' ({mode})")
        if body.get("routingPreference") and mode not in ("DRIVE", "TWO_WHEELER"):
            raise GoogleError(400, "Routing preference cannot be set for this travel mode.")
        return mode

    def _routes(self, body: dict, paths) -> dict:
        fields = self._check_mask(paths, ROUTE_FIELDS, None)
        leg = self._leg(body.get("origin"), body.get("destination"), self._mode(body))
        if leg is None:
            return {}  # Google answers an empty object when there is no route
        meters, seconds = leg
        a, b = (body["origin"]["location"]["latLng"], body["destination"]["location"]["latLng"])
        corner = (a["latitude"], b["longitude"])   # a bend, so a test can tell the path from a straight line
        line = {"type": "LineString", "coordinates": [[a["longitude"], a["latitude"]], [corner[1], corner[0]],
                                                      [b["longitude"], b["latitude"]]]}
        polyline = ({"geoJsonLinestring": line} if body.get("polylineEncoding") == "GEO_JSON_LINESTRING"
                    else {"encodedPolyline": "_standin_"})
        route = {"distanceMeters": meters, "duration": f"{seconds}s", "staticDuration": f"{seconds}s",
                 "polyline": polyline}
        answer = {"routes": [route]}
        return pick(answer, fields) if fields else answer

    def _matrix(self, body: dict, paths) -> list:
        fields = self._check_mask(paths, MATRIX_FIELDS, None)
        mode = self._mode(body)
        origins, destinations = body.get("origins") or [], body.get("destinations") or []
        if not origins or not destinations:
            raise GoogleError(400, "Origins and destinations must be set.")
        if len(origins) * len(destinations) > 625:
            raise GoogleError(400, "Number of elements exceeds the limit of 625.")
        elements = []
        for i, o in enumerate(origins):
            for j, d in enumerate(destinations):
                leg = self._leg(o.get("waypoint"), d.get("waypoint"), mode)
                el: dict[str, Any] = {"status": {}}
                if i:  # proto3 JSON leaves out zero values
                    el["originIndex"] = i
                if j:
                    el["destinationIndex"] = j
                if leg is None:
                    el["condition"] = "ROUTE_NOT_FOUND"
                else:
                    el.update(condition="ROUTE_EXISTS", distanceMeters=leg[0], duration=f"{leg[1]}s",
                              staticDuration=f"{leg[1]}s")
                elements.append(el)
        return pick(elements, fields) if fields else elements


def google_settings(settings, standin: GoogleStandIn, **changes):
    """`settings` with Places and Routes pointed at the stand-in, with its key."""
    return settings.with_(google_maps_api_key=standin.key, google_places_base_url=standin.url,
                          google_routes_base_url=standin.url, google_maps_base_url=standin.url, **changes)
