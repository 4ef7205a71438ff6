-- The trip agent's forecast watch (app/agent/watch.py): when a trip was last
-- checked in the background, and the ids of the material findings seen then
-- (or evaluated after a member's edit), so a pass asks the model only about
-- risks that are new since.
CREATE TABLE agent_watch (
    trip_id    TEXT PRIMARY KEY REFERENCES trips(id) ON DELETE CASCADE,
    checked_at TEXT,                       -- ISO-8601 UTC of the last pass; null: never
    seen_json  TEXT NOT NULL DEFAULT '[]'  -- JSON array of finding ids
);
