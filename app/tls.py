"""The process's one TLS context for outbound calls (the providers' client
and the AI provider's SDK client).

Building a context reads the CA bundle: about 30 ms of CPU, paid by every
HTTP client made without one, so once per app (or per test) for each client.
An `ssl.SSLContext` is safe to share between clients and threads; both
clients speak HTTP/1.1 only, so the ALPN protocols they set on it agree.
It honours SSL_CERT_FILE / SSL_CERT_DIR as httpx does (it is httpx's own
default context, made once).
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()
