"""What the planner uses of the app: the day's facts (trip views, places,
weather), the trips to apply drafts to, the database for drafts and the
copilot's answers, and the AI gateway (None without a key)."""

from __future__ import annotations

from typing import Protocol

from ..ai import AI
from ..db import Database
from ..review.facts import FactSources
from ..trips.state import TripStates


class PlannerDeps(FactSources, Protocol):
    db: Database
    trips: TripStates
    ai: AI | None
