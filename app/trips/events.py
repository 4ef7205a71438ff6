"""What happens to a trip, as events listeners hear after the commit."""

from __future__ import annotations

from dataclasses import dataclass

from .model import Trip


@dataclass(frozen=True)
class OpEvent:
    """What listeners (the agent's evaluation) learn after a commit."""

    trip_id: str
    actor_id: str
    ops: tuple[str, ...]
    summaries: tuple[str, ...]
    before: Trip
    after: Trip
    source: str
