"""The composition root: builds one app's core at start-up (the trips in
memory, their views, the timeline heads, live streams, the providers, AI)
and closes it at shutdown. Called from the lifespan in app/web/application.py.

Tests replace parts or turn knobs through `create_app(settings, **overrides)`
(`OVERRIDES` names what may be given); an unknown name is a TypeError.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any


from .agent.ambient import on_stop_comment
from .agent.deps import AgentTiming
from .agent.proactive import Evaluator
from .agent.suggestions import Resolver
from .agent.watch import Watch
from .aiusage import AIUsage
from .assistants.door import Assistants
from .auth import LastUse, SessionCache, SignInLimiter
from .quotas import PLACE_LOOKUPS, Pace, SignUpLimiter
from .background import BackgroundWork
from .core import Core
from .changes import Phase, TripEvent
from .db import Database
from .filestore import open_filestore
from .idempotency import IdempotencyKeys
from .live.hub import LiveHub, LiveLimits
from .providers.google import Google
from .providers.maps import open_provider
from .providers.outbound import OutboundClient
from .providers.route_cache import ESTIMATE_TTL_S, NO_ROUTE_TTL_S, ROUTE_TTL_S
from .providers.weather import Weather
from .settings import Settings
from .telemetry import from_settings
from .social import StopCommented
from .trips.dto import TripCache
from .trips.events import OpsApplied
from .trips.heads import Heads
from .trips.ops import OpRules
from .trips.state import TripStates
from .trips.stored_days import StoredDays

# Parts a test may inject instead of the configured ones.
PARTS = frozenset({"clock", "telemetry", "aiusage", "ai", "google", "places", "weather", "street_view", "sessions",
                   "limiter", "writes", "place_lookups", "files", "last_use"})
# Knobs a test may turn: override name -> (group, field).
KNOBS = {"agent_debounce_s": ("agent_timing", "debounce_s"),
         "agent_watch_interval_s": ("agent_timing", "watch_interval_s"),
         "live_keepalive_s": ("live_limits", "keepalive_s"),
         "live_max_per_user": ("live_limits", "max_per_user"),
         "live_max_streams": ("live_limits", "max_streams"),
         "live_send_timeout_s": ("live_limits", "send_timeout_s"),
         "live_presence_ttl_s": ("live_limits", "presence_ttl_s"),
         "mcp_calls_per_minute": ("assistants", "calls_per_minute")}
OVERRIDES = PARTS | set(KNOBS)


def check_overrides(overrides: dict[str, Any]) -> None:
    unknown = sorted(set(overrides) - OVERRIDES)
    if unknown:
        raise TypeError(f"create_app: the core has no part named {unknown[0]!r}")


async def start(settings: Settings, db: Database, secret: str, overrides: dict[str, Any]) -> Core:
    check_overrides(overrides)
    knobs: dict[str, dict[str, Any]] = {"agent_timing": {}, "live_limits": {}, "assistants": {}}
    for name, (group, knob) in KNOBS.items():
        if name in overrides:
            knobs[group][knob] = overrides[name]
    clock = overrides.get("clock") or time.time
    # One shared client for the providers, with the settings' timeouts (made on first use).
    http = OutboundClient.for_providers(settings)
    # Google only with a server key; places and routes from the configured
    # provider (Google, or OpenStreetMap with no key); weather always
    # (Open-Meteo needs no key). All read the core's clock.
    google = overrides.get("google")
    if google is None and settings.google_maps_api_key:
        google = Google(settings, http, db, clock=clock)
    places = overrides.get("places") or open_provider(settings, http, db, clock, google)
    street_view = overrides.get("street_view")
    if street_view is None and settings.google_maps_api_key:
        from .providers.streetview import StreetView

        # The Street View Static API takes the key in the query string, and
        # httpx logs every request URL at INFO: keep that logger to warnings.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        street_view = StreetView(settings, http, Path(settings.db_path).parent / "street-view", secret)
    # OpenTelemetry spans only when an endpoint is configured (tests may inject one).
    telemetry = overrides.get("telemetry")
    if telemetry is None or not telemetry.enabled:
        telemetry = from_settings(settings)
    trips = TripStates(db, settings.trip_cache_mb * 1024 * 1024)
    trips.op_rules = OpRules(max_days=settings.days_per_trip, origin=settings.public_url)
    trip_cache = TripCache(trips, places, clock)
    stored_days = StoredDays(db, trips, trip_cache, has_routes=places is not None, estimate_ttl_s=ESTIMATE_TTL_S,
                             route_ttl_s=min(ROUTE_TTL_S, NO_ROUTE_TTL_S))
    heads = Heads(db)
    live_limits = LiveLimits(**knobs["live_limits"])
    live = LiveHub(db, trip_cache, heads, live_limits, wall_clock=clock)
    # What committed is heard in phases (app/changes.py): the trips in memory
    # first, then the heads, then live pages (they read the heads fresh for
    # the change they announce), then the agent (below).
    db.changes.subscribe(Phase.CACHES, TripEvent, trips.changed)
    db.changes.subscribe(Phase.HEADS, TripEvent, heads.changed)
    db.changes.subscribe(Phase.LIVE, TripEvent, live.changed)
    # AI: usage limits always (admin page, refusals); the gateway, which owns
    # every call's guard, only with a key (and only then is `openai` imported).
    aiusage = overrides.get("aiusage") or AIUsage(db, settings, clock=clock)
    # This process owns the file: a call still running from an earlier boot is dead.
    await aiusage.abandon_earlier_boots()
    ai = overrides.get("ai")
    if ai is None and settings.ai_enabled:
        from .ai import AI

        ai = AI(settings, aiusage, telemetry)
    background = BackgroundWork()
    core = Core(settings=settings, db=db, secret=secret, clock=clock, background=background,
                files=overrides.get("files") or open_filestore(settings),
                telemetry=telemetry, http=http, trips=trips, trip_cache=trip_cache, stored_days=stored_days,
                heads=heads, live=live,
                aiusage=aiusage, places=places, weather=overrides.get("weather") or Weather(settings, http, db,
                                                                                             clock=clock),
                agent_timing=replace(AgentTiming(), **knobs["agent_timing"]), live_limits=live_limits,
                ai=ai, google=google, street_view=street_view,
                sessions=overrides.get("sessions") or SessionCache(),
                limiter=overrides.get("limiter") or SignInLimiter(),
                signups=SignUpLimiter(),
                writes=overrides.get("writes") or Pace(),
                place_lookups=overrides.get("place_lookups") or Pace(PLACE_LOOKUPS),
                last_use=overrides.get("last_use") or LastUse(),
                # The MCP server for outside assistants: started on the first /mcp request.
                assistants=Assistants(background, **knobs["assistants"]),
                idempotency=IdempotencyKeys(db, kept_mb=settings.kept_answers_mb_per_user))
    # The trip agent evaluates members' edits (debounced, in the background),
    # answers @agent in stop comments, and a periodic pass notices risks that
    # come without an edit (the forecast).
    if ai is not None:
        evaluator = Evaluator(core)
        db.changes.subscribe(Phase.AGENT, OpsApplied, evaluator)
        db.changes.subscribe(Phase.AGENT, OpsApplied, Resolver(core))
        db.changes.subscribe(Phase.AGENT, StopCommented, partial(on_stop_comment, core))
        core.watch = Watch(core, evaluator)
        if core.agent_timing.watch_interval_s > 0:
            core.background.spawn(core.watch.run(), name="agent-watch", forever=True)
    return core


def begin_shutdown(core: Core) -> None:
    """Shutdown starts (app/web/uvicorn_server.py calls this before uvicorn
    waits for open responses): live streams end now, or the server would
    wait on them forever."""
    core.live.end_all()


async def stop(core: Core) -> None:
    await core.background.drain()
    await core.stored_days.close()
    await core.live.close()
    if core.ai is not None:
        await core.ai.close()
    await core.http.aclose()
    core.telemetry.shutdown()
