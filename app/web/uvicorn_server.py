"""uvicorn's server, told to end the app's long-lived responses when
shutdown starts.

uvicorn stops accepting connections, then waits for every open response to
finish, and only then runs the app's lifespan shutdown. A live stream never
finishes by itself, so the lifespan alone would wait forever: this server
calls `lifecycle.begin_shutdown` first. `python -m app` and the tests' live
server both run it.
"""

from __future__ import annotations

import resource
import socket

import uvicorn

from .. import lifecycle


class Server(uvicorn.Server):
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        services = getattr(getattr(self.config.app, "state", None), "services", None)
        if services is not None:
            lifecycle.begin_shutdown(services)
        await super().shutdown(sockets)


# Every open live stream holds a socket: 2,000 streams (the hub's limit) and
# everything else need more than the usual soft limit of 1,024 files.
OPEN_FILES = 4096


def raise_open_files(wanted: int = OPEN_FILES) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        allowed = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (allowed, hard))


def run(app, **options) -> None:
    """`uvicorn.run(app, **options)` with this server (and room for the streams' sockets)."""
    raise_open_files()
    Server(uvicorn.Config(app, **options)).run()
