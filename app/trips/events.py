"""The trip's own change events (app/changes.py has the bus and the generic
`TripChanged`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..changes import TripEvent
from .model import Trip

OPS_KINDS = frozenset({"content", "timeline"})


@dataclass(frozen=True)
class OpsApplied(TripEvent):
    """Registry ops committed through the one write path (apply.py): the trip
    before and after them (both shared: read, never change), who, what (the
    ops' names and their one-line summaries) and from where (`source`:
    member, agent, suggestion, plan, assistant, ...). The trips in memory
    publish `after`; the agent evaluates the edit."""

    actor_id: str
    ops: tuple[str, ...]
    summaries: tuple[str, ...]
    before: Trip
    after: Trip
    source: str

    def kinds(self) -> frozenset[str]:
        return OPS_KINDS
