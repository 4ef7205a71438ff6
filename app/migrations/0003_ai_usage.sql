-- One row per model call, written BEFORE the provider is contacted (app/aiusage.py).
-- A running row reserves its max output tokens; finishing replaces the
-- reservation with the provider's real counts. A running row whose lease has
-- ended is closed as 'abandoned' by the next reservation.
-- user_id / trip_id are kept for the logs only (no foreign keys: usage
-- outlives deleted trips and accounts, and the daily counts must not change).

CREATE TABLE ai_usage (
    id                     TEXT PRIMARY KEY,
    day                    TEXT NOT NULL,           -- UTC YYYY-MM-DD of started_at
    started_at             TEXT NOT NULL,           -- ISO-8601 UTC
    lease_until            TEXT NOT NULL,           -- started_at + timeout + 30 s
    finished_at            TEXT,
    user_id                TEXT,
    trip_id                TEXT,
    feature                TEXT NOT NULL
        CHECK (feature IN ('copilot', 'plan_day', 'agent_chat', 'agent_eval', 'agent_ambient')),
    model                  TEXT NOT NULL,
    status                 TEXT NOT NULL
        CHECK (status IN ('running', 'completed', 'failed', 'abandoned')),
    input_tokens           INTEGER NOT NULL DEFAULT 0,
    output_tokens          INTEGER NOT NULL DEFAULT 0,
    reserved_output_tokens INTEGER NOT NULL DEFAULT 0,  -- still counted until real counts replace it
    cost_usd               REAL,                        -- null unless both prices are configured
    duration_ms            INTEGER
);
CREATE INDEX ai_usage_day ON ai_usage(day, feature, model);
CREATE INDEX ai_usage_running ON ai_usage(status, lease_until) WHERE status = 'running';
