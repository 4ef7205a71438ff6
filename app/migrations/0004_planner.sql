-- Plan drafts and the copilot's answer cache (app/planner.py, app/copilot.py).

-- A draft is what the person previewed: exact registry ops plus the preview,
-- tied to the day's fingerprint when it was computed. Apply sends only the id;
-- the server applies edits_json as stored, or refuses when the day changed.
CREATE TABLE planner_drafts (
    id           TEXT PRIMARY KEY,           -- random, unguessable
    trip_id      TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    day_id       TEXT NOT NULL,
    user_id      TEXT NOT NULL,              -- who asked (for the logs; any editor may apply)
    kind         TEXT NOT NULL CHECK (kind IN ('eat', 'explore', 'plan')),
    fingerprint  TEXT NOT NULL,              -- app.review.day_fingerprint when computed
    edits_json   TEXT NOT NULL,              -- [{op, args}]
    preview_json TEXT NOT NULL,
    place_json   TEXT,                       -- a single food suggestion: Google's place, for the hours re-check
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    applied_at   TEXT
);
CREATE INDEX planner_drafts_trip ON planner_drafts(trip_id, created_at);

-- Copilot answers keyed by a hash of the day's facts + question + earlier
-- turns: the same question about the same day costs no model call.
CREATE TABLE copilot_cache (
    key         TEXT PRIMARY KEY,
    trip_id     TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    day_id      TEXT NOT NULL,
    answer_json TEXT NOT NULL,               -- {answer, recommendedFixIds}
    created_at  TEXT NOT NULL
);
CREATE INDEX copilot_cache_day ON copilot_cache(trip_id, day_id, created_at);
