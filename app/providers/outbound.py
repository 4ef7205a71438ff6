"""The one outbound HTTP client (Google, OpenStreetMap, Open-Meteo, Street
View), made on first use.

Made on first use, for a server that may not call out for minutes (or ever,
in tests and with no keys), and with the process's one TLS context
(app/tls.py): a context of its own would read the CA bundle again, about
30 ms. The providers only use `get`, `request` and `aclose`.

Its timeouts are settings (`provider_connect_timeout_s`, `provider_read_timeout_s`:
WAYLINE_PROVIDER_CONNECT_TIMEOUT_S / WAYLINE_PROVIDER_READ_TIMEOUT_S), so a test
picks ones that prove its point on a loaded machine.

httpx's read timeout bounds each read, not the answer: a server that sends
a byte now and then (a stalled proxy, an overloaded instance) would hold the
request, and the provider's slot (Overpass has two for everyone), as long
as it likes. So the whole answer must also arrive within `whole_answer_s`
(connect + twice the read timeout), else it is an httpx.ReadTimeout like
any other, which every provider already reads as "unavailable".
"""

from __future__ import annotations

import asyncio
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


def whole_answer_s(timeout: Any) -> float | None:
    """How long a whole answer may take: connect, then twice the read timeout
    (a healthy answer's bytes follow its first ones at once); None without both."""
    if not isinstance(timeout, httpx.Timeout) or timeout.connect is None or timeout.read is None:
        return None
    return timeout.connect + 2 * timeout.read


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
        return await self.request("GET", url, **kwargs)

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        deadline = whole_answer_s(kwargs.get("timeout") or self._options.get("timeout"))
        if deadline is None:
            return await self.client.request(method, url, **kwargs)
        try:
            async with asyncio.timeout(deadline):
                return await self.client.request(method, url, **kwargs)
        except TimeoutError:
            raise httpx.ReadTimeout("the whole answer did not arrive in time") from None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
