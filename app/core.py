"""What the lifespan opens and the routes use: one object, built per app."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from collections.abc import Awaitable, Callable

from .auth import LastUse, SessionCache, SignInLimiter
from .db import Database
from .errors import Unavailable
from .filestore import FileStore
from .settings import Settings
from .telemetry import Telemetry

if TYPE_CHECKING:  # the parts' modules import this one; types only
    from .agent.timeline import Heads
    from .agent.watch import Watch
    from .assistants.door import Assistants
    from .ai import AI
    from .aiusage import AIUsage
    from .providers.google import Google
    from .providers.outbound import OutboundClient
    from .providers.streetview import StreetView
    from .providers.maps import PlacesProvider
    from .live.hub import LiveHub
    from .trips.dto import TripCache
    from .trips.apply import OpEvent
    from .trips.state import TripStates
    from .providers.weather import Weather

log = logging.getLogger("wayline")


def require_ai(svc: Services) -> AI:
    """The AI gateway, or a 503 that says AI is off (no OPENAI_API_KEY)."""
    if svc.ai is None:
        raise Unavailable("AI features are off: this server has no OpenAI API key (OPENAI_API_KEY). "
                          "Everything else works.", code="ai_unavailable")
    return svc.ai


class BackgroundWork:
    """Tracks fire-and-forget tasks so shutdown can wait for them (bounded).

    A `forever` task (a periodic loop) never ends on its own: shutdown cancels
    it first, then waits for the rest."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task] = set()
        self._forever: set[asyncio.Task] = set()

    def spawn(self, coro: Awaitable[Any], name: str = "background", *, forever: bool = False) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)
        if forever:
            self._forever.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        self._forever.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed: %r", task.get_name(), task.exception())

    async def drain(self, timeout_s: float = 10.0) -> None:
        """Stop the loops, wait for running work; cancel what is still running after the timeout."""
        loops = list(self._forever)
        for task in loops:
            task.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        while self._tasks:
            pending = list(self._tasks)
            done, still = await asyncio.wait(pending, timeout=timeout_s)
            if still:
                for task in still:
                    task.cancel()
                await asyncio.gather(*still, return_exceptions=True)
                return

    def __len__(self) -> int:
        """Work still running (the loops are not counted: they never finish)."""
        return len(self._tasks - self._forever)


@dataclass
class Services:
    """One per app, built by the lifespan (app/web/application.py, app/lifecycle.py).
    Tests replace parts with `create_app(settings, <field>=...)`."""

    settings: Settings
    db: Database
    secret: str
    files: FileStore   # uploads: the volume, or the replica's bucket (app/filestore/)
    limiter: SignInLimiter = field(default_factory=SignInLimiter)
    sessions: SessionCache = field(default_factory=SessionCache)
    last_use: LastUse = field(default_factory=LastUse)   # calendar links' and access tokens' last use
    background: BackgroundWork = field(default_factory=BackgroundWork)
    clock: Callable[[], float] | None = None
    # Filled in by the lifespan when their modules are configured.
    http: OutboundClient | None = None   # shared by the providers
    google: Google | None = None            # None without GOOGLE_MAPS_API_KEY
    street_view: StreetView | None = None   # None without GOOGLE_MAPS_API_KEY
    places: PlacesProvider | None = None    # Google or OpenStreetMap (app/providers/maps.py)
    weather: Weather | None = None
    ai: AI | None = None                    # None without OPENAI_API_KEY
    aiusage: AIUsage | None = None
    trips: TripStates | None = None         # the trips in memory (exact; ops validate against them)
    trip_cache: TripCache | None = None     # their TripDto views
    heads: Heads | None = None              # the timeline poll's per-trip counters
    telemetry: Telemetry = field(default_factory=Telemetry)   # no-op unless OpenTelemetry is configured
    live: LiveHub | None = None             # open live streams (app/live/)
    assistants: Assistants | None = None    # the MCP server at /mcp (app/assistants/), started on first use
    # Tool calls an outside assistant's token may make in any minute.
    mcp_calls_per_minute: int = 60
    # Called after every committed op (the agent's evaluation hooks in here);
    # listeners must not block.
    op_listeners: list[Callable[[OpEvent], None]] = field(default_factory=list)
    # A burst of edits on one trip costs one agent evaluation after this quiet time.
    agent_debounce_s: float = 1.5
    # Live streams: a comment line this often keeps proxies from closing a
    # quiet stream (Fly's proxy closes after 60 s idle); the open-stream limits.
    live_keepalive_s: float = 20.0
    live_max_per_user: int = 8
    live_max_streams: int = 2000
    # The agent's forecast watch (app/agent/watch.py) runs a pass this often
    # (0: never; tests drive `watch.pass_once()` directly). Filled when AI is on.
    agent_watch_interval_s: float = 3600.0
    watch: Watch | None = None
