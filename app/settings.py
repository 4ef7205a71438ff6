"""The only module that reads the environment.

`Settings.from_env()` reads `os.environ` plus an optional `.env` file (the
environment wins). Nothing here runs at import time; tests build `Settings`
directly with `Settings(...)` or `Settings.from_env(env={...})`.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from collections.abc import Mapping
from urllib.parse import urlsplit

from .web.client_address import parse_networks

DEFAULT_MODEL = "gpt-6.1-sol"
PLACES_PROVIDERS = ("google", "osm")
# scrypt's cost (N) for new password hashes: 16 MiB of memory per hash makes
# offline guessing expensive. Lower only in tests, behind a flag (see Settings).
PASSWORD_HASH_N = 2**14
# Nominatim's usage policy: at most one request a second (app/providers/osm.py paces them).
NOMINATIM_INTERVAL_S = 1.0
MAX_DAYS_CEILING = 366   # the most WAYLINE_DAYS_PER_TRIP may allow (the trip schema's bound)


def _read_dotenv(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return values
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if line.startswith("export "):
            line = line[len("export ") :]
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key.strip()] = value
    return values


REASONING_SUMMARIES = ("auto", "concise", "detailed")


def _reasoning_summary(raw: str | None) -> str | None:
    if raw is None or raw.lower() in ("off", "none", "0", "false"):
        return None
    if raw.lower() not in REASONING_SUMMARIES:
        raise SystemExit(f"OPENAI_REASONING_SUMMARY must be off, auto, concise or detailed, got {raw!r}")
    return raw.lower()


def _traces_endpoint(traces: str | None, base: str | None) -> str | None:
    """The OTLP/HTTP traces URL: the signal's own variable, else the base + /v1/traces (as the SDK does)."""
    if traces:
        return traces
    return base.rstrip("/") + "/v1/traces" if base else None


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Settings:
    db_path: str = "data/wayline.db"
    uploads_dir: str = "data/uploads"
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str | None = None
    secret: str | None = None
    trip_cache_mb: int = 64   # memory for trips and their TripDto (least recently used go first)
    # Peers (IPs or CIDRs) whose forwarded headers name the client (app/web/client_address.py).
    trusted_proxies: tuple[str, ...] = field(default_factory=tuple)
    # Believe a trusted proxy's Fly-Client-IP: only on Fly (FLY_APP_NAME is set
    # in every Fly machine), whose proxy always sets it. Elsewhere a proxy that
    # does not set it passes a client's own copy through.
    fly_client_ip: bool = False
    # Quotas (app/quotas.py): what one address, account or trip may take.
    signups_per_address_hour: int = 10
    trips_per_user: int = 50
    days_per_trip: int = 30
    upload_mb_per_trip: int = 200
    upload_mb_per_user: int = 100
    kept_answers_mb_per_user: int = 32
    writes_per_user_minute: int = 120
    writes_per_user_hour: int = 1500
    place_lookups_per_user_minute: int = 30
    place_lookups_per_user_hour: int = 300

    openai_api_key: str | None = None
    openai_model: str = DEFAULT_MODEL
    openai_base_url: str | None = None
    ai_daily_limit: int = 100
    ai_concurrent: int = 3
    ai_daily_tokens: int = 400_000
    ai_max_output_tokens: int = 3000
    ai_timeout_ms: int = 45_000
    ai_price_input_per_mtok: float | None = None
    ai_price_output_per_mtok: float | None = None
    ai_admins: tuple[str, ...] = field(default_factory=tuple)
    # Each user's fair share of every daily limit (calls and tokens), 0 < share <= 1.
    ai_user_daily_share: float = 0.25
    ai_proactive_threshold: float = 0.7
    ai_max_tool_steps: int = 16
    # Reasoning summaries for the agent chat: off, or auto / concise / detailed. Only
    # reasoning models accept it (others answer 400), hence off by default.
    openai_reasoning_summary: str | None = None

    google_maps_api_key: str | None = None
    google_maps_browser_key: str | None = None
    google_places_base_url: str = "https://places.googleapis.com"
    google_routes_base_url: str = "https://routes.googleapis.com"
    google_maps_base_url: str = "https://maps.googleapis.com"   # Street View Static API
    weather_base_url: str = "https://api.open-meteo.com"
    # How long a provider call (Google, OpenStreetMap, Open-Meteo, Street View) may take to
    # connect, and to get each next piece of its answer, before the provider counts as
    # unavailable for now (app/providers/outbound.py). Short: a page waits on these calls.
    provider_connect_timeout_s: float = 3.0
    provider_read_timeout_s: float = 8.0
    # OpenTelemetry (optional extra): where spans go; None = no spans at all.
    otel_traces_endpoint: str | None = None
    # WAYLINE_PLACES_PROVIDER as given; None: Google with a key, else OSM (see places_provider).
    places_provider_choice: str | None = None
    nominatim_url: str = "https://nominatim.openstreetmap.org"
    overpass_url: str = "https://overpass-api.de/api/interpreter"
    osrm_url: str = "https://routing.openstreetmap.de/routed-{profile}"  # profile: foot, bike or car
    contact: str | None = None  # who to reach about our traffic (User-Agent); public OSM servers ask for it
    # The day map's tiles (Leaflet URL template) and the attribution they require.
    map_tiles_url: str = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    map_attribution: str = '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors'

    # Replication (app/replica.py, docs/deploy.md): with a replica URL the image
    # streams the database to that bucket with Litestream and uploads go there
    # too (app/filestore/); None keeps everything on the local volume.
    replica_url: str | None = None          # s3://bucket/path
    replica_endpoint: str | None = None     # S3-compatible stores (Fly's Tigris, MinIO, a test stand-in)
    aws_access_key_id: str | None = None
    aws_secret_access_key: str | None = None
    aws_region: str = "auto"                # Tigris takes "auto"; AWS wants the bucket's region
    # Trips homed on several machines (app/web/trip_homes.py, docs/scaling.md): the
    # Fly machine ids that share the trips, and this machine's id. Empty: off.
    trip_machines: tuple[str, ...] = field(default_factory=tuple)
    machine_id: str | None = None

    # Test-only: neither is read from the environment, so no deployment can
    # weaken its password hashes; a cost below PASSWORD_HASH_N needs the flag.
    password_hash_n: int = PASSWORD_HASH_N
    allow_weak_password_hash_for_tests: bool = False
    # Test-only, not read from the environment either: the pause between two
    # Nominatim requests (app/providers/osm.py). The public server's usage
    # policy allows one a second, and nothing shorter is taken for any real
    # server; a test's stand-in on loopback may be asked faster.
    nominatim_interval_s: float = NOMINATIM_INTERVAL_S

    def __post_init__(self) -> None:
        if self.password_hash_n < PASSWORD_HASH_N and not self.allow_weak_password_hash_for_tests:
            raise ValueError(f"password_hash_n below {PASSWORD_HASH_N} is for tests only "
                             "(set allow_weak_password_hash_for_tests)")
        if self.nominatim_interval_s < NOMINATIM_INTERVAL_S and not _loopback(self.nominatim_url):
            raise ValueError(f"a Nominatim server is asked at most one request every {NOMINATIM_INTERVAL_S:g} s, "
                             f"not {self.nominatim_interval_s:g} (only a stand-in on loopback may go faster)")

    @property
    def ai_enabled(self) -> bool:
        return bool(self.openai_api_key)

    @property
    def places_provider(self) -> str:
        """Who answers place search, details and routes: "google" or "osm"."""
        if self.places_provider_choice:
            return self.places_provider_choice
        return "google" if self.google_maps_api_key else "osm"

    @property
    def replica(self) -> ReplicaLocation | None:
        """Where the database and uploads are replicated, when configured."""
        return ReplicaLocation.parse(self.replica_url) if self.replica_url else None

    @property
    def secure_cookies(self) -> bool:
        return bool(self.public_url and self.public_url.lower().startswith("https://"))

    def with_(self, **changes) -> Settings:
        return replace(self, **changes)

    def is_ai_admin(self, username: str) -> bool:
        """Whether WAYLINE_AI_ADMINS names this username (case and spaces aside)."""
        return username.strip().lower() in {name.strip().lower() for name in self.ai_admins}

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, dotenv: str | Path | None = ".env") -> Settings:
        values: dict[str, str] = {}
        if dotenv is not None:
            values.update(_read_dotenv(Path(dotenv)))
        values.update(os.environ if env is None else env)

        def text(name: str) -> str | None:
            value = values.get(name, "").strip()
            return value or None

        def number(name: str, kind, default):
            raw = text(name)
            if raw is None:
                return default
            try:
                return kind(raw)
            except ValueError:
                raise SystemExit(f"{name} must be a number, got {raw!r}") from None

        provider = (text("WAYLINE_PLACES_PROVIDER") or "").lower() or None
        if provider is not None and provider not in PLACES_PROVIDERS:
            raise SystemExit(f"WAYLINE_PLACES_PROVIDER must be google or osm, "
                             f"got {values['WAYLINE_PLACES_PROVIDER'].strip()!r}")
        if provider == "google" and not text("GOOGLE_MAPS_API_KEY"):
            raise SystemExit("WAYLINE_PLACES_PROVIDER=google needs GOOGLE_MAPS_API_KEY "
                             "(or leave it unset to use OpenStreetMap)")
        osrm_url = (text("WAYLINE_OSRM_URL") or "").rstrip("/") or None
        if osrm_url is not None and "{profile}" not in osrm_url:
            raise SystemExit("WAYLINE_OSRM_URL must contain {profile} (replaced by foot, bike or car), "
                             f"got {osrm_url!r}")
        timeouts = {name: number(name, float, default) for name, default in (
            ("WAYLINE_PROVIDER_CONNECT_TIMEOUT_S", cls.provider_connect_timeout_s),
            ("WAYLINE_PROVIDER_READ_TIMEOUT_S", cls.provider_read_timeout_s))}
        for name, seconds in timeouts.items():
            if not (seconds > 0 and math.isfinite(seconds)):
                raise SystemExit(f"{name} must be a number of seconds above 0, got {seconds}")
        trip_cache_mb = number("WAYLINE_TRIP_CACHE_MB", int, cls.trip_cache_mb)
        if trip_cache_mb < 1:
            raise SystemExit(f"WAYLINE_TRIP_CACHE_MB must be at least 1, got {trip_cache_mb}")
        def at_least_one(name: str, default: int, most: int | None = None) -> int:
            value = number(name, int, default)
            if value < 1 or (most is not None and value > most):
                raise SystemExit(f"{name} must be from 1 to {most}, got {value}" if most else
                                 f"{name} must be at least 1, got {value}")
            return value

        ai_share = number("WAYLINE_AI_USER_DAILY_SHARE", float, cls.ai_user_daily_share)
        if not 0 < ai_share <= 1:
            raise SystemExit(f"WAYLINE_AI_USER_DAILY_SHARE must be above 0 and at most 1, got {ai_share}")
        try:
            trusted_proxies = parse_networks(text("WAYLINE_TRUSTED_PROXIES"))
        except ValueError as exc:
            raise SystemExit(f"WAYLINE_TRUSTED_PROXIES: {exc}") from None

        replica_url = text("WAYLINE_REPLICA_URL")
        if replica_url is not None:
            try:
                ReplicaLocation.parse(replica_url)
            except ValueError as exc:
                raise SystemExit(f"WAYLINE_REPLICA_URL: {exc}") from None
        machine_id = text("FLY_MACHINE_ID")
        trip_machines = tuple(m.strip() for m in (text("WAYLINE_TRIP_MACHINES") or "").split(",") if m.strip())
        if trip_machines and machine_id not in trip_machines:
            raise SystemExit("WAYLINE_TRIP_MACHINES must list this machine's FLY_MACHINE_ID "
                             f"({machine_id or 'unset'}), got {', '.join(trip_machines)}")

        port = number("PORT", int, cls.port)
        if not 1 <= port <= 65535:
            # uvicorn would only fail at bind with a traceback ("port must be 0-65535").
            raise SystemExit(f"PORT must be a port number from 1 to 65535, got {port}")

        d = cls()
        return cls(
            db_path=text("WAYLINE_DB") or d.db_path,
            uploads_dir=text("WAYLINE_UPLOADS") or d.uploads_dir,
            host=text("HOST") or d.host,
            port=port,
            public_url=text("WAYLINE_PUBLIC_URL"),
            secret=text("WAYLINE_SECRET"),
            trip_cache_mb=trip_cache_mb,
            trusted_proxies=trusted_proxies,
            fly_client_ip=bool(text("FLY_APP_NAME")),
            signups_per_address_hour=at_least_one("WAYLINE_SIGNUPS_PER_ADDRESS_HOUR", d.signups_per_address_hour),
            trips_per_user=at_least_one("WAYLINE_TRIPS_PER_USER", d.trips_per_user),
            days_per_trip=at_least_one("WAYLINE_DAYS_PER_TRIP", d.days_per_trip, MAX_DAYS_CEILING),
            upload_mb_per_trip=at_least_one("WAYLINE_UPLOAD_MB_PER_TRIP", d.upload_mb_per_trip),
            upload_mb_per_user=at_least_one("WAYLINE_UPLOAD_MB_PER_USER", d.upload_mb_per_user),
            kept_answers_mb_per_user=at_least_one("WAYLINE_KEPT_ANSWERS_MB_PER_USER", d.kept_answers_mb_per_user),
            writes_per_user_minute=at_least_one("WAYLINE_WRITES_PER_USER_MINUTE", d.writes_per_user_minute),
            writes_per_user_hour=at_least_one("WAYLINE_WRITES_PER_USER_HOUR", d.writes_per_user_hour),
            place_lookups_per_user_minute=at_least_one("WAYLINE_PLACE_LOOKUPS_PER_USER_MINUTE",
                                                       d.place_lookups_per_user_minute),
            place_lookups_per_user_hour=at_least_one("WAYLINE_PLACE_LOOKUPS_PER_USER_HOUR",
                                                     d.place_lookups_per_user_hour),
            openai_api_key=text("OPENAI_API_KEY"),
            openai_model=text("OPENAI_MODEL") or d.openai_model,
            openai_base_url=text("OPENAI_BASE_URL"),
            ai_daily_limit=number("WAYLINE_AI_DAILY_LIMIT", int, d.ai_daily_limit),
            ai_concurrent=number("WAYLINE_AI_CONCURRENT", int, d.ai_concurrent),
            ai_daily_tokens=number("WAYLINE_AI_DAILY_TOKENS", int, d.ai_daily_tokens),
            ai_max_output_tokens=number("WAYLINE_AI_MAX_OUTPUT_TOKENS", int, d.ai_max_output_tokens),
            ai_timeout_ms=number("WAYLINE_AI_TIMEOUT_MS", int, d.ai_timeout_ms),
            ai_price_input_per_mtok=number("WAYLINE_AI_PRICE_INPUT_PER_MTOK", float, None),
            ai_price_output_per_mtok=number("WAYLINE_AI_PRICE_OUTPUT_PER_MTOK", float, None),
            ai_admins=tuple(u.strip() for u in (text("WAYLINE_AI_ADMINS") or "").split(",") if u.strip()),
            ai_user_daily_share=ai_share,
            ai_proactive_threshold=number("AI_PROACTIVE_THRESHOLD", float, d.ai_proactive_threshold),
            ai_max_tool_steps=number("AI_MAX_TOOL_STEPS", int, d.ai_max_tool_steps),
            openai_reasoning_summary=_reasoning_summary(text("OPENAI_REASONING_SUMMARY")),
            google_maps_api_key=text("GOOGLE_MAPS_API_KEY"),
            google_maps_browser_key=text("GOOGLE_MAPS_BROWSER_KEY"),
            google_places_base_url=(text("GOOGLE_PLACES_BASE_URL") or d.google_places_base_url).rstrip("/"),
            google_routes_base_url=(text("GOOGLE_ROUTES_BASE_URL") or d.google_routes_base_url).rstrip("/"),
            google_maps_base_url=(text("GOOGLE_MAPS_BASE_URL") or d.google_maps_base_url).rstrip("/"),
            weather_base_url=(text("WEATHER_BASE_URL") or d.weather_base_url).rstrip("/"),
            provider_connect_timeout_s=timeouts["WAYLINE_PROVIDER_CONNECT_TIMEOUT_S"],
            provider_read_timeout_s=timeouts["WAYLINE_PROVIDER_READ_TIMEOUT_S"],
            otel_traces_endpoint=_traces_endpoint(text("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
                                                  text("OTEL_EXPORTER_OTLP_ENDPOINT")),
            places_provider_choice=provider,
            nominatim_url=(text("WAYLINE_NOMINATIM_URL") or d.nominatim_url).rstrip("/"),
            overpass_url=(text("WAYLINE_OVERPASS_URL") or d.overpass_url).rstrip("/"),
            osrm_url=osrm_url or d.osrm_url,
            contact=text("WAYLINE_CONTACT"),
            map_tiles_url=text("WAYLINE_MAP_TILES_URL") or d.map_tiles_url,
            map_attribution=text("WAYLINE_MAP_ATTRIBUTION") or d.map_attribution,
            replica_url=replica_url,
            # `fly storage create` (Tigris) sets AWS_ENDPOINT_URL_S3, the AWS SDKs' own variable.
            replica_endpoint=(text("WAYLINE_REPLICA_ENDPOINT") or text("AWS_ENDPOINT_URL_S3") or "").rstrip("/")
            or None,
            aws_access_key_id=text("AWS_ACCESS_KEY_ID"),
            aws_secret_access_key=text("AWS_SECRET_ACCESS_KEY"),
            aws_region=text("AWS_REGION") or text("AWS_DEFAULT_REGION") or d.aws_region,
            trip_machines=trip_machines,
            machine_id=machine_id,
        )

    def key_report(self) -> list[str]:
        """One line per secret, never its value: set, or what the server does
        without it (each is optional: none of these lines is a fault)."""
        without = {
            "OPENAI_API_KEY": (self.openai_api_key, "not set: the AI features are off"),
            "GOOGLE_MAPS_API_KEY": (self.google_maps_api_key, "not set: OpenStreetMap answers places and routes"),
            "GOOGLE_MAPS_BROWSER_KEY": (self.google_maps_browser_key, "not set: the page's map uses map tiles"),
            "WAYLINE_SECRET": (self.secret, "generated on first start and kept in the database (fine as it is)"),
        }
        if self.replica_url:   # needed then: their absence is a fault
            needed = "missing: WAYLINE_REPLICA_URL is set and the replica needs it"
            without["AWS_ACCESS_KEY_ID"] = (self.aws_access_key_id, needed)
            without["AWS_SECRET_ACCESS_KEY"] = (self.aws_secret_access_key, needed)
        return [f"{name}: {'set' if value else otherwise}" for name, (value, otherwise) in without.items()]

    def child_environment(self) -> dict[str, str]:
        """The environment for a child process (Litestream): ours, plus the
        replica's keys when they came from `.env` rather than the environment."""
        env = dict(os.environ)
        for name, value in (("AWS_ACCESS_KEY_ID", self.aws_access_key_id),
                            ("AWS_SECRET_ACCESS_KEY", self.aws_secret_access_key)):
            if value:
                env[name] = value
        return env


@dataclass(frozen=True)
class ReplicaLocation:
    """`s3://bucket/path`: the database replica lives under `path/db`, the
    uploads under `path/uploads/`, so one bucket (and one set of keys) holds a
    whole deployment and the two never share a key."""
    bucket: str
    prefix: str   # "" or "some/path" (no leading or trailing slash)

    @classmethod
    def parse(cls, url: str) -> ReplicaLocation:
        scheme, sep, rest = url.partition("://")
        if scheme != "s3" or not sep:
            raise ValueError(f"must look like s3://bucket/path, got {url!r}")
        bucket, _, prefix = rest.partition("/")
        if not re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", bucket):
            raise ValueError(f"{bucket!r} is not an S3 bucket name")
        prefix = prefix.strip("/")
        if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
            raise ValueError(f"the path {prefix!r} has an empty, . or .. segment")
        return cls(bucket, prefix)

    def _key(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    @property
    def db_path(self) -> str:
        """The Litestream replica's path in the bucket."""
        return self._key("db")

    @property
    def uploads_prefix(self) -> str:
        return self._key("uploads") + "/"

    @property
    def db_url(self) -> str:
        return f"s3://{self.bucket}/{self.db_path}"

