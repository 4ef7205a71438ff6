"""Opening and closing the outside world (HTTP client, Google, weather, AI)
for one app. Called from the lifespan in app/web/application.py."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import httpx

from .core import Services
from .agent.timeline import Heads
from .live.hub import LiveHub
from .providers.outbound import OutboundClient
from .trips.dto import TripCache
from .trips.state import TripStates


async def start(svc: Services) -> None:
    # One shared client with short timeouts for the providers (made on first use).
    svc.http = OutboundClient(timeout=httpx.Timeout(8.0, connect=3.0), follow_redirects=False)
    # Caches follow the database's after-commit change signal.
    svc.trips = TripStates(svc.db, svc.settings.trip_cache_mb * 1024 * 1024)
    svc.trip_cache = TripCache(svc)
    svc.heads = Heads()
    svc.live = LiveHub(svc)  # after the heads: it reads them fresh for the change it announces
    svc.db.on_change += [svc.trips.changed, svc.heads.changed, svc.live.changed]
    # Google only with a server key; places and routes from the configured
    # provider (Google, or OpenStreetMap with no key); weather always
    # (Open-Meteo needs no key). All read the clock through svc so a test's
    # injected clock applies; tests may inject any of them.
    from .providers.google import Google
    from .providers.maps import open_provider
    from .providers.weather import Weather

    def clock() -> float:
        return (svc.clock or time.time)()

    if svc.google is None and svc.settings.google_maps_api_key:
        svc.google = Google(svc.settings, svc.http, svc.db, clock=clock)
    if svc.places is None:
        svc.places = open_provider(svc.settings, svc.http, svc.db, clock, svc.google)
    if svc.street_view is None and svc.settings.google_maps_api_key:
        from .providers.streetview import StreetView

        # The Street View Static API takes the key in the query string, and
        # httpx logs every request URL at INFO: keep that logger to warnings.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        cache = Path(svc.settings.db_path).parent / "street-view"
        svc.street_view = StreetView(svc.settings, svc.http, cache, svc.secret)
    if svc.weather is None:
        svc.weather = Weather(svc.settings, svc.http, svc.db, clock=clock)
    # OpenTelemetry spans only when an endpoint is configured (tests may inject one).
    if not svc.telemetry.enabled:
        from .telemetry import from_settings

        svc.telemetry = from_settings(svc.settings)
    # The MCP server for outside assistants (app/assistants/): started on the first /mcp request.
    from .assistants.door import Assistants

    svc.assistants = Assistants(svc)
    # AI: usage limits always (admin page, refusals); the client, which owns
    # every call's guard, only with a key (and only then is `openai` imported).
    # Tests may inject either through create_app(settings, ai=..., aiusage=...).
    from .aiusage import AIUsage

    if svc.aiusage is None:
        svc.aiusage = AIUsage(svc.db, svc.settings, clock=svc.clock)
    # This process owns the file: a call still running from an earlier boot is dead.
    await svc.aiusage.abandon_earlier_boots()
    if svc.ai is None and svc.settings.ai_enabled:
        from .ai import AI

        svc.ai = AI(svc.settings, svc.aiusage, svc.telemetry)
    # The trip agent evaluates members' edits (debounced, in the background),
    # and a periodic pass notices risks that come without an edit (the forecast).
    if svc.ai is not None:
        from .agent.proactive import Evaluator
        from .agent.suggestions import Resolver
        from .agent.watch import Watch

        evaluator = Evaluator(svc)
        svc.op_listeners += [evaluator, Resolver(svc)]
        svc.watch = Watch(svc, evaluator)
        if svc.agent_watch_interval_s > 0:
            svc.background.spawn(svc.watch.run(), name="agent-watch", forever=True)


def begin_shutdown(svc: Services) -> None:
    """Shutdown starts (app/web/uvicorn_server.py calls this before uvicorn waits for open
    responses): live streams end now, or the server would wait on them forever."""
    if svc.live is not None:
        svc.live.end_all()


async def stop(svc: Services) -> None:
    if svc.live is not None:
        await svc.live.close()
    if svc.ai is not None and hasattr(svc.ai, "close"):
        await svc.ai.close()
    if svc.http is not None:
        await svc.http.aclose()
    svc.telemetry.shutdown()
