-- Accounts, trips, collaboration and the trip timeline.
-- Ids are random text; timestamps ISO-8601 UTC text; money integer minor units.

CREATE TABLE app_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    display_name  TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at    TEXT NOT NULL
);

CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE trips (
    id          TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    dest_name   TEXT,
    dest_lat    REAL,
    dest_lng    REAL,
    start_date  TEXT NOT NULL,
    timezone    TEXT NOT NULL,
    currency    TEXT NOT NULL,
    version     INTEGER NOT NULL DEFAULT 1,
    created_by  TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE members (
    trip_id   TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    user_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role      TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    joined_at TEXT NOT NULL,
    PRIMARY KEY (trip_id, user_id)
);
CREATE INDEX members_user ON members(user_id);

CREATE TABLE invites (
    id          TEXT PRIMARY KEY,
    trip_id     TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    token_hash  TEXT NOT NULL UNIQUE,
    role        TEXT NOT NULL CHECK (role IN ('editor', 'viewer')),
    created_by  TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    revoked_at  TEXT
);
CREATE INDEX invites_trip ON invites(trip_id);

CREATE TABLE days (
    id         TEXT PRIMARY KEY,
    trip_id    TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    note       TEXT NOT NULL DEFAULT '',
    start_time TEXT
);
CREATE INDEX days_trip ON days(trip_id, position);

CREATE TABLE stops (
    id           TEXT PRIMARY KEY,
    trip_id      TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    day_id       TEXT NOT NULL REFERENCES days(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    name         TEXT NOT NULL,
    place_id     TEXT,
    lat          REAL,
    lng          REAL,
    address      TEXT,
    set_time     TEXT,
    duration_min INTEGER NOT NULL DEFAULT 60,
    meal         TEXT,
    note         TEXT NOT NULL DEFAULT '',
    created_by   TEXT,
    created_at   TEXT NOT NULL
);
CREATE INDEX stops_trip ON stops(trip_id, day_id, position);

CREATE TABLE expenses (
    id           TEXT PRIMARY KEY,
    trip_id      TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    title        TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    currency     TEXT NOT NULL,
    paid_by      TEXT NOT NULL,
    split_json   TEXT NOT NULL,
    day_id       TEXT,
    stop_id      TEXT,
    created_by   TEXT,
    created_at   TEXT NOT NULL
);
CREATE INDEX expenses_trip ON expenses(trip_id);

CREATE TABLE comments (
    id         TEXT PRIMARY KEY,
    trip_id    TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    stop_id    TEXT NOT NULL,
    user_id    TEXT,              -- null when the agent wrote it
    author     TEXT NOT NULL,     -- display name at the time
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX comments_stop ON comments(trip_id, stop_id, created_at);

CREATE TABLE votes (
    trip_id TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    stop_id TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    value   INTEGER NOT NULL CHECK (value IN (-1, 1)),
    PRIMARY KEY (stop_id, user_id)
);
CREATE INDEX votes_trip ON votes(trip_id);

CREATE TABLE media (
    id          TEXT PRIMARY KEY,
    trip_id     TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,    -- stored file name: <id>.<ext>, never the client's
    filename    TEXT NOT NULL,    -- the client's name, for display only
    media_type  TEXT NOT NULL,
    size        INTEGER NOT NULL,
    uploaded_by TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL,
    UNIQUE (trip_id, name)
);

-- One shared timeline per trip: chat, mentions, operation events, agent
-- replies and observations. seq orders it and drives polling.
CREATE TABLE agent_messages (
    id            TEXT PRIMARY KEY,
    trip_id       TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    parts_json    TEXT NOT NULL,
    actor_user_id TEXT,
    actor_name    TEXT,
    source        TEXT NOT NULL,
    stop_id       TEXT,
    op            TEXT,
    created_at    TEXT NOT NULL,
    UNIQUE (trip_id, seq)
);

-- Private defaults: food and usual travel choices. Never joined into trip data.
CREATE TABLE user_preferences (
    user_id    TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    prefs_json TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- The trip's shared choices (no food here, by design). Written by the
-- set_trip_preferences op like any other trip content.
CREATE TABLE trip_preferences (
    trip_id    TEXT PRIMARY KEY REFERENCES trips(id) ON DELETE CASCADE,
    prefs_json TEXT NOT NULL
);
