-- The first answer to a write sent with an Idempotency-Key header (the IETF
-- httpapi draft), kept per user and key for a day: a repeat gets this answer
-- again and changes nothing (app/idempotency.py). `status` is NULL while the
-- first request runs; a NULL left by a process that stopped mid-request means
-- nobody knows whether that write was made.

CREATE TABLE idempotency_keys (
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,           -- sha256 of the method, path and body
    status       INTEGER,
    content_type TEXT,
    body         BLOB,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (user_id, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
