"""Generative UI cards: the catalog, the sanitizer, and the `data-spec` part.

A card is a json-render flat spec: `{root, elements: {key: {type, props,
children: [keys]}}}`. The catalog below is the whole vocabulary, defined once
here and mirrored by one renderer in the page (public/panels/cards.js). Every
spec, whoever produced it, goes through `sanitize_spec` before it is streamed,
stored or reused as the base of a refinement; what the catalog does not allow
is dropped, never rendered:

- unknown component types (with their subtree), and the server-only
  `StreetViewImage` unless the server itself builds the card;
- any element key besides `type`, `props`, `children` (json-render's `on`
  handlers, `visible` conditions, `repeat`, `watch`, ...), and every top-level
  key besides `root` and `elements` (`state`): cards have no state, no
  expressions and no automatic behaviour;
- props that do not validate (extra keys such as `href`, `$state` bindings,
  over-long strings, lists over their cap): the element and its subtree;
- ids that are not this trip's (a day or stop reference, a focus action, a
  street-view image of another trip);
- cycles, children that name a missing key, a second parent, depth past
  MAX_DEPTH, elements not reachable from the root.

No prop is a URL except the server-only image path (checked against this
trip's street-view route), so `http:`, `javascript:` or `data:` in a string is
text: the page sets every string with `textContent`, never as HTML or a link.
An ActionButton can only ask the page to send a follow-up message or to focus
a day or stop of this trip, and only when a member presses it.

Bounds: a spec with more than MAX_ELEMENTS elements or MAX_INPUT_BYTES of JSON
is refused whole (nothing of a 10,000-element spec is kept); a cleaned spec
over MAX_SPEC_BYTES is refused too. Pure functions, no I/O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..trips.model import Trip
from ..fields import CurrencyCode
from ..trips.ops import MINOR_UNITS, Kind

MAX_ELEMENTS = 60           # elements in one spec (counted before cleaning)
MAX_DEPTH = 6               # the root is depth 1
MAX_INPUT_BYTES = 32 * 1024  # the spec as given (model nulls and junk included)
MAX_SPEC_BYTES = 16 * 1024   # the cleaned spec, as streamed and stored

KEY = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
ELEMENT_KEYS = frozenset({"type", "props", "children"})


Label = Annotated[str, Field(min_length=1, max_length=40, description="at most 40 characters")]
Title = Annotated[str, Field(min_length=1, max_length=80, description="at most 80 characters")]
Line = Annotated[str, Field(min_length=1, max_length=160, description="at most 160 characters")]
Note = Annotated[str, Field(min_length=1, max_length=300, description="at most 300 characters")]
RefId = Annotated[str, Field(min_length=1, max_length=64, description="an id from the trip context")]
Time = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="HH:MM")]
IsoDate = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD")]


class Props(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


# -- the catalog ------------------------------------------------------------------


class PlanDay(Props):
    label: Label = Field(description="e.g. 'Day 1 · Sat 12 Dec'; at most 40 characters")
    title: Title
    summary: Line | None = None


class TripPlanCardProps(Props):
    title: Title
    subtitle: Line | None = None
    days: list[PlanDay] = Field(default_factory=list, max_length=14, description="at most 14 day rows")


class TextProps(Props):
    text: Annotated[str, Field(min_length=1, max_length=1000,
                               description="plain text, at most 1000 characters; no Markdown")]
    variant: Literal["body", "muted", "heading"] = "body"


class BadgeProps(Props):
    label: Label
    tone: Literal["neutral", "info", "success", "warning", "danger"] = "neutral"


class AlertProps(Props):
    tone: Literal["info", "warning", "danger"] = "info"
    title: Title | None = None
    text: Annotated[str, Field(min_length=1, max_length=400, description="at most 400 characters")]


class DaySummaryProps(Props):
    dayId: RefId
    date: IsoDate | None = Field(default=None, description="the day's date; must match the trip")
    title: Title
    stops: list[Line] = Field(default_factory=list, max_length=8,
                              description="at most 8 short lines, e.g. '10:00 Castelo'")


class StopSummaryProps(Props):
    stopId: RefId
    name: Annotated[str, Field(min_length=1, max_length=120, description="at most 120 characters")]
    time: Time | None = None
    kind: Kind | None = None
    note: Note | None = None


class ComparisonOption(Props):
    title: Title
    points: list[Line] = Field(default_factory=list, max_length=6, description="at most 6 short points")
    price: Label | None = Field(default=None, description="price as text, e.g. '€€' or 'about €25'")


class ComparisonProps(Props):
    title: Title | None = None
    options: list[ComparisonOption] = Field(min_length=2, max_length=4, description="2 to 4 options")


class BudgetLine(Props):
    label: Title
    amountMinor: int = Field(ge=0, le=100_000_000, description=MINOR_UNITS)


class BudgetEstimateProps(Props):
    title: Title | None = None
    currency: CurrencyCode
    lines: list[BudgetLine] = Field(min_length=1, max_length=12, description="1 to 12 lines")
    totalMinor: int = Field(ge=0, description="the sum of the lines' amountMinor")
    note: Note | None = None

    @model_validator(mode="after")
    def _total_is_the_sum(self) -> BudgetEstimateProps:
        if self.totalMinor != sum(line.amountMinor for line in self.lines):
            raise ValueError("totalMinor must be the sum of the lines")
        return self


class FollowUpAction(Props):
    kind: Literal["followUp"]
    text: Annotated[str, Field(min_length=1, max_length=500,
                               description="the message sent to the agent for the member; at most 500 characters")]


class FocusAction(Props):
    kind: Literal["focus"]
    dayId: RefId
    stopId: RefId | None = Field(default=None, description="a stop of that day; null: the day itself")


class ActionButtonProps(Props):
    label: Label
    action: FollowUpAction | FocusAction = Field(discriminator="kind")
    variant: Literal["primary", "secondary"] = "secondary"


# The image route's path under one trip: one name segment (no dots first, so no
# `..`) and an optional plain query. The page checks the same shape (cards.js).
STREET_VIEW_TAIL = r"/street-view/[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}(\?[A-Za-z0-9._~=&,%-]{1,300})?"


class StreetViewImageProps(Props):
    imageUrl: str = Field(max_length=600, description="same-origin /api/trips/<tripId>/street-view/... path")
    placeName: Annotated[str, Field(min_length=1, max_length=120)]
    copyright: Annotated[str, Field(min_length=1, max_length=120)] = "© Google"
    date: Annotated[str, Field(min_length=1, max_length=20)] | None = None


@dataclass(frozen=True)
class Component:
    props: type[Props]
    description: str
    children: bool = False       # may hold child elements
    server_only: bool = False    # only the server may create it (never from the model)


CATALOG: dict[str, Component] = {
    "TripPlanCard": Component(TripPlanCardProps, "A plan overview: a title and a few day rows; may hold children.",
                              children=True),
    "Text": Component(TextProps, "A paragraph of plain text, or a small heading."),
    "Badge": Component(BadgeProps, "A short label with a tone."),
    "Alert": Component(AlertProps, "A notice: info, warning or danger."),
    "DaySummary": Component(DaySummaryProps, "One day of this trip (dayId from the context) with a few stop lines; "
                                             "may hold children.", children=True),
    "StopSummary": Component(StopSummaryProps, "One stop of this trip (stopId from the context); may hold children.",
                             children=True),
    "Comparison": Component(ComparisonProps, "2-4 options side by side; may hold children (e.g. buttons).",
                            children=True),
    "BudgetEstimate": Component(BudgetEstimateProps, "Cost lines in minor units of one currency and their total; "
                                                     "may hold children.", children=True),
    "ActionButton": Component(ActionButtonProps, "A button a member may press: send a follow-up message to you, "
                                                 "or focus a day or stop of this trip. Nothing else."),
    "StreetViewImage": Component(StreetViewImageProps, "Street-view image built by the server.", server_only=True),
}

MODEL_COMPONENTS = tuple(name for name, c in CATALOG.items() if not c.server_only)


# -- the sanitizer ----------------------------------------------------------------


@dataclass
class Sanitized:
    """A cleaned spec (None when nothing renderable is left) and what was dropped, in plain words."""

    spec: dict | None
    dropped: list[str] = field(default_factory=list)

    def for_model(self) -> dict:
        """What the model is told about its card: shown or not, and why parts were dropped."""
        out: dict[str, Any] = {"shown": self.spec is not None}
        if self.spec is not None:
            out["elements"] = len(self.spec["elements"])
        if self.dropped:
            out["dropped"] = self.dropped[:10]
        return out


def sanitize_spec(raw: Any, *, trip: Trip | None, allow_server_only: bool = False) -> dict | None:
    """The cleaned flat spec, or None when nothing renderable is left.

    `trip` is the trip the card belongs to: day and stop references, focus
    actions and street-view images must name it (with no trip they are
    dropped). `allow_server_only` is for cards the server builds itself."""
    return clean_spec(raw, trip=trip, allow_server_only=allow_server_only).spec


def clean_spec(raw: Any, *, trip: Trip | None, allow_server_only: bool = False) -> Sanitized:
    """`sanitize_spec` with the reasons for what it dropped."""
    if not isinstance(raw, dict) or not isinstance(raw.get("root"), str) or not isinstance(raw.get("elements"), dict):
        return Sanitized(None, ["a card needs a root key and an elements map"])
    elements: dict = raw["elements"]
    if len(elements) > MAX_ELEMENTS:
        return Sanitized(None, [f"the card has {len(elements)} elements; at most {MAX_ELEMENTS} are allowed"])
    size = _json_size(raw)
    if size is None or size > MAX_INPUT_BYTES:
        return Sanitized(None, [f"the card is larger than {MAX_INPUT_BYTES // 1024} KiB"])
    walk = _Walk(elements, trip, allow_server_only)
    extra = sorted(k for k in raw if k not in ("root", "elements"))
    if extra:
        walk.dropped.append(f"top-level {', '.join(map(str, extra))} (cards have no state or expressions)")
    if not walk.visit(raw["root"], depth=1, ancestors=()):
        return Sanitized(None, walk.dropped + ["the root element is not valid, so nothing is shown"])
    unreached = [k for k in elements if k not in walk.seen]
    if unreached:
        walk.dropped.append(f"not shown (not reachable from the root, or inside a dropped element): "
                            f"{', '.join(map(str, unreached[:5]))}")
    spec = {"root": raw["root"], "elements": walk.out}
    if (_json_size(spec) or 0) > MAX_SPEC_BYTES:
        return Sanitized(None, walk.dropped + [f"the cleaned card is larger than {MAX_SPEC_BYTES // 1024} KiB"])
    return Sanitized(spec, walk.dropped)


def _json_size(value: Any) -> int | None:
    try:
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    except (TypeError, ValueError, RecursionError):
        return None


class _Walk:
    """Depth-first from the root; each element is checked before its children."""

    def __init__(self, elements: dict, trip: Trip | None, allow_server_only: bool) -> None:
        self.elements, self.trip, self.allow_server_only = elements, trip, allow_server_only
        self.out: dict[str, dict] = {}
        self.seen: set[str] = set()   # every key reached, kept or not (a second parent is refused)
        self.dropped: list[str] = []

    def visit(self, key: Any, *, depth: int, ancestors: tuple[str, ...]) -> bool:
        if not isinstance(key, str) or not KEY.match(key):
            self.dropped.append("a child key that is not a short [A-Za-z0-9_-] name")
            return False
        if key in ancestors:
            self.dropped.append(f"{key}: a cycle (an element inside itself)")
            return False
        if key in self.seen:
            self.dropped.append(f"{key}: a second parent (an element appears once)")
            return False
        if key not in self.elements:
            self.dropped.append(f"{key}: no such element")
            return False
        self.seen.add(key)
        if depth > MAX_DEPTH:
            self.dropped.append(f"{key}: nested deeper than {MAX_DEPTH} levels")
            return False
        checked = self._element(key, self.elements[key])
        if checked is None:
            return False
        element, children = checked
        self.out[key] = element
        for child in children:
            if self.visit(child, depth=depth + 1, ancestors=(*ancestors, key)):
                element["children"].append(child)
        return True

    def _element(self, key: str, raw: Any) -> tuple[dict, list] | None:
        """The element's clean {type, props, children: []} and the child keys
        to visit, or None (with the reason noted)."""
        if not isinstance(raw, dict):
            self.dropped.append(f"{key}: not an element object")
            return None
        unknown = sorted(k for k in raw if k not in ELEMENT_KEYS)
        if unknown:
            self.dropped.append(f"{key}: uses {', '.join(map(str, unknown))}, which cards do not support")
            return None
        kind = raw.get("type")
        component = CATALOG.get(kind) if isinstance(kind, str) else None
        if component is None:
            self.dropped.append(f"{key}: {str(kind)[:40]!r} is not a card component")
            return None
        if component.server_only and not self.allow_server_only:
            self.dropped.append(f"{key}: {kind} can only be created by the server")
            return None
        children = raw.get("children", [])
        if not isinstance(children, list):
            self.dropped.append(f"{key}: children must be a list of keys")
            return None
        try:
            props = component.props.model_validate(raw.get("props") or {})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "props"
            self.dropped.append(f"{key}: {kind} {where}: {first['msg']}")
            return None
        problem = _reference_problem(props, self.trip)
        if problem:
            self.dropped.append(f"{key}: {problem}")
            return None
        if children and not component.children:
            self.dropped.append(f"{key}: {kind} cannot hold children")
            children = []
        return {"type": kind, "props": props.model_dump(mode="json", exclude_none=True), "children": []}, children


def _reference_problem(props: Props, trip: Trip | None) -> str | None:
    """Why an element's ids do not name this trip's days, stops or images (None: they do, or it has none)."""
    if isinstance(props, DaySummaryProps):
        day = _day(trip, props.dayId)
        if trip is None or day is None:
            return "the day is not one of this trip's days"
        if props.date is not None and props.date != trip.day_date(day):
            return f"the day's date is {trip.day_date(day)}, not {props.date}"
    elif isinstance(props, StopSummaryProps):
        if _stop_day(trip, props.stopId) is None:
            return "the stop is not one of this trip's stops"
    elif isinstance(props, ActionButtonProps) and isinstance(props.action, FocusAction):
        if _day(trip, props.action.dayId) is None:
            return "the button focuses a day that is not one of this trip's days"
        if props.action.stopId is not None and _stop_day(trip, props.action.stopId) != props.action.dayId:
            return "the button focuses a stop that is not on that day"
    elif isinstance(props, StreetViewImageProps):
        if trip is None or not re.fullmatch(f"/api/trips/{re.escape(trip.id)}{STREET_VIEW_TAIL}", props.imageUrl):
            return "the image is not this trip's street-view image"
    return None


def _day(trip: Trip | None, day_id: str):
    return next((d for d in trip.days if d.id == day_id), None) if trip is not None else None


def _stop_day(trip: Trip | None, stop_id: str) -> str | None:
    if trip is None:
        return None
    return next((d.id for d in trip.days for s in d.stops if s.id == stop_id), None)


# -- parts and server-built cards ---------------------------------------------------


def spec_data(spec: dict) -> dict:
    """The `data` of a data-spec part: json-render's flat payload, so its AI SDK helpers read it too."""
    return {"type": "flat", "spec": spec}


def spec_part(spec: dict, spec_id: str) -> dict:
    """The persisted UI message part (AI SDK `data-<name>` part shape)."""
    return {"type": "data-spec", "id": spec_id, "data": spec_data(spec)}


def spec_of_part(part: Any) -> dict | None:
    """The flat spec a stored data-spec part carries (unchecked: sanitize it before reuse)."""
    if not isinstance(part, dict) or part.get("type") != "data-spec" or not isinstance(part.get("data"), dict):
        return None
    data = part["data"]
    return data.get("spec") if data.get("type") == "flat" and isinstance(data.get("spec"), dict) else None


def street_view_card(place_name: str, image_url: str, *, trip: Trip, copyright: str = "© Google",
                     captured: str | None = None) -> dict:
    """The one card only the server creates: a street-view image of this trip's
    same-origin image route. Raises ValueError when the inputs are not valid
    (a bug in the caller, not model output)."""
    props = {"imageUrl": image_url, "placeName": place_name[:120], "copyright": copyright[:120],
             "date": captured[:20] if captured else None}
    raw = {"root": "street-view", "elements": {"street-view": {"type": "StreetViewImage", "props": props,
                                                               "children": []}}}
    result = clean_spec(raw, trip=trip, allow_server_only=True)
    if result.spec is None:
        raise ValueError("street-view card: " + "; ".join(result.dropped))
    return result.spec
