"""create_app(settings): routes, error handlers, the lifespan. No import-time work."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from xstatic.pkg import leaflet as xstatic_leaflet

from ..auth import server_secret
from . import compression
from .bodies import BodyLimitMiddleware
from .idempotent_writes import IdempotencyMiddleware
from .service_worker import ShellWorker, service_worker
from ..db import Database
from ..errors import AppError, database_refusal
from .. import lifecycle
from ..core import Core
from ..routes import build_routes
from ..settings import Settings
from .headers import ResponseHeadersMiddleware
from .same_origin import SameOriginMiddleware
from .static_assets import StaticAssets
from .trip_homes import FlyReplayMiddleware

log = logging.getLogger("wayline")
PUBLIC_DIR = Path(__file__).resolve().parents[2] / "public"


def error_response(status: int, code: str, message: str, **extra) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)


async def app_error(request: Request, exc: AppError) -> JSONResponse:
    return JSONResponse(exc.to_json(), status_code=exc.status, headers=exc.headers())


HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 400: "bad_request", 413: "too_large"}


async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
    code = HTTP_CODES.get(exc.status_code, "error")
    message = "Not found" if exc.status_code == 404 else str(exc.detail)
    response = error_response(exc.status_code, code, message)
    response.headers.update(exc.headers or {})   # a 405's Allow (RFC 9110 requires it)
    return response


async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    # The traceback goes to our log only; the client gets a plain message.
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return error_response(500, "internal", "Something went wrong on our side. Please try again.")


async def database_error(request: Request, exc: sqlite3.DatabaseError) -> JSONResponse:
    refusal = database_refusal(exc)
    if refusal is None:
        return await unexpected_error(request, exc)
    if refusal.status >= 500:
        log.error("storage unavailable on %s %s: %s", request.method, request.url.path, exc)
    return JSONResponse(refusal.to_json(), status_code=refusal.status, headers=refusal.headers())


def create_app(settings: Settings, **overrides: Any) -> Starlette:
    """Build the app. `overrides` replace parts of the core or turn its knobs
    for tests (e.g. `clock=...`, `agent_debounce_s=0`; app/lifecycle.py)."""
    lifecycle.check_overrides(overrides)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Core]]:
        db = await Database.open(settings.db_path)
        try:
            core = await lifecycle.start(settings, db, await server_secret(db, settings.secret), overrides)
        except BaseException:
            await db.close()   # a failed start leaves no connection threads behind
            raise
        app.state.services = core
        try:
            # Lifespan state is copied into every request's scope: the cheapest
            # way for a handler to reach the core (see routes.common.services).
            yield {"services": core}
        finally:
            await lifecycle.stop(core)
            await db.close()

    routes = build_routes()
    # Leaflet's files come from its Python package (xstatic-leaflet), served from our own origin.
    routes.append(Mount("/vendor/leaflet", app=StaticAssets(xstatic_leaflet.BASE_DIR), name="leaflet"))
    routes.append(Route("/sw.js", service_worker, methods=["GET"]))
    routes.append(Mount("/", app=StaticAssets(PUBLIC_DIR, html=True), name="public"))
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        # Starlette types every handler as taking Exception; each takes its own class.
        exception_handlers={AppError: app_error, HTTPException: http_error,  # type: ignore[dict-item]
                            sqlite3.DatabaseError: database_error,  # type: ignore[dict-item]
                            Exception: unexpected_error},
    )
    app.add_middleware(IdempotencyMiddleware)   # innermost: after the same-origin check, bodies already bounded
    # Answers over a few KB, per answer (a kept answer is replayed and compressed like a fresh one); a
    # TripDto comes compressed once per version (app/web/compression.py).
    app.add_middleware(compression.GzipWhenAccepted)
    app.add_middleware(SameOriginMiddleware, settings=settings)
    app.add_middleware(ResponseHeadersMiddleware, settings=settings)   # on refusals and replayed answers too
    app.add_middleware(BodyLimitMiddleware)   # nothing reads a body past its limit
    if settings.trip_machines and settings.machine_id:
        # Outermost: a trip homed on another machine is handed to Fly's proxy
        # before anything here reads its body (app/web/trip_homes.py).
        app.add_middleware(FlyReplayMiddleware, machine_id=settings.machine_id, machines=settings.trip_machines)
    app.state.settings = settings
    app.state.shell_worker = ShellWorker(PUBLIC_DIR)   # /sw.js and the shell it caches
    return app
