"""python -m app: settings from the environment, then uvicorn."""

from __future__ import annotations

import logging

import uvicorn

from .server import create_app
from .settings import Settings


def main() -> None:
    settings = Settings.from_env()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for line in settings.key_report():
        print(line, flush=True)
    # Forwarded headers are read by app/client_address.py, and only from
    # WAYLINE_TRUSTED_PROXIES: uvicorn must not rewrite the peer from them.
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, proxy_headers=False,
                log_level="info")


if __name__ == "__main__":
    main()
