"""Trips spread over several machines, each with one home (docs/scaling.md).

Off unless `WAYLINE_TRIP_MACHINES` lists the Fly machine ids that share the
trips (and this machine, `FLY_MACHINE_ID`, is one of them). Then a request
for a trip whose home is another machine is answered at once, before its
body is read or its session checked, with Fly's `fly-replay:
instance=<home>` header: Fly's proxy replays the same request on that
machine, and the member never sees the detour.

A trip's home comes from rendezvous hashing of its id over the machine list:
every machine computes the same answer without asking anyone, and adding a
machine moves only the trips that hash to the new one (about 1/n).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

# Every route of one trip: the API under /api/trips/:id, its uploads, and its
# calendar feed links (their token starts with the trip id: app/exports/feeds.py).
TRIP_PATH = re.compile(r"^/api/(?:(?:uploads/)?trips/([0-9a-f]{16})(?:/|$)|calendar/([0-9a-f]{16})\.)")


def home_of(trip_id: str, machines: Sequence[str]) -> str:
    """The machine whose (machine, trip) hash is highest: the trip's home."""
    return max(machines, key=lambda machine: hashlib.blake2b(f"{machine}/{trip_id}".encode(),
                                                             digest_size=8).digest())


class FlyReplayMiddleware:
    def __init__(self, app: ASGIApp, machine_id: str, machines: Sequence[str]):
        self.app = app
        self.machine_id = machine_id
        self.machines = tuple(machines)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = TRIP_PATH.match(scope["path"]) if scope["type"] == "http" else None
        home = home_of(match.group(1) or match.group(2), self.machines) if match else self.machine_id
        if home == self.machine_id:
            await self.app(scope, receive, send)
            return
        if any(name == b"fly-replay-src" for name, _ in scope["headers"]):
            # Replayed here already and still not ours: the machines disagree
            # about the list (a deploy half done). Say so rather than loop.
            await _answer(send, 503, "other_machine_unreachable",
                          "This trip's server is being moved; try again in a moment", [])
            return
        await _answer(send, 421, "other_machine", "This trip is served by another machine",
                      [(b"fly-replay", f"instance={home}".encode())])


async def _answer(send: Send, status: int, code: str, message: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store"), *headers]})
    await send({"type": "http.response.body", "body": body})
