"""The one outbound HTTP client (Google, OpenStreetMap, Open-Meteo, Street
View), made on first use.

Made on first use, for a server that may not call out for minutes (or ever,
in tests and with no keys), and with the process's one TLS context
(app/tls.py): a context of its own would read the CA bundle again, about
30 ms. The providers only use `get`, `request` and `aclose`.

Its timeouts are settings (`provider_connect_timeout_s`, `provider_read_timeout_s`:
WAYLINE_PROVIDER_CONNECT_TIMEOUT_S / WAYLINE_PROVIDER_READ_TIMEOUT_S), so a test
picks ones that prove its point on a loaded machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

from ..tls import tls_context

if TYPE_CHECKING:
    from ..settings import Settings


def provider_timeout(settings: Settings, *, read_extra_s: float = 0.0) -> httpx.Timeout:
    """The providers' timeouts; `read_extra_s` for a service that may think
    that long before it answers (Overpass's own query limit)."""
    return httpx.Timeout(settings.provider_read_timeout_s + read_extra_s,
                         connect=settings.provider_connect_timeout_s)


class OutboundClient:
    def __init__(self, **options: Any):
        self._options = options
        self._client: httpx.AsyncClient | None = None

    @classmethod
    def for_providers(cls, settings: Settings, **options: Any) -> OutboundClient:
        """The providers' client: the settings' timeouts, no redirects followed."""
        return cls(**{"timeout": provider_timeout(settings), "follow_redirects": False, **options})

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(**{"verify": tls_context(), **self._options})
        return self._client

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return await self.client.get(url, **kwargs)

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return await self.client.request(method, url, **kwargs)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
