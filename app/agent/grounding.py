"""Street-view grounding: explicit street-view requests, answered by the
application without a model call (seed 000, "Street view is not a model tool").

`parse(text)` recognises a message that asks for street view ("street view
of Torvehallerne", "show me Nyhavn in street view", "Nyhavn 的街景", with or
without @agent); anything else is left to the agent as usual. `ground()`
resolves the place against the trip's stops first (by name), then place
search (`svc.places.search_text`: Google or OpenStreetMap, whichever the
server uses), reads the panorama's metadata and fetches
the image (app/providers/streetview.py). The outcome is exactly one of:

- `found`: a panorama near the place; the reply carries one server-built
  street-view card (the only `data-spec` the model can never create);
- `empty`: the place is known, but Google has no imagery near it;
- `place_not_found`: neither a stop of the trip nor place search knows it;
- `invalid_request`: the request names no usable place (nothing, or too long),
  or Google refused the request as invalid;
- `service_unavailable`: no place search or street-view provider is
  configured (street view needs GOOGLE_MAPS_API_KEY), or a provider failed.

The reply's parts (`reply_parts`): `data-agent-grounding {kind, outcome,
query, place}`, then fixed text in the request's language, then for a
failure `data-agent-status {outcome, tone, message}`, for `found` the card.
No usage row, no model call. Grounding and status parts are server-owned:
never taken from a client, never given to the model (transcript.py).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

from ..errors import AppError, Invalid, Unavailable
from ..ids import new_id
from .deps import AgentDeps
from ..providers.streetview import heading
from ..trips.model import Trip
from .cards import spec_part, street_view_card

log = logging.getLogger("wayline.agent")

Outcome = Literal["found", "empty", "place_not_found", "invalid_request", "service_unavailable"]
OUTCOMES: tuple[Outcome, ...] = ("found", "empty", "place_not_found", "invalid_request", "service_unavailable")
MAX_PLACE = 120

_MENTION = re.compile(r"(?<![\w@])@agent\b[\s,:，：]*", re.IGNORECASE)
_SV = r"street[\s-]?view"
_POLITE = r"(?:(?:please|pls|hey|hi|can|could|would|will)\s+)*(?:you\s+)?"
_END = r"\s*(?:please|pls|thanks|thank\s+you)?\s*[?.!。？！]*\s*$"
# English first (required), then a few others. Each pattern is the whole message.
_PATTERNS = [
    ("en", re.compile(rf"^{_POLITE}(?:(?:show|open|get|give|let)\s+(?:me|us)?\s*(?:see\s+)?|see\s+|view\s+)?"
                      rf"(?:the\s+|a\s+)?{_SV}(?:\s+(?:of|for|at|on|near)\s+|\s*[:：]\s*)(?P<place>.*?){_END}",
                      re.IGNORECASE)),
    ("en", re.compile(rf"^{_POLITE}(?:show|open|get|see|view|look\s+at)\s+(?:me\s+|us\s+)?(?P<place>.+?)\s+"
                      rf"(?:in|on|with|via)\s+(?:the\s+)?{_SV}{_END}", re.IGNORECASE)),
    # "street view", or "street view of" with the place left out: answered by asking which place.
    ("en", re.compile(rf"^{_POLITE}(?:show\s+(?:me|us)\s+)?(?:the\s+|a\s+)?{_SV}(?:\s+(?:of|for|at|on|near))?"
                      rf"(?P<place>)\s*[:：]?{_END}", re.IGNORECASE)),
    ("zh", re.compile(r"^(?:请|麻烦)?(?:给我|帮我)?(?:看看|看一下|显示|打开)?"
                      r"(?P<place>.*?)的?街景(?:图)?(?:吧|呢)?[?。？！!]*$")),
    ("zh", re.compile(r"^(?:请|麻烦)?(?:给我|帮我)?(?:看看|看一下|显示|打开)?街景[\s:：]*(?P<place>.*?)[?。？！!]*$")),
    ("de", re.compile(rf"^(?:zeig(?:e)?\s+(?:mir\s+)?)?(?:die\s+)?(?:street\s?view|straßenansicht)\s+(?:von|vom|für)"
                      rf"(?:\s+(?P<place>.+?))?{_END}", re.IGNORECASE)),
]

TEXTS = {
    "en": {
        "found": "Street view of {place}.",
        "empty": "There is no street view imagery near {place}.",
        "place_not_found": "I could not find “{query}” among the trip's stops or in place search.",
        "invalid_request": "Tell me which place to show, for example “street view of Nyhavn”.",
        "service_unavailable": "Street view is unavailable right now. Please try again later.",
    },
    "zh": {
        "found": "{place}的街景。",
        "empty": "{place}附近没有街景图像。",
        "place_not_found": "在行程的地点和地点搜索中都没有找到“{query}”。",
        "invalid_request": "请告诉我要看哪里的街景，例如“Nyhavn 的街景”。",
        "service_unavailable": "街景暂时不可用，请稍后再试。",
    },
    "de": {
        "found": "Street View von {place}.",
        "empty": "In der Nähe von {place} gibt es keine Street-View-Bilder.",
        "place_not_found": "„{query}“ ist weder ein Halt dieser Reise noch in der Ortssuche zu finden.",
        "invalid_request": "Welcher Ort soll gezeigt werden? Zum Beispiel „Street View von Nyhavn“.",
        "service_unavailable": "Street View ist gerade nicht verfügbar. Bitte später erneut versuchen.",
    },
}


@dataclass(frozen=True)
class Request:
    """A street-view request: the place as written (may be empty) and the reply language."""

    place: str
    language: str = "en"


@dataclass
class Grounding:
    outcome: Outcome
    query: str
    language: str = "en"
    place: dict | None = None            # {name, source: stop|search, stopId?, placeId?, lat, lng}
    card: dict | None = field(default=None, repr=False)   # the street-view card (found only)

    @property
    def text(self) -> str:
        name = (self.place or {}).get("name") or self.query
        return TEXTS[self.language][self.outcome].format(place=name, query=self.query[:MAX_PLACE])


def parse(text: str) -> Request | None:
    """The request when the whole message asks for street view; None otherwise."""
    plain = " ".join(_MENTION.sub(" ", text or "").split())
    if not plain or len(plain) > 400:
        return None
    for language, pattern in _PATTERNS:
        match = pattern.match(plain)
        if match:
            place = (match.group("place") or "").strip(" \"'“”‘’「」«»,.，。")
            place = re.sub(r"^(?:the\s+)(?=\S)", "", place, flags=re.IGNORECASE) if language == "en" else place
            return Request(place, language)
    return None


# -- resolving the place ------------------------------------------------------------


def _fold(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w]+", " ", plain).split())


def match_stop(trip: Trip, query: str):
    """The trip's stop with coordinates the query names: an exact name first,
    then a name containing the query as whole words (or contained in it so):
    "Bar" never names "Barcelona Cathedral"."""
    q = _fold(query)
    if not q:
        return None
    named = [(s, _fold(s.name)) for d in trip.days for s in d.stops if s.lat is not None and s.lng is not None]
    exact = next((s for s, name in named if name == q), None)
    if exact is not None or len(q) < 3:
        return exact
    words = f" {q} "
    return next((s for s, name in named
                 if words in f" {name} " or (len(name) >= 3 and f" {name} " in words)), None)


async def _resolve(svc: AgentDeps, trip: Trip, query: str) -> dict | None:
    """The place as {name, source, stopId|placeId, lat, lng}; None when unknown.
    Raises Unavailable when place search is needed but down or not configured."""
    stop = match_stop(trip, query)
    if stop is not None:
        return {"name": stop.name, "source": "stop", "stopId": stop.id, "lat": stop.lat, "lng": stop.lng}
    if svc.places is None:
        raise _unavailable()
    found = await svc.places.search_text(query, lat=trip.dest_lat, lng=trip.dest_lng, max_results=1)
    place = next((p for p in found if p.get("lat") is not None and p.get("lng") is not None), None)
    if place is None:
        return None
    return {"name": (place.get("name") or query)[:MAX_PLACE], "source": "search", "placeId": place.get("placeId"),
            "lat": place["lat"], "lng": place["lng"]}


def _unavailable() -> AppError:
    return Unavailable("Street view is unavailable right now", code="service_unavailable")


async def ground(svc: AgentDeps, trip: Trip, request: Request) -> Grounding:
    """Resolve and fetch; never raises for the member's input or a provider's trouble."""
    query = request.place
    result = Grounding("invalid_request", query, request.language)
    if not query or len(query) > MAX_PLACE:
        return result
    try:
        if svc.street_view is None:   # before a place search that could not be used
            raise _unavailable()
        place = await _resolve(svc, trip, query)
        if place is None:
            result.outcome = "place_not_found"
            return result
        result.place = place
        pano = await svc.street_view.metadata(place["lat"], place["lng"])
        if pano is None:
            result.outcome = "empty"
            return result
        camera = heading(pano.lat, pano.lng, place["lat"], place["lng"])
        url = await svc.street_view.ground_image(trip.id, pano, camera)
        if url is None:
            result.outcome = "empty"
            return result
        result.card = street_view_card(place["name"], url, trip=trip, copyright=pano.copyright, captured=pano.date)
        result.outcome = "found"
    except Invalid:
        result.outcome = "invalid_request"
    except AppError:
        result.outcome = "service_unavailable"
    return result


# -- the reply --------------------------------------------------------------------------


def reply_parts(grounding: Grounding) -> list[dict]:
    """The assistant message's parts, in order (see the module doc)."""
    place = None
    if grounding.place is not None:
        place = {k: v for k, v in grounding.place.items() if v is not None}
    parts: list[dict] = [
        {"type": "data-agent-grounding", "id": "grd_" + new_id(),
         "data": {"kind": "street_view", "outcome": grounding.outcome, "query": grounding.query[:MAX_PLACE],
                  "place": place}},
        {"type": "text", "text": grounding.text},
    ]
    if grounding.outcome != "found":
        tone = "error" if grounding.outcome == "service_unavailable" else "warning"
        parts.append({"type": "data-agent-status", "id": "sts_" + new_id(),
                      "data": {"outcome": grounding.outcome, "tone": tone, "message": grounding.text}})
    elif grounding.card is not None:
        parts.append(spec_part(grounding.card, "card_" + new_id()))
    return parts


async def answer(svc: AgentDeps, trip_id: str, request: Request) -> list[dict]:
    """The assistant message's parts for a street-view request on the trip
    (the group chat's reply and the agent chat's turn both use it)."""
    result = await ground(svc, await svc.trips.trip(trip_id), request)
    log.info("street view in trip %s: %s", trip_id, result.outcome)
    return reply_parts(result)
