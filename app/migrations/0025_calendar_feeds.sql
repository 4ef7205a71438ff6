-- A member's private calendar subscription for one trip (issue 24). The URL
-- carries the secret (calendar apps fetch without cookies), so only its
-- sha256 is stored; the token is shown once. One feed per member and trip: a
-- new link replaces the old one. The feed ends with the membership (the
-- members row's delete cascades here: leaving, removal, account deletion).
CREATE TABLE calendar_feeds (
    token_hash   TEXT PRIMARY KEY,
    trip_id      TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    last_used_at TEXT,
    UNIQUE (trip_id, user_id),
    FOREIGN KEY (trip_id, user_id) REFERENCES members(trip_id, user_id) ON DELETE CASCADE
);
