"""All HTTP routes. Each module exposes `routes`; order matters only for
overlapping paths."""

from __future__ import annotations

from starlette.routing import BaseRoute


def build_routes() -> list[BaseRoute]:
    from . import auth, meta, trips

    modules = [meta, auth, trips]
    routes: list[BaseRoute] = []
    for module in modules:
        routes.extend(module.routes)
    return routes
