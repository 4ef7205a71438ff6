-- What each account's Idempotency-Key answers keep, by the hour they were
-- stored (app/idempotency.py). The quota on kept bytes (app/quotas.py) reads
-- an account's last 25 hours here instead of summing every answer it keeps
-- on each keyed write: that sum made a keyed write cost as much as the keys
-- already kept (0.18 of a plain write in bench/keyed_write.py).

CREATE TABLE idempotency_kept_bytes (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    hour    TEXT NOT NULL,          -- the UTC hour, 'YYYY-MM-DDTHH'
    bytes   INTEGER NOT NULL,
    PRIMARY KEY (user_id, hour)
) WITHOUT ROWID;
CREATE INDEX idempotency_kept_bytes_hour ON idempotency_kept_bytes(hour);

-- The answers kept already (128: app/quotas.py KEPT_ROW_BYTES, a row's own bytes).
INSERT INTO idempotency_kept_bytes (user_id, hour, bytes)
SELECT user_id, substr(created_at, 1, 13), SUM(COALESCE(LENGTH(body), 0) + LENGTH(key) + 128)
FROM idempotency_keys WHERE status IS NOT NULL GROUP BY user_id, substr(created_at, 1, 13);
