"""The one outbound HTTP client (Google, OpenStreetMap, Open-Meteo, Street
View), made on first use.

Building an httpx client builds its TLS context, which reads the CA bundle:
about 30 ms, a fifth of a cold start, for a server that may not call out for
minutes (or ever, in tests and with no keys). The providers only use
`get`, `request` and `aclose`.
"""

from __future__ import annotations

from typing import Any

import httpx


class OutboundClient:
    def __init__(self, **options: Any):
        self._options = options
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(**self._options)
        return self._client

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return await self.client.get(url, **kwargs)

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return await self.client.request(method, url, **kwargs)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
