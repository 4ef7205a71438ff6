-- Answers from Google (Places, Routes) and Open-Meteo, kept so that a repeated
-- request costs no provider call. One row per request: the key is a hash of
-- what was asked (endpoint, field mask, body), never of a key or secret.
-- expires_at is Unix seconds on the services clock; expired rows are ignored
-- on read and pruned now and then on write.
CREATE TABLE provider_cache (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,      -- JSON
    expires_at REAL NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX provider_cache_expiry ON provider_cache(expires_at);
