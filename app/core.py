"""The app's core: every part the lifespan builds, complete after start-up.

One `Core` per app, built by `app.lifecycle.start` and kept in the lifespan
state (routes reach it with `routes.common.services(request)`). Every part
is there and typed, never None, except the small optional group at the end
(AI, Google, street view, the forecast watch), which is None when its key is
not configured and is checked where it is used.

Only the composition root (app/lifecycle.py, app/web/) and the routes see
the whole core. Everything below takes the narrow parts it uses: a rule
module its values, a domain module the parts it names (`TripStates`,
`Database`, ...), a feature package its own Protocol (app/agent/deps.py,
app/planner/deps.py, app/review/facts.py's `FactSources`), which the core
satisfies.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

from .agent.deps import AgentTiming
from .agent.watch import Watch
from .ai import AI
from .aiusage import AIUsage
from .assistants.door import Assistants
from .auth import LastUse, SessionCache, SignInLimiter
from .background import BackgroundWork
from .quotas import Pace, SignUpLimiter
from .db import Database
from .filestore import FileStore
from .idempotency import IdempotencyKeys
from .live.hub import LiveHub, LiveLimits
from .providers.google import Google
from .providers.maps import PlacesProvider
from .providers.outbound import OutboundClient
from .providers.streetview import StreetView
from .providers.weather import Weather
from .settings import Settings
from .telemetry import Telemetry
from .trips.dto import TripCache
from .trips.heads import Heads
from .trips.state import TripStates
from .trips.stored_days import StoredDays


@dataclass
class Core:
    settings: Settings
    db: Database
    secret: str                       # signs approvals and street-view names (never sent anywhere)
    clock: Callable[[], float]        # wall-clock seconds; tests inject one
    files: FileStore                  # uploads: the volume, or the replica's bucket (app/filestore/)
    background: BackgroundWork
    telemetry: Telemetry              # a no-op unless OpenTelemetry is configured
    http: OutboundClient              # the one outbound client the providers share
    trips: TripStates                 # the trips in memory (exact; ops validate against them)
    trip_cache: TripCache             # their TripDto views
    stored_days: StoredDays           # their days kept encoded in SQLite, for first reads after a restart
    heads: Heads                      # the timeline poll's per-trip counters
    live: LiveHub                     # open live streams (app/live/)
    aiusage: AIUsage                  # AI limits and usage (the admin page, refusals)
    places: PlacesProvider            # Google or OpenStreetMap (app/providers/maps.py)
    weather: Weather
    agent_timing: AgentTiming
    live_limits: LiveLimits
    sessions: SessionCache
    limiter: SignInLimiter
    signups: SignUpLimiter            # new accounts per address (app/quotas.py)
    writes: Pace                      # changes per account per minute and hour (app/quotas.py)
    place_lookups: Pace               # place searches and details per account, likewise
    last_use: LastUse                 # calendar links' and access tokens' last use
    assistants: Assistants            # the MCP server at /mcp (app/assistants/), started on first use
    idempotency: IdempotencyKeys      # the first answer to each Idempotency-Key (app/web/idempotent_writes.py)
    # The optional group: None when not configured.
    ai: AI | None = None                    # without OPENAI_API_KEY
    google: Google | None = None            # without GOOGLE_MAPS_API_KEY
    street_view: StreetView | None = None   # without GOOGLE_MAPS_API_KEY
    watch: Watch | None = None              # the agent's forecast watch: only with AI
