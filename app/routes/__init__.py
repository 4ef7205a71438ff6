"""All HTTP routes. Each module exposes `routes`; order matters only for
overlapping paths."""

from __future__ import annotations

from starlette.routing import BaseRoute


def build_routes() -> list[BaseRoute]:
    from . import (account, admin, agent, assistants, auth, exports, live, mcp, media, members, meta, places, planner,
                   preferences, social, streetview, trips)

    # Starlette tries each route's pattern in turn (about a microsecond
    # each): the hot paths go first. The agent's events are polled by every
    # open page, the trip read too, and every edit is an op (the op route
    # was the fifteenth pattern tried before, 4% of a write's loop time).
    hot: list[BaseRoute] = [agent.events_route, *trips.hot_routes]
    modules = [agent, trips, meta, auth, account, members, social, media, streetview, preferences, admin, places,
               planner, exports, assistants, mcp, live]
    routes = list(hot)
    for module in modules:
        routes.extend(route for route in module.routes if route not in hot)
    return routes
