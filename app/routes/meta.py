"""Health, public config, the meals the page offers and the OpenAPI document."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Route

from ..meals import public_meals
from ..money import EXPONENTS
from ..trips.ops import TRIP_OPS
from ..trips.replay import replayable_ops
from .common import ok, services
from .openapi import build_openapi, describe


@describe(summary="Liveness and database check")
async def healthz(request: Request):
    await services(request).db.ping()
    return JSONResponse({"ok": True})


def public_config(settings) -> dict:
    # The key set is pinned by a test: nothing secret may ever be added here.
    return {
        "googleMapsBrowserKey": settings.google_maps_browser_key,
        "aiEnabled": settings.ai_enabled,
        "placesEnabled": True,   # Google with a key, OpenStreetMap without one
        "placesProvider": settings.places_provider,
        "mapTilesUrl": settings.map_tiles_url,
        "mapAttribution": settings.map_attribution,
        "currencyExponents": EXPONENTS,   # ISO 4217, for public/money.js
        "limits": {
            "aiDailyCalls": settings.ai_daily_limit,
            "aiConcurrent": settings.ai_concurrent,
            "aiDailyTokens": settings.ai_daily_tokens,
            "uploadBytes": 2 * 1024 * 1024,
            "tripDays": settings.days_per_trip,
            "agentPollSeconds": 12,
        },
        # The trip ops the page may keep while offline and send later (the registry's `replay` flag).
        "offlineOps": replayable_ops(),
        # The trip ops any member may make, viewers too (the trip's shared choices): the page
        # offers a viewer the review's fixes made only of these, and says who can apply the rest.
        "memberOps": [name for name, spec in TRIP_OPS.items() if spec.role == "viewer"],
    }


@describe(summary="Public settings for the browser")
async def config(request: Request):
    return ok(public_config(services(request).settings))


@describe(summary="The meals a food stop may be, with their labels and usual lengths (app/meals.py)")
async def meals(request: Request):
    return ok({"meals": public_meals()})


@describe(summary="This document")
async def openapi(request: Request):
    return JSONResponse(build_openapi(request.app.routes))


INDEX = Path(__file__).resolve().parents[2] / "public" / "index.html"


async def invite_page(request: Request):
    # Invite links may be shared as /invite/<token>; the page's router reads the path.
    return FileResponse(INDEX, media_type="text/html")


routes = [
    Route("/invite/{token}", invite_page, methods=["GET"]),
    Route("/healthz", healthz, methods=["GET"]),
    Route("/api/config", config, methods=["GET"]),
    Route("/api/meals", meals, methods=["GET"]),
    Route("/api/openapi.json", openapi, methods=["GET"]),
]
