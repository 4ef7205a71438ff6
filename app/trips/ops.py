"""TRIP_OPS: the one table of every content mutation.

Each entry names an op, its pydantic argument model, the role it needs and
the function that applies it to the Trip aggregate (returning a one-line
summary). HTTP routes, agent tools, proactive patches and plan drafts all go
through this table; agent tool names, descriptions and JSON schemas are
generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, ClassVar, Literal
from collections.abc import Callable

from pydantic import (BaseModel, ConfigDict, Field, ValidationError, ValidatorFunctionWrapHandler, WrapValidator,
                      field_validator)

from ..ids import new_id
from ..meals import MEALS, Meal
from ..errors import Invalid, NotFound, plain_words, validation_error
from ..fields import HHMM, LAST_DATE, CurrencyCode, ServiceTime, TimeZone, TripDate, last_day_fits
from ..money import format_money
from ..preferences import Mode, Pace, TripPreferences
from ..markdown_links import check_links
from ..quotas import check_days, quota_size
from ..settings import MAX_DAYS_CEILING
from .model import Day, Expense, Stop, Trip
from .schedule import clock_label, to_minutes
from .words import KIND_WORDS, date_words, day_label, duration_words, plural, quote, sentence, stop_label

Kind = Literal["stay", "sight", "food", "activity", "transit", "other"]
Title = Annotated[str, Field(min_length=1, max_length=120, pattern=r"\S")]   # names say something: not blank
Note = Annotated[str, Field(max_length=4000)]
Id = Annotated[str, Field(min_length=1, max_length=64)]
MAX_DAYS = MAX_DAYS_CEILING   # the schema's bound; the quota (WAYLINE_DAYS_PER_TRIP) is OpContext.max_days
MAX_STOPS_PER_DAY = 40
MAX_SHARE = 1_000_000     # one member's weight in a shares split
MAX_AMOUNT_MINOR = 10**12
# Every read of the trip carries all its expenses and their balances: a bound
# like the days' (413, as app/quotas.py refuses a trip's size), far above a
# group's real count.
MAX_EXPENSES = 1000
MINOR_UNITS = "in the currency's minor units, as many as ISO 4217 gives it: 1250 is 12.50 EUR, 1250 JPY, 1.250 KWD"


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)
    # Fields that an explicit null clears (others: null is refused or means
    # "not given"). Agent tools offer exactly these in their `clear` list.
    clearable: ClassVar[tuple[str, ...]] = ()

    def given(self) -> dict[str, Any]:
        """Only the fields the caller sent, so `null` can mean 'clear'."""
        return {name: getattr(self, name) for name in self.model_fields_set}


class Destination(Args):
    name: Title
    lat: float = Field(ge=-90, le=90)
    lng: float = Field(ge=-180, le=180)


class UpdateTrip(Args):
    title: Title | None = None
    destination: Destination | None = None
    startDate: TripDate | None = Field(default=None, strict=False)
    timezone: TimeZone | None = None
    currency: CurrencyCode | None = None


class AddDay(Args):
    title: str = Field(default="", max_length=120)
    note: Note = ""


class UpdateDay(Args):
    clearable = ("startTime",)
    dayId: Id
    title: str | None = Field(default=None, max_length=120)
    note: Note | None = None
    startTime: HHMM | None = None


class ReorderDays(Args):
    dayIds: list[Id] = Field(min_length=1, max_length=MAX_DAYS)


class DeleteDay(Args):
    dayId: Id


class StopFields(Args):
    kind: Kind = "sight"
    name: Title
    placeId: str | None = Field(default=None, max_length=300)
    lat: float | None = Field(default=None, ge=-90, le=90)
    lng: float | None = Field(default=None, ge=-180, le=180)
    address: str | None = Field(default=None, max_length=300)
    setTime: ServiceTime | None = None
    durationMin: int = Field(default=60, ge=5, le=24 * 60)
    meal: Meal | None = None
    note: Note = ""


class InsertStop(StopFields):
    dayId: Id
    afterStopId: Id | None = None
    takeExpensesOf: Id | None = None   # a stop this one replaces: its expenses are for this one now


class UpdateStop(Args):
    clearable = ("placeId", "lat", "lng", "address", "setTime", "meal")
    stopId: Id
    kind: Kind | None = None
    name: Title | None = None
    placeId: str | None = Field(default=None, max_length=300)
    lat: float | None = Field(default=None, ge=-90, le=90)
    lng: float | None = Field(default=None, ge=-180, le=180)
    address: str | None = Field(default=None, max_length=300)
    setTime: ServiceTime | None = None
    durationMin: int | None = Field(default=None, ge=5, le=24 * 60)
    meal: Meal | None = None
    note: Note | None = None


class MoveStop(Args):
    stopId: Id
    toDayId: Id
    position: int = Field(ge=0, le=MAX_STOPS_PER_DAY)


class SwapStops(Args):
    stopId: Id
    otherStopId: Id


class DeleteStop(Args):
    stopId: Id


class EqualSplit(Args):
    kind: Literal["equal"] = "equal"
    members: list[Id] | None = Field(default=None, max_length=50)


class SharesSplit(Args):
    kind: Literal["shares"]
    shares: dict[Id, Annotated[int, Field(ge=0, le=MAX_SHARE)]] = Field(min_length=1, max_length=50)

    @field_validator("shares")
    @classmethod
    def _positive(cls, shares: dict[str, int]) -> dict[str, int]:
        if any(n < 0 for n in shares.values()) or sum(shares.values()) <= 0:
            raise ValueError("must be whole numbers, 0 or more, at least one above 0")
        return shares


def _split_in_words(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A split without `kind` is what its fields say (`shares`: by shares,
    else equal, EqualSplit's default): the tag alone refused both. A bad split
    is refused in words ("split: each share must be at least 0"); pydantic's
    message was its path through the union's tag and a member's id
    ("split.shares.shares.4229fdd6ba327b41: must be at least 0"). Raised as
    our 422 (pydantic passes it through), since a ValueError's field would
    be `split` alone."""
    if isinstance(value, dict) and "kind" not in value:
        value = {**value, "kind": "shares" if "shares" in value else "equal"}
    try:
        return handler(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = list(error.get("loc", ()))
        if loc[:1] in (["equal"], ["shares"]) and len(loc) > 1 and loc[1] != "[key]":
            loc = loc[1:]   # the tag pydantic puts before the chosen kind's fields
        field, rest = (str(loc[0]), loc[1:]) if loc else ("", [])
        if field in ("shares", "members") and rest:   # one entry: "each share must be at least 0"
            subject = "each member id" if field == "members" or "[key]" in rest else "each share"
        else:
            subject = field
        # The message in words; `field` still points a client at the input (split.shares.<member id>).
        path = ".".join(["split", *(str(p) for p in loc if p != "[key]")])
        raise Invalid("split: " + " ".join(filter(None, [subject, plain_words(error)])), field=path) from None


Split = Annotated[EqualSplit | SharesSplit, Field(discriminator="kind"), WrapValidator(_split_in_words)]


class AddExpense(Args):
    title: Title
    amountMinor: int = Field(gt=0, le=MAX_AMOUNT_MINOR, description=MINOR_UNITS)
    currency: CurrencyCode
    paidBy: Id
    split: Split | None = None
    dayId: Id | None = None
    stopId: Id | None = None


class UpdateExpense(Args):
    clearable = ("split", "dayId", "stopId")
    expenseId: Id
    title: Title | None = None
    amountMinor: int | None = Field(default=None, gt=0, le=MAX_AMOUNT_MINOR, description=MINOR_UNITS)
    currency: CurrencyCode | None = None
    paidBy: Id | None = None
    split: Split | None = None
    dayId: Id | None = None
    stopId: Id | None = None


class DeleteExpense(Args):
    expenseId: Id


class SetTripPreferences(Args):
    transport: Mode | None = None
    avoidModes: list[Mode] | None = None
    longestWalkM: int | None = Field(default=None, ge=0, le=50_000)
    fewerTransfers: bool | None = None
    pace: Pace | None = None
    interests: list[Annotated[str, Field(max_length=40)]] | None = Field(default=None, max_length=20)
    budget: Literal["low", "moderate", "high"] | None = None


# -- apply functions ----------------------------------------------------------


@dataclass(frozen=True)
class OpRules:
    """The deployment's values the ops check against (app/lifecycle.py fills
    them from the settings): the days-per-trip quota, and where the page is
    served (WAYLINE_PUBLIC_URL) for links in notes."""
    max_days: int = MAX_DAYS
    origin: str | None = None


@dataclass
class OpContext:
    actor_id: str
    now: str
    rules: OpRules = OpRules()


# Summaries are sentences for people (toasts, the group's timeline): names and
# times, never field names (their words: words.py).


def update_trip(trip: Trip, a: UpdateTrip, ctx: OpContext) -> str:
    changes = a.given()
    for key in ("title", "timezone", "currency"):
        if changes.get(key) is not None:
            setattr(trip, key, changes[key])
    if changes.get("startDate") is not None:
        if not last_day_fits(changes["startDate"], len(trip.days)):
            raise Invalid(f"startDate: the trip's last day would fall after {LAST_DATE.isoformat()}", field="startDate")
        trip.start_date = changes["startDate"].isoformat()
    if a.destination is not None:
        trip.dest_name, trip.dest_lat, trip.dest_lng = a.destination.name, a.destination.lat, a.destination.lng
    phrases = []
    if changes.get("title") is not None:
        phrases.append((f"renamed the trip to {quote(trip.title)}", f"renamed it to {quote(trip.title)}"))
    if changes.get("startDate") is not None:
        when = date_words(changes["startDate"])
        phrases.append((f"moved the trip to start on {when}", f"moved it to start on {when}"))
    if a.destination is not None:
        phrases.append((f"set the trip's destination to {a.destination.name}",
                        f"set its destination to {a.destination.name}"))
    if changes.get("timezone") is not None:
        phrases.append((f"set the trip's time zone to {a.timezone}", f"set its time zone to {a.timezone}"))
    if changes.get("currency") is not None:
        phrases.append((f"set the trip's currency to {a.currency}", f"set its currency to {a.currency}"))
    return sentence(phrases, "No changes to the trip")


def add_day(trip: Trip, a: AddDay, ctx: OpContext) -> str:
    check_days(len(trip.days) + 1, ctx.rules.max_days)
    check_links(a.note, trip.id, "note", ctx.rules.origin)
    if not last_day_fits(date.fromisoformat(trip.start_date), len(trip.days) + 1):
        raise Invalid(f"days: a new day would fall after {LAST_DATE.isoformat()}", field="days")
    day = Day(id=new_id(), position=len(trip.days), title=a.title, note=a.note)
    trip.days.append(day)
    return f"Added {day_label(trip, day)}"


def update_day(trip: Trip, a: UpdateDay, ctx: OpContext) -> str:
    day = trip.day(a.dayId)
    label = day_label(trip, day)
    changes = a.given()
    phrases = []
    if "title" in changes:
        day.title = changes["title"] or ""
        phrases.append((f"renamed {label} to {quote(day.title)}", f"renamed it to {quote(day.title)}") if day.title
                       else (f"cleared the title of {label}", "cleared its title"))
    if "note" in changes:
        check_links(changes["note"], trip.id, "note", ctx.rules.origin)
        day.note = changes["note"] or ""
        phrases.append((f"edited the note of {label}", "edited its note"))
    if "startTime" in changes:
        day.start_time = changes["startTime"]
        phrases.append((f"set {label} to start at {day.start_time}", f"set it to start at {day.start_time}")
                       if day.start_time else (f"cleared the start time of {label}", "cleared its start time"))
    return sentence(phrases, f"No changes to {label}")


def reorder_days(trip: Trip, a: ReorderDays, ctx: OpContext) -> str:
    current = {d.id: d for d in trip.days}
    if sorted(a.dayIds) != sorted(current) or len(set(a.dayIds)) != len(a.dayIds):
        raise Invalid("dayIds must list every day of the trip exactly once", field="dayIds")
    trip.days = [current[i] for i in a.dayIds]
    trip.renumber()
    return "Reordered the days"


def delete_day(trip: Trip, a: DeleteDay, ctx: OpContext) -> str:
    day = trip.day(a.dayId)
    if len(trip.days) == 1:
        raise Invalid("A trip keeps at least one day", field="dayId")
    label = day_label(trip, day)
    trip.days.remove(day)
    trip.unlink_expenses(day_id=day.id, stop_ids={s.id for s in day.stops})
    trip.renumber()
    return f"Deleted {label} and its {plural(len(day.stops), 'stop')}" if day.stops else f"Deleted {label}"


def insert_stop(trip: Trip, a: InsertStop, ctx: OpContext) -> str:
    day = trip.day(a.dayId)
    check_links(a.note, trip.id, "note", ctx.rules.origin)
    if len(day.stops) >= MAX_STOPS_PER_DAY:
        raise Invalid(f"A day holds at most {MAX_STOPS_PER_DAY} stops", field="dayId")
    index = len(day.stops)
    if a.afterStopId is not None:
        after_day, after = trip.stop(a.afterStopId)
        if after_day is not day:
            raise Invalid("afterStopId must be a stop of the same day", field="afterStopId")
        index = day.stops.index(after) + 1
    stop = Stop(
        id=new_id(), day_id=day.id, position=index, kind=a.kind, name=a.name, place_id=a.placeId,
        lat=a.lat, lng=a.lng, address=a.address, set_time=a.setTime, duration_min=a.durationMin,
        meal=a.meal, note=a.note, created_by=ctx.actor_id, created_at=ctx.now,
    )
    if a.takeExpensesOf is not None:
        trip.hand_expenses(trip.stop(a.takeExpensesOf)[1].id, stop)
    day.stops.insert(index, stop)
    trip.renumber()
    return f"Added “{stop.name}” to {day_label(trip, day)}"


STOP_FIELDS = {"kind": "kind", "name": "name", "placeId": "place_id", "lat": "lat", "lng": "lng",
               "address": "address", "setTime": "set_time", "durationMin": "duration_min",
               "meal": "meal", "note": "note"}


LOCATION_FIELDS = ("placeId", "lat", "lng", "address")


def update_stop(trip: Trip, a: UpdateStop, ctx: OpContext) -> str:
    day, stop = trip.stop(a.stopId)
    label = stop_label(stop)  # as it was: "Renamed “A” to “B”"
    changes = {k: v for k, v in a.given().items() if k != "stopId"}
    check_links(changes.get("note"), trip.id, "note", ctx.rules.origin)
    for key, value in changes.items():
        if value is None and key not in UpdateStop.clearable:
            raise Invalid(f"{key} cannot be cleared", field=key)
        setattr(stop, STOP_FIELDS[key], value)
    return sentence(_stop_phrases(label, stop, changes), f"No changes to {label}")


def _stop_phrases(label: str, stop: Stop, changes: dict[str, Any]) -> list[tuple[str, str]]:
    phrases = []
    if "name" in changes:
        phrases.append((f"renamed {label} to {quote(stop.name)}", f"renamed it to {quote(stop.name)}"))
    if "setTime" in changes:
        when = clock_label(to_minutes(stop.set_time)) if stop.set_time else ""   # "00:45 (+1)" for "24:45"
        phrases.append((f"set {label} to {when}", f"set it to {when}") if stop.set_time
                       else (f"cleared the fixed time of {label}", "cleared its fixed time"))
    if "durationMin" in changes:
        length = duration_words(stop.duration_min)
        phrases.append((f"made {label} {length} long", f"made it {length} long"))
    if "kind" in changes:
        phrases.append((f"marked {label} as {KIND_WORDS[stop.kind]}", f"marked it as {KIND_WORDS[stop.kind]}"))
    if "meal" in changes:
        meal = MEALS[stop.meal].word if stop.meal in MEALS else None
        phrases.append((f"marked {label} as {meal}", f"marked it as {meal}") if meal
                       else (f"marked {label} as not a meal", "marked it as not a meal"))
    located = [k for k in LOCATION_FIELDS if k in changes]
    if located:
        cleared = all(changes[k] is None for k in located)
        phrases.append((f"cleared the location of {label}", "cleared its location") if cleared
                       else (f"changed the location of {label}", "changed its location"))
    if "note" in changes:
        phrases.append((f"edited the note of {label}", "edited its note"))
    return phrases


def move_stop(trip: Trip, a: MoveStop, ctx: OpContext) -> str:
    from_day, stop = trip.stop(a.stopId)
    to_day = trip.day(a.toDayId)
    if to_day is not from_day and len(to_day.stops) >= MAX_STOPS_PER_DAY:
        raise Invalid(f"A day holds at most {MAX_STOPS_PER_DAY} stops", field="toDayId")
    from_day.stops.remove(stop)
    index = min(a.position, len(to_day.stops))
    to_day.stops.insert(index, stop)
    trip.renumber()
    trip.follow_stop(stop)
    label = day_label(trip, to_day)
    before = to_day.stops[index - 1] if index else None
    if to_day is from_day:
        where = f"after {quote(before.name)} on {label}" if before else f"to the start of {label}"
    elif len(to_day.stops) == 1:
        where = f"to {label}"
    else:
        where = f"to {label}, after {quote(before.name)}" if before else f"to the start of {label}"
    return f"Moved {quote(stop.name)} {where}"


def swap_stops(trip: Trip, a: SwapStops, ctx: OpContext) -> str:
    """Each stop takes the other's day and position (a rainy day's park for a dry day's museum)."""
    day_a, stop_a = trip.stop(a.stopId)
    day_b, stop_b = trip.stop(a.otherStopId)
    if stop_a is stop_b:
        raise Invalid("otherStopId must be another stop", field="otherStopId")
    i, j = day_a.stops.index(stop_a), day_b.stops.index(stop_b)
    day_a.stops[i], day_b.stops[j] = stop_b, stop_a
    trip.renumber()
    trip.follow_stop(stop_a)
    trip.follow_stop(stop_b)
    return f"Swapped “{stop_a.name}” ({day_label(trip, day_b)}) and “{stop_b.name}” ({day_label(trip, day_a)})"


def delete_stop(trip: Trip, a: DeleteStop, ctx: OpContext) -> str:
    day, stop = trip.stop(a.stopId)
    day.stops.remove(stop)
    trip.unlink_expenses(stop_ids={stop.id})
    trip.renumber()
    return f"Removed “{stop.name}” from {day_label(trip, day)}"


def _split_json(trip: Trip, split: EqualSplit | SharesSplit | None) -> dict[str, Any]:
    if split is None or isinstance(split, EqualSplit):
        members = (split.members if split and split.members else None) or list(trip.member_ids)
        for m in members:
            trip.require_member(m, "split.members")
        return {"kind": "equal", "members": list(dict.fromkeys(members))}
    for m in split.shares:
        trip.require_member(m, "split.shares")
    return {"kind": "shares", "shares": dict(split.shares)}


def _check_links(trip: Trip, day_id: str | None, stop_id: str | None) -> None:
    day = trip.day(day_id) if day_id is not None else None
    if stop_id is not None:
        stop_day, _ = trip.stop(stop_id)
        if day is not None and stop_day is not day:
            raise Invalid("stopId: that stop is on another day than the expense's day", field="stopId")


def add_expense(trip: Trip, a: AddExpense, ctx: OpContext) -> str:
    if len(trip.expenses) >= MAX_EXPENSES:
        raise quota_size(f"A trip can have at most {MAX_EXPENSES} expenses; delete ones it no longer needs first.",
                         "expenses_per_trip")
    trip.require_member(a.paidBy, "paidBy")
    _check_links(trip, a.dayId, a.stopId)
    expense = Expense(
        id=new_id(), title=a.title, amount_minor=a.amountMinor, currency=a.currency, paid_by=a.paidBy,
        split=_split_json(trip, a.split), day_id=a.dayId, stop_id=a.stopId, created_by=ctx.actor_id,
        created_at=ctx.now,
    )
    trip.expenses.append(expense)
    return f"Added the expense {quote(expense.title)} ({format_money(expense.amount_minor, expense.currency)})"


def update_expense(trip: Trip, a: UpdateExpense, ctx: OpContext) -> str:
    e = trip.expense(a.expenseId)
    changes = a.given()
    for key in ("title", "amountMinor", "currency", "paidBy"):
        if key in changes and changes[key] is None:
            raise Invalid(f"{key} cannot be cleared", field=key)
    if a.paidBy is not None:
        trip.require_member(a.paidBy, "paidBy")
        e.paid_by = a.paidBy
    if a.title is not None:
        e.title = a.title
    if a.amountMinor is not None:
        e.amount_minor = a.amountMinor
    if a.currency is not None:
        e.currency = a.currency
    if "split" in changes:
        e.split = _split_json(trip, a.split)
    if "dayId" in changes or "stopId" in changes:
        day_id = changes.get("dayId", e.day_id)
        stop_id = changes.get("stopId", e.stop_id)
        _check_links(trip, day_id, stop_id)
        e.day_id, e.stop_id = day_id, stop_id
    if a.amountMinor is not None or a.currency is not None:
        return f"Changed the expense {quote(e.title)} to {format_money(e.amount_minor, e.currency)}"
    return f"Changed the expense {quote(e.title)}"


def delete_expense(trip: Trip, a: DeleteExpense, ctx: OpContext) -> str:
    e = trip.expense(a.expenseId)
    trip.expenses.remove(e)
    return f"Deleted the expense {quote(e.title)}"


def set_trip_preferences(trip: Trip, a: SetTripPreferences, ctx: OpContext) -> str:
    changes = {k: v for k, v in a.given().items() if v is not None or k == "budget"}
    trip.prefs = TripPreferences.model_validate({**trip.prefs.model_dump(), **changes})
    trip.prefs_set = True
    return "Changed the trip's shared choices"


@dataclass(frozen=True)
class OpSpec:
    name: str
    args: type[Args]
    role: str
    apply: Callable[[Trip, Any, OpContext], str]
    description: str
    agent: bool = True  # offered to the agent as a write tool (approval still needed)
    # The id arguments naming what the op changes (the stop it moves, the day it renames). Two members'
    # ops naming the same id conflict when one was made offline (app/trips/replay.py).
    changes: tuple[str, ...] = ()
    # Safe to replay: made offline on an older version and sent later, it still means what its author
    # meant, unless another member changed what it changes meanwhile. The page keeps these while offline
    # (GET /api/config `offlineOps`); every other op needs a connection.
    replay: bool = False


TRIP_OPS: dict[str, OpSpec] = {
    spec.name: spec
    for spec in [
        OpSpec("update_trip", UpdateTrip, "editor", update_trip,
               "Change the trip's title, destination, start date, time zone or currency."),
        OpSpec("add_day", AddDay, "editor", add_day, "Add a day at the end of the trip."),
        OpSpec("update_day", UpdateDay, "editor", update_day,
               "Rename a day, change its note, or set the time the day starts (HH:MM; null clears).",
               changes=("dayId",), replay=True),
        OpSpec("reorder_days", ReorderDays, "editor", reorder_days,
               "Reorder the days; dayIds must list every day exactly once. Contents move to the new dates."),
        OpSpec("delete_day", DeleteDay, "editor", delete_day, "Delete a day and its stops.", agent=False,
               changes=("dayId",)),
        OpSpec("insert_stop", InsertStop, "editor", insert_stop,
               "Add a stop to a day, after afterStopId or at the end. "
               "setTime (HH:MM, 00:00-29:59: 24:45 is 00:45 the next morning) fixes its time; otherwise it is "
               "computed. takeExpensesOf: a stop it replaces, whose expenses become this stop's.", replay=True),
        OpSpec("update_stop", UpdateStop, "editor", update_stop,
               "Change fields of a stop; setTime null clears a set time (HH:MM, 00:00-29:59: 24:45 is 00:45 the "
               "next morning).", changes=("stopId",), replay=True),
        OpSpec("move_stop", MoveStop, "editor", move_stop,
               "Move a stop to a day (possibly the same) at a 0-based position.", changes=("stopId",), replay=True),
        OpSpec("swap_stops", SwapStops, "editor", swap_stops,
               "Swap two stops: each takes the other's day and position.", changes=("stopId", "otherStopId")),
        OpSpec("delete_stop", DeleteStop, "editor", delete_stop, "Remove a stop.", changes=("stopId",)),
        OpSpec("add_expense", AddExpense, "editor", add_expense,
               "Record an expense in integer minor units, paid by a member, split equally or by shares.",
               replay=True),
        OpSpec("update_expense", UpdateExpense, "editor", update_expense, "Change an expense.",
               changes=("expenseId",), replay=True),
        OpSpec("delete_expense", DeleteExpense, "editor", delete_expense, "Delete an expense.",
               changes=("expenseId",)),
        OpSpec("set_trip_preferences", SetTripPreferences, "viewer", set_trip_preferences,
               "Set the trip's shared travel choices.", agent=False),
    ]
}

# Proactive suggestions may only carry these (spec section 7).
PATCH_OPS = ("update_stop", "move_stop", "update_day", "reorder_days", "update_expense")


def validate_args(op_name: str, args: Any) -> Args:
    """An op's arguments checked by its model (404 for an unknown op, 422
    naming the field): the write path, the agent's tools and the review's
    fix search all validate the same way."""
    spec = TRIP_OPS.get(op_name)
    if spec is None:
        raise NotFound(f"Unknown operation {op_name!r}", code="unknown_op")
    if isinstance(args, spec.args):
        return args
    if isinstance(args, BaseModel):
        args = args.model_dump(exclude_unset=True)
    try:
        return spec.args.model_validate(args)
    except ValidationError as exc:
        raise validation_error(exc) from None


def simulate(trip: Trip, ops: list[tuple[str, Any]], actor_id: str = "simulation") -> Trip:
    """The trip after `ops`, on a copy-on-write edit (the same apply functions
    the write path runs; `trip` may be the one readers share and is never
    changed). Raises what an op raises (AppError)."""
    out = trip.edit()
    ctx = OpContext(actor_id=actor_id, now="")
    for name, args in ops:
        TRIP_OPS[name].apply(out, validate_args(name, args), ctx)
    return out
