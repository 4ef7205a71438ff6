"""What committed, told after the commit: typed change events, heard in phases.

A write transaction says what it changed (app/db.py: `tx.touch(trip_id,
kind)` for a `TripChanged`, `tx.announce(event)` for a richer event such as
`OpsApplied` or a stop comment). Right after its COMMIT, and only then, the
database hands the transaction's events to the app's `ChangeBus`, which calls
the subscribers phase by phase:

1. CACHES: the trips in memory (app/trips/state.py) publish or drop what changed;
2. HEADS: the timeline heads a poll reads (app/trips/heads.py) forget their counts;
3. LIVE: live pages (app/live/hub.py) queue their events (reading the heads fresh);
4. AGENT: the trip agent evaluates edits and answers comments, on a state
   that is current everywhere else.

Within a phase, events are heard in the order the transaction announced them
(one `TripChanged` per trip, its kinds merged). A subscriber must not block
and may not undo the commit: an exception is logged and the others still hear.
A rolled-back transaction announces nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeVar
from collections.abc import Callable, Sequence

log = logging.getLogger("wayline")

# How a transaction changed a trip (what subscribers refresh):
# content: days, stops, expenses, details, shared choices (a new version);
# social: comments and votes; members: who belongs and their roles;
# timeline: agent timeline rows; suggestions: a suggestion's status;
# deleted: the trip is gone.
CHANGE_KINDS = frozenset({"content", "social", "members", "timeline", "suggestions", "deleted"})


class Phase(IntEnum):
    CACHES = 1
    HEADS = 2
    LIVE = 3
    AGENT = 4


@dataclass(frozen=True)
class TripEvent:
    """Something committed about one trip."""

    trip_id: str

    def kinds(self) -> frozenset[str]:
        """Which of CHANGE_KINDS it changed."""
        raise NotImplementedError


@dataclass(frozen=True)
class TripChanged(TripEvent):
    """A write changed these parts of the trip (`tx.touch`)."""

    changed: frozenset[str]

    def kinds(self) -> frozenset[str]:
        return self.changed


E = TypeVar("E", bound=TripEvent)


class ChangeBus:
    def __init__(self) -> None:
        self._handlers: dict[Phase, list[tuple[type[TripEvent], Callable[[Any], None]]]] = {p: [] for p in Phase}

    def subscribe(self, phase: Phase, event_type: type[E], handler: Callable[[E], None]) -> None:
        """Call `handler(event)` for every committed event of `event_type` (or a subclass), in `phase`."""
        self._handlers[phase].append((event_type, handler))

    def unsubscribe(self, handler: Callable[[Any], None]) -> None:
        for handlers in self._handlers.values():
            handlers[:] = [(t, h) for t, h in handlers if h is not handler]

    def handlers(self, phase: Phase, event_type: type[TripEvent]) -> list[Callable[[Any], None]]:
        """The handlers of `phase` that hear `event_type` (tests look for the agent's)."""
        return [h for t, h in self._handlers[phase] if issubclass(event_type, t)]

    def publish(self, events: Sequence[TripEvent]) -> None:
        """After a COMMIT: every subscriber of each phase, in phase order."""
        for phase, handlers in self._handlers.items():   # built in phase order (iterating the Enum costs more)
            for event in events:
                for event_type, handler in handlers:
                    if isinstance(event, event_type):
                        try:
                            handler(event)
                        except Exception:
                            log.exception("a change subscriber failed (%s)", phase.name.lower())
