"""python -m app: settings from the environment, then uvicorn."""

from __future__ import annotations

import logging

from .server import create_app
from .serving import run
from .settings import Settings


def main() -> None:
    settings = Settings.from_env()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for line in settings.key_report():
        print(line, flush=True)
    provider = {"google": "Google Places and Routes", "osm": "OpenStreetMap (Nominatim, Overpass, OSRM)"}
    print(f"places and routes: {provider[settings.places_provider]}", flush=True)
    run(create_app(settings), host=settings.host, port=settings.port, proxy_headers=True,
        forwarded_allow_ips="*" if settings.public_url else None, log_level="info")


if __name__ == "__main__":
    main()
