"""The MCP server, started on the first /mcp request.

The SDK costs about 26 MiB and most of a second to import; a server whose
members connect no assistant should not pay that at start-up
(bench/startup.py). The first request imports it off the event loop and
starts the transport in a tracked background task that lives until
shutdown cancels it (the SDK's task group must be entered and left in one
task); later requests find it running.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

from ..background import BackgroundWork
from .deps import AssistantDeps

MCP_CALLS_PER_MINUTE = 60   # tool calls an outside assistant's token may make in any minute


class Assistants:
    def __init__(self, background: BackgroundWork, calls_per_minute: int = MCP_CALLS_PER_MINUTE):
        self.background, self.calls_per_minute = background, calls_per_minute
        self._ready: asyncio.Future[Any] | None = None

    async def handle(self, scope: Any, receive: Any, send: Any, caller: Any, deps: AssistantDeps) -> None:
        server = await self._started(deps)
        await server.handle(scope, receive, send, caller)

    async def _started(self, deps: AssistantDeps) -> Any:
        if self._ready is None:
            self._ready = asyncio.get_running_loop().create_future()
            self.background.spawn(self._run(self._ready, deps), name="mcp-server", forever=True)
        return await asyncio.shield(self._ready)

    async def _run(self, ready: asyncio.Future[Any], deps: AssistantDeps) -> None:
        try:
            module = await asyncio.to_thread(importlib.import_module, "app.assistants.server")
            server = module.AssistantServer(deps, calls_per_minute=self.calls_per_minute)
            async with server.manager.run():
                ready.set_result(server)
                await asyncio.Event().wait()   # serving, until shutdown cancels this task
        except BaseException as exc:
            if not ready.done():
                # A failed start is retried by the next request, not cached.
                self._ready = None
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError("MCP server stopped"))
            raise
