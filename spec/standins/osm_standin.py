"""A loopback stand-in for the OpenStreetMap services, for tests: Nominatim,
Overpass and OSRM on one server (`loopback.PathScriptedServer`).

- Nominatim: `GET /search?q=..&format=jsonv2[&viewbox=W,N,E,S&bounded=1]`
  and `GET /lookup?osm_ids=N1,W2&format=jsonv2`, answering jsonv2 results
  with `address` (addressdetails=1), `extratags` (extratags=1) and
  `namedetails` (namedetails=1). Like the public server it refuses (403, an
  HTML page) a request without a User-Agent or with a library's default one.
  Words match names (any language, alt/short names) and the main tag's value
  ("museum"); `accept-language` picks `name:<lang>`.
- Overpass: `POST /api/interpreter` with form field `data`: a real (small)
  interpreter of the QL the app sends: `[out:json][timeout:N];(nwr[filters]
  (around:R,LAT,LNG);...);out center tags N;` with `["k"]`, `[!"k"]`,
  `["k"="v"]`, `["k"!="v"]`, `["k"~"re"(,i)]`, `["k"!~"re"]`; anything else is
  a 400 with an HTML error, as Overpass answers. Elements come back in id
  order (nodes, ways, relations), ways and relations with their `center`.
- OSRM: `GET /routed-{foot|bike|car}/route/v1/{profile}/LON,LAT;LON,LAT` and
  `.../table/v1/{profile}/...?sources=..&destinations=..&annotations=duration,distance`.
  Metres are straight-line x a per-profile detour, seconds are metres / a
  per-profile speed (not app.legs' estimate speeds, so tests can tell them
  apart). A point far outside the fixture's area is `NoSegment` (400), as an
  OSRM server loaded with one region answers, which also catches lat/lon swapped.

The places are `spec/fixtures/osm_cph.json`: real Copenhagen places as
Overpass returns them (approximate coordinates, plausible tags and
opening_hours; made-up ids).

    from standins.osm_standin import osm_settings  # the fixture is `osm_standin`

    async def test_x(osm_standin): ...
        assert osm_standin.count("/search") == 1

Scripting: `url`; `elements` {(type, id): element} and `add_place(type, id,
lat, lon, **tags)`; `fail(prefix, status=500, message=None, times=None)`
(each service's own error body); `delay(prefix, seconds)` (a timeout for a
client with a shorter one); `garble(prefix, times=None)` (200 with a body that
is not JSON); `remark(text, times=None)` (Overpass's 200 with a "runtime
error" remark and no elements); `answers` {path: JSON} (a 200 with exactly
that body, for answers of the wrong shape); `unreachable` (set of (lat, lon) rounded to 4
places that OSRM cannot route to or from: NoRoute / null); `speeds`,
`detour`. Recorded: `requests`, `calls` (Counter of paths), `count(prefix)`,
`form(request)` (Overpass's `data`), `arrivals` [(time.monotonic(), path)],
`max_active` (Counter: most requests in flight at once per service:
"nominatim", "overpass", "osrm"); `reset()` clears scripting and records.
"""

from __future__ import annotations

import copy
import json
import math
import re
import time
import unicodedata
import zlib
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from .loopback import LoopbackHandler, PathScriptedServer, RecordedRequest

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "osm_cph.json"
OVERPASS_PATH = "/api/interpreter"
LICENCE = "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright"
OVERPASS_COPYRIGHT = ("The data included in this document is from www.openstreetmap.org. "
                      "The data is made available under ODbL.")
SPEEDS = {"foot": 1.4, "bike": 4.5, "car": 7.5}        # m/s, door to door in a city
DETOUR = {"foot": 1.2, "bike": 1.3, "car": 1.45}
MAIN_KEYS = ("amenity", "shop", "tourism", "leisure", "historic", "natural", "railway", "man_made", "landuse",
             "highway")
TYPE_ORDER = {"node": 0, "way": 1, "relation": 2}
LETTERS = {"N": "node", "W": "way", "R": "relation"}
COVERAGE_MARGIN_DEG = 0.3
TABLE_MAX = 100

OSRM_PATH = re.compile(r"/routed-(foot|bike|car)/(route|table)/v1/([a-z]+)/([^/]+)")
STATEMENT = re.compile(r"nwr((?:\[[^\]]+\])+)\(around:(\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)\)")
FILTER = re.compile(r'\[(!?)"([^"]+)"(?:(=|!=|~|!~)"([^"]*)"(,i)?)?\]')
QUERY = re.compile(r"\[out:json\](?:\[timeout:(\d+)\])?;\((.*)\);out center tags (\d+);", re.S)


def load_elements() -> dict[tuple[str, int], dict]:
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return {(e["type"], e["id"]): e for e in doc["elements"]}


def haversine_m(lat1, lng1, lat2, lng2) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
    return 2 * 6_371_000.0 * math.asin(math.sqrt(a))


def point(element: dict) -> tuple[float, float]:
    where = element if element["type"] == "node" else element["center"]
    return where["lat"], where["lon"]


def fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn")


def words(text: str) -> list[str]:
    return re.findall(r"\w+", fold(text))


class Refusal(Exception):
    """An error answer: (status, content type, body)."""

    def __init__(self, status: int, content_type: str, body: bytes):
        self.status, self.content_type, self.body = status, content_type, body


def json_error(status: int, payload: dict) -> Refusal:
    return Refusal(status, "application/json; charset=utf-8", json.dumps(payload).encode())


def html_error(status: int, text: str) -> Refusal:
    page = f"<!DOCTYPE html><html><head><title>Error</title></head><body><p>{text}</p></body></html>"
    return Refusal(status, "text/html; charset=utf-8", page.encode())


def nominatim_error(status: int, message: str) -> Refusal:
    return json_error(status, {"error": {"code": status, "message": message}})


def osrm_error(code: str, message: str, status: int = 400) -> Refusal:
    return json_error(status, {"code": code, "message": message})


def service_of(path: str) -> str:
    if path.startswith(OVERPASS_PATH):
        return "overpass"
    if path.startswith("/routed-"):
        return "osrm"
    return "nominatim"


class OSMStandIn(PathScriptedServer):
    name = "osm-standin"

    def __init__(self) -> None:
        super().__init__()
        self.elements = load_elements()
        self.speeds, self.detour = dict(SPEEDS), dict(DETOUR)
        self.unreachable: set[tuple[float, float]] = set()
        self.arrivals: list[tuple[float, str]] = []
        self.active: Counter[str] = Counter()
        self.max_active: Counter[str] = Counter()
        self._garbled: list[list] = []
        self._remarks: list[list] = []
        self.answers: dict[str, Any] = {}   # path -> the 200 body it answers, whatever was asked

    # -- scripting -------------------------------------------------------------

    def add_place(self, osm_type: str, osm_id: int, lat: float, lon: float, **tags: str) -> dict:
        element: dict[str, Any] = {"type": osm_type, "id": osm_id}
        if osm_type == "node":
            element.update(lat=lat, lon=lon)
        else:
            element["center"] = {"lat": lat, "lon": lon}
        element["tags"] = dict(tags)
        with self.lock:
            self.elements[(osm_type, osm_id)] = element
        return element

    def garble(self, prefix: str, times: int | None = None) -> None:
        with self.lock:
            self._garbled.append([prefix, times])

    def remark(self, text: str = 'runtime error: Query timed out in "query" at line 1 after 10 seconds.',
               times: int | None = None) -> None:
        with self.lock:
            self._remarks.append([text, times])

    def count(self, prefix: str) -> int:
        with self.lock:
            return sum(n for path, n in self.calls.items() if path.startswith(prefix))

    @staticmethod
    def form(request: RecordedRequest) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(request.raw.decode()).items()}

    def reset(self) -> None:
        with self.lock:
            self.unreachable.clear()
            self.arrivals.clear()
            self.max_active.clear()
            self._garbled.clear()
            self._remarks.clear()
            self.answers.clear()
        super().reset()

    @staticmethod
    def _take(scripts: list[list], match) -> list | None:
        for script in scripts:
            if match(script) and (script[-1] is None or script[-1] > 0):
                if script[-1] is not None:
                    script[-1] -= 1
                return script
        return None

    # -- serving ---------------------------------------------------------------

    def serve(self, request: RecordedRequest, handler: LoopbackHandler) -> None:
        service = service_of(request.path)
        with self.lock:
            self.arrivals.append((time.monotonic(), request.path))
            self.active[service] += 1
            self.max_active[service] = max(self.max_active[service], self.active[service])
        self.record(request)
        try:
            status, content_type, body = self.answer(request)
        finally:
            # Before the reply goes out: the client frees its slot only after reading it.
            with self.lock:
                self.active[service] -= 1
        handler.send_body(status, content_type, body)

    def answer(self, request: RecordedRequest) -> tuple[int, str, bytes]:
        path = request.path
        if not self.waited(path):
            return 503, "text/plain", b"stopping"
        try:
            failure = self.scripted_failure(path)
            if failure:
                raise self._failure(path, *failure)
            with self.lock:
                if self._take(self._garbled, lambda s: path.startswith(s[0])):
                    return 200, "application/json; charset=utf-8", b'{"elements": [{"type": "node", "id'
                if path in self.answers:
                    return 200, "application/json; charset=utf-8", json.dumps(self.answers[path]).encode()
            if path in ("/search", "/lookup"):
                payload = self._nominatim(path, request)
            elif path == OVERPASS_PATH:
                payload = self._overpass(request)
            elif OSRM_PATH.fullmatch(path):
                payload = self._osrm(path, request.query)
            else:
                raise html_error(404, "Not Found")
        except Refusal as refusal:
            return refusal.status, refusal.content_type, refusal.body
        return 200, "application/json; charset=utf-8", json.dumps(payload, ensure_ascii=False).encode()

    def _failure(self, path: str, status: int, message: str | None) -> Refusal:
        service = service_of(path)
        if service == "overpass":
            return html_error(status, message or "The server is probably too busy to handle your request.")
        if service == "osrm":
            return osrm_error("InternalError", message or "Internal error", status)
        return nominatim_error(status, message or "Internal Server Error")

    # -- Nominatim -------------------------------------------------------------

    def _nominatim(self, path: str, request: RecordedRequest) -> list[dict]:
        agent = request.headers.get("user-agent", "")
        if not agent or agent.lower().startswith(("python-", "curl/")):
            raise html_error(403, "Access blocked. You have been blocked because you have violated the usage "
                                  "policy of OSM's Nominatim geocoding service.")
        query = {k: v[-1] for k, v in request.query.items()}
        if query.get("format") != "jsonv2":
            raise nominatim_error(400, "Parameter 'format': this stand-in speaks jsonv2 only.")
        lang = (query.get("accept-language") or "").split(",")[0].split("-")[0].strip().lower() or None
        if path == "/lookup":
            found = [self.elements[key] for key in self._osm_ids(query.get("osm_ids", ""))
                     if key in self.elements]
        else:
            found = self._search(query)
        return [self._nominatim_json(e, query, lang) for e in found]

    @staticmethod
    def _osm_ids(text: str) -> list[tuple[str, int]]:
        ids = [t.strip() for t in text.split(",") if t.strip()]
        if not ids or len(ids) > 50 or not all(re.fullmatch(r"[NWR][0-9]{1,19}", t) for t in ids):
            raise nominatim_error(400, "Parameter 'osm_ids' is required and must be a list of N/W/R ids.")
        return [(LETTERS[t[0]], int(t[1:])) for t in ids]

    def _search(self, query: dict[str, str]) -> list[dict]:
        wanted = words(query.get("q", ""))
        if not wanted:
            raise nominatim_error(400, "Nothing to search for.")
        try:
            limit = min(max(int(query.get("limit", "10")), 1), 40)
        except ValueError:
            raise nominatim_error(400, "Parameter 'limit' must be a number.") from None
        box = self._viewbox(query.get("viewbox")) if query.get("bounded") == "1" else None
        with self.lock:
            elements = list(self.elements.values())
        hits = []
        for element in elements:
            tags = element["tags"]
            if "name" not in tags:
                continue
            names = [v for k, v in tags.items() if k in ("name", "alt_name", "short_name") or k.startswith("name:")]
            have = set(words(" ".join(names))) | {fold(v) for k, v in tags.items() if k in MAIN_KEYS}
            matched = all(w in have or (i == len(wanted) - 1 and any(h.startswith(w) for h in have))
                          for i, w in enumerate(wanted))
            lat, lon = point(element)
            if matched and (box is None or (box[3] <= lat <= box[1] and box[0] <= lon <= box[2])):
                hits.append(element)
        hits.sort(key=lambda e: (-self._importance(e), e["id"]))
        return hits[:limit]

    @staticmethod
    def _viewbox(text: str | None) -> tuple[float, float, float, float]:
        try:
            x1, y1, x2, y2 = (float(v) for v in (text or "").split(","))
        except ValueError:
            raise nominatim_error(400, "Bad parameter 'viewbox'. Expected 4 coordinates.") from None
        return min(x1, x2), max(y1, y2), max(x1, x2), min(y1, y2)  # west, north, east, south

    @staticmethod
    def _importance(element: dict) -> float:
        tags = element["tags"]
        return round(0.25 + 0.3 * ("wikipedia" in tags) + 0.05 * ("website" in tags), 4)

    def _nominatim_json(self, element: dict, query: dict[str, str], lang: str | None) -> dict:
        tags = element["tags"]
        category = next((k for k in MAIN_KEYS if k in tags), "place")
        kind = tags.get(category, "yes")
        lat, lon = point(element)
        name = (lang and tags.get(f"name:{lang}")) or tags.get("name", "")
        address = {"house_number": tags.get("addr:housenumber"), "road": tags.get("addr:street"),
                   "city": tags.get("addr:city") or "København", "postcode": tags.get("addr:postcode"),
                   "country": "Danmark", "country_code": "dk"}
        address = {k: v for k, v in address.items() if v}
        parts = [name, address.get("house_number"), address.get("road"), address["city"], address.get("postcode"),
                 "Danmark"]
        out: dict[str, Any] = {
            "place_id": zlib.crc32(f"{element['type']}{element['id']}".encode()), "licence": LICENCE,
            "osm_type": element["type"], "osm_id": element["id"], "lat": f"{lat:.7f}", "lon": f"{lon:.7f}",
            "category": category, "type": kind, "place_rank": 30, "importance": self._importance(element),
            "addresstype": category, "name": name, "display_name": ", ".join(p for p in parts if p),
            "boundingbox": [f"{lat - 0.0005:.7f}", f"{lat + 0.0005:.7f}", f"{lon - 0.0008:.7f}", f"{lon + 0.0008:.7f}"],
        }
        if query.get("addressdetails") == "1":
            out["address"] = address
        if query.get("extratags") == "1":
            out["extratags"] = {k: v for k, v in tags.items() if k != category and not k.startswith("addr:")
                                and not self._is_name(k)}
        if query.get("namedetails") == "1":
            out["namedetails"] = {k: v for k, v in tags.items() if self._is_name(k)}
        return out

    @staticmethod
    def _is_name(key: str) -> bool:
        return key in ("name", "alt_name", "short_name", "old_name") or key.startswith("name:")

    # -- Overpass --------------------------------------------------------------

    def _overpass(self, request: RecordedRequest) -> dict:
        data = self.form(request).get("data") if request.method == "POST" else (request.query.get("data") or [""])[0]
        match = QUERY.fullmatch((data or "").strip())
        if match is None:
            raise html_error(400, "Error: line 1: parse error: this stand-in reads "
                                  "[out:json][timeout:N];(nwr...(around:R,LAT,LNG);...);out center tags N;")
        body = match[2].strip()
        statements = list(STATEMENT.finditer(body))
        clauses = []
        for parsed in statements:
            filters = FILTER.findall(parsed[1])
            if "".join(_render(f) for f in filters) != parsed[1]:
                raise html_error(400, f"Error: line 1: parse error: unexpected filter in {parsed[0][:80]!r}")
            clauses.append((filters, float(parsed[2]), float(parsed[3]), float(parsed[4])))
        if not statements or "".join(m[0] + ";" for m in statements) != body:
            raise html_error(400, "Error: line 1: parse error: only nwr[...](around:R,LAT,LNG); statements are read")
        with self.lock:
            remark = self._take(self._remarks, lambda s: True)
            elements = list(self.elements.values())
        base = {"version": 0.6, "generator": "Overpass API 0.7.62.1 084b4234 (stand-in)",
                "osm3s": {"timestamp_osm_base": "2026-01-01T00:00:00Z", "copyright": OVERPASS_COPYRIGHT}}
        if remark:
            return {**base, "elements": [], "remark": remark[0]}
        found = [e for e in elements if any(self._selects(e, *clause) for clause in clauses)]
        found.sort(key=lambda e: (TYPE_ORDER[e["type"]], e["id"]))
        return {**base, "elements": copy.deepcopy(found[:int(match[3])])}

    @staticmethod
    def _selects(element: dict, filters: list[tuple], radius: float, lat: float, lng: float) -> bool:
        tags = element["tags"]
        for negate, key, op, value, insensitive in filters:
            present = key in tags
            if not op:
                ok = present != bool(negate)
            elif op in ("=", "!="):
                ok = (tags.get(key) == value) != (op == "!=")
            else:
                flags = re.I if insensitive else 0
                ok = (present and re.search(value, tags[key], flags) is not None) != (op == "!~")
            if not ok:
                return False
        return haversine_m(lat, lng, *point(element)) <= radius

    # -- OSRM ------------------------------------------------------------------

    def _osrm(self, path: str, query: dict[str, list[str]]) -> dict:
        server_profile, service, _profile, coordinates = OSRM_PATH.fullmatch(path).groups()
        points = self._coordinates(coordinates)
        if service == "route":
            if len(points) != 2:
                raise osrm_error("InvalidQuery", "This stand-in routes between exactly two points.")
            leg = self._leg(points[0], points[1], server_profile)
            if leg is None:
                raise osrm_error("NoRoute", "Impossible route between points")
            meters, seconds = leg
            route = {"legs": [{"steps": [], "summary": "", "weight": seconds, "duration": seconds,
                               "distance": meters}],
                     "weight_name": "duration", "weight": seconds, "duration": seconds, "distance": meters}
            if (query.get("overview") or ["simplified"])[0] != "false":
                if (query.get("geometries") or ["polyline"])[0] != "geojson":
                    raise osrm_error("InvalidOptions", "This stand-in draws routes as GeoJSON only.")
                route["geometry"] = drawn_line(points[0], points[1])
            return {"code": "Ok", "routes": [route], "waypoints": [self._waypoint(p) for p in points]}
        if len(points) > TABLE_MAX:
            raise osrm_error("TooBig", "Too many table coordinates")
        sources = self._indices(query, "sources", len(points))
        destinations = self._indices(query, "destinations", len(points))
        annotations = set((query.get("annotations") or ["duration"])[0].split(","))
        legs = [[self._leg(points[i], points[j], server_profile) for j in destinations] for i in sources]
        answer: dict[str, Any] = {"code": "Ok", "sources": [self._waypoint(points[i]) for i in sources],
                                  "destinations": [self._waypoint(points[j]) for j in destinations]}
        if "duration" in annotations:
            answer["durations"] = [[None if leg is None else leg[1] for leg in row] for row in legs]
        if "distance" in annotations:
            answer["distances"] = [[None if leg is None else leg[0] for leg in row] for row in legs]
        return answer

    def _coordinates(self, text: str) -> list[tuple[float, float]]:
        points = []
        for k, pair in enumerate(text.split(";")):
            try:
                lon, lat = (float(v) for v in pair.split(","))
            except ValueError:
                raise osrm_error("InvalidQuery", f"Query string malformed close to position {k}") from None
            if not (-180 <= lon <= 180 and -90 <= lat <= 90):
                raise osrm_error("InvalidValue", f"Invalid coordinate value at position {k}")
            if not self._covered(lat, lon):
                raise osrm_error("NoSegment", f"Could not find a matching segment for coordinate {k}")
            points.append((lat, lon))
        if len(points) < 2:
            raise osrm_error("InvalidQuery", "At least two coordinates are needed")
        return points

    def _covered(self, lat: float, lon: float) -> bool:
        with self.lock:
            where = [point(e) for e in self.elements.values()]
        lats, lons = [p[0] for p in where], [p[1] for p in where]
        return (min(lats) - COVERAGE_MARGIN_DEG <= lat <= max(lats) + COVERAGE_MARGIN_DEG
                and min(lons) - COVERAGE_MARGIN_DEG <= lon <= max(lons) + COVERAGE_MARGIN_DEG)

    @staticmethod
    def _indices(query: dict[str, list[str]], name: str, n: int) -> list[int]:
        text = (query.get(name) or ["all"])[0]
        if text == "all":
            return list(range(n))
        try:
            indices = [int(v) for v in text.split(";")]
        except ValueError:
            raise osrm_error("InvalidQuery", f"Parameter {name} malformed") from None
        if any(not 0 <= i < n for i in indices):
            raise osrm_error("InvalidOptions", f"{name} index out of bounds")
        return indices

    def _leg(self, a: tuple[float, float], b: tuple[float, float], profile: str) -> tuple[float, float] | None:
        with self.lock:
            blocked = self.unreachable & {(round(a[0], 4), round(a[1], 4)), (round(b[0], 4), round(b[1], 4))}
        if blocked:
            return None
        meters = round(haversine_m(a[0], a[1], b[0], b[1]) * self.detour[profile], 1)
        return meters, round(meters / self.speeds[profile], 1)

    @staticmethod
    def _waypoint(p: tuple[float, float]) -> dict:
        return {"hint": "standin", "distance": 3.2, "name": "", "location": [p[1], p[0]]}


def _render(f: tuple) -> str:
    negate, key, op, value, insensitive = f
    return f'[{negate}"{key}"' + (f'{op}"{value}"{insensitive}' if op else "") + "]"


def osm_settings(settings, standin: OSMStandIn, **changes):
    """`settings` with the OSM provider chosen and every OSM URL on the stand-in."""
    values = {"places_provider_choice": "osm", "nominatim_url": standin.url,
              "overpass_url": standin.url + OVERPASS_PATH, "osrm_url": standin.url + "/routed-{profile}",
              "contact": "tests@wayline.invalid", **changes}
    return settings.with_(**values)


def drawn_line(a: tuple[float, float], b: tuple[float, float]) -> dict:
    """A route's path as OSRM draws it (GeoJSON, [lon, lat]): the stand-in
    bends it through a corner, so a test can tell it from a straight line.
    `a`, `b`: (lat, lng)."""
    corner = (a[0], b[1])
    return {"type": "LineString", "coordinates": [[p[1], p[0]] for p in (a, corner, b)]}
