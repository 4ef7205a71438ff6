"""App factories for benchmarks (run by uvicorn --factory in a child process)."""

from __future__ import annotations

import os
from pathlib import Path

from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route


def wayline():
    from app.server import create_app
    from app.settings import Settings

    return create_app(Settings.from_env(dotenv=None))


def bare():
    """A bare Starlette endpoint returning the same bytes the real one returns."""
    payload = Path(os.environ["BENCH_PAYLOAD"]).read_bytes()

    async def endpoint(request):
        return Response(payload, media_type="application/json")

    return Starlette(routes=[Route("/{path:path}", endpoint)])
