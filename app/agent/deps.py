"""What the trip agent uses of the app: the parts it reads, typed, nothing
more. The app's core (app/core.py) has all of them; the agent never sees the
rest of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from collections.abc import Callable

from ..ai import AI
from ..background import BackgroundWork
from ..db import Database
from ..filestore import FileStore
from ..providers.streetview import StreetView
from ..review.facts import FactSources
from ..settings import Settings
from ..telemetry import Telemetry
from ..trips.heads import Heads
from ..trips.state import TripStates


@dataclass(frozen=True)
class AgentTiming:
    # A burst of edits on one trip costs one agent evaluation after this quiet time.
    debounce_s: float = 1.5
    # The forecast watch (app/agent/watch.py) runs a pass this often (0: never;
    # tests drive `watch.pass_once()` directly).
    watch_interval_s: float = 3600.0


class AgentDeps(FactSources, Protocol):
    settings: Settings
    db: Database
    secret: str
    background: BackgroundWork
    telemetry: Telemetry
    trips: TripStates
    heads: Heads
    ai: AI | None                  # None without OPENAI_API_KEY: the agent's routes answer 404
    street_view: StreetView | None  # None without GOOGLE_MAPS_API_KEY
    files: FileStore
    agent_timing: AgentTiming

    @property
    def clock(self) -> Callable[[], float]: ...   # wall-clock seconds

