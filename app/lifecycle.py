"""Opening and closing the outside world (HTTP client, Google, weather, AI)
for one app. Called from the lifespan in server.py."""

from __future__ import annotations

import httpx

from .services import Services
from .trips.dto import TripCache


async def start(svc: Services) -> None:
    # One shared client with short timeouts for Google and Open-Meteo.
    svc.http = httpx.AsyncClient(timeout=httpx.Timeout(8.0, connect=3.0), follow_redirects=False)
    svc.trip_cache = TripCache(svc)


async def stop(svc: Services) -> None:
    if svc.ai is not None and hasattr(svc.ai, "close"):
        await svc.ai.close()
    if svc.http is not None:
        await svc.http.aclose()
