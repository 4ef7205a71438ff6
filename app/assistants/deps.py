"""What the MCP server uses of the app: the trips and their views, the
database (tokens, proposals, the timeline), the review's facts and the read
tools' providers. The app's core has all of it."""

from __future__ import annotations

from typing import Protocol
from collections.abc import Callable

from ..db import Database
from ..quotas import Pace
from ..read_tools import ToolDeps
from ..trips.state import TripStates


class AssistantDeps(ToolDeps, Protocol):
    db: Database
    trips: TripStates
    place_lookups: Pace   # a member's place lookups, shared with the page (app/quotas.py)

    @property
    def clock(self) -> Callable[[], float]: ...   # wall-clock seconds
