"""All HTTP routes. Each module exposes `routes`; order matters only for
overlapping paths."""

from __future__ import annotations

from starlette.routing import BaseRoute


def build_routes() -> list[BaseRoute]:
    from . import (account, admin, agent, assistants, auth, exports, live, mcp, media, members, meta, places, planner,
                   preferences, social, streetview, trips)

    # The agent's events route is polled by every open page: matched first;
    # then the trip read (polled too) and its ops, the other hot paths.
    modules = [agent, trips, meta, auth, account, members, social, media, streetview, preferences, admin, places,
               planner, exports, assistants, mcp, live]
    routes: list[BaseRoute] = []
    for module in modules:
        routes.extend(module.routes)
    return routes
