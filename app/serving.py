"""uvicorn's server, told to end the app's long-lived responses when
shutdown starts.

uvicorn stops accepting connections, then waits for every open response to
finish, and only then runs the app's lifespan shutdown. A live stream never
finishes by itself, so the lifespan alone would wait forever: this server
calls `lifecycle.begin_shutdown` first. `python -m app` and the tests' live
server both run it.
"""

from __future__ import annotations

import socket

import uvicorn

from . import lifecycle


class Server(uvicorn.Server):
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        services = getattr(getattr(self.config.app, "state", None), "services", None)
        if services is not None:
            lifecycle.begin_shutdown(services)
        await super().shutdown(sockets)


def run(app, **options) -> None:
    """`uvicorn.run(app, **options)` with this server."""
    Server(uvicorn.Config(app, **options)).run()
