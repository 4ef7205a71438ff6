-- The trip agent: proactive suggestions, per-user dismissals and the
-- bookkeeping of chat tool approvals. The timeline itself (agent_messages)
-- lives in 0001.

-- An AI-proposed patch (one registry op from PATCH_OPS), computed against
-- trip_version. Approval claims it with UPDATE ... WHERE status = 'pending'
-- inside the transaction that applies the patch, so concurrent approvals are
-- first come, first served and a claim never outlives a failed apply.
CREATE TABLE agent_suggestions (
    id              TEXT PRIMARY KEY,
    trip_id         TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    message_id      TEXT,             -- the assistant message that announced it
    status          TEXT NOT NULL
        CHECK (status IN ('pending', 'applied', 'stale', 'expired')),
    severity        TEXT NOT NULL CHECK (severity IN ('low', 'medium', 'high')),
    confidence      REAL NOT NULL,
    reason          TEXT NOT NULL,
    suggestion_text TEXT NOT NULL,
    patch_json      TEXT NOT NULL,    -- {"op": ..., "args": {...}}
    trip_version    INTEGER NOT NULL,
    expires_at      TEXT,             -- ISO-8601 UTC; null never expires
    applied_by      TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX agent_suggestions_trip ON agent_suggestions(trip_id, status);

-- "approved: false": hides one suggestion's toast for one member only.
CREATE TABLE agent_suggestion_dismissals (
    suggestion_id TEXT NOT NULL REFERENCES agent_suggestions(id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    reason        TEXT,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (suggestion_id, user_id)
);

-- Every approval id the server issued for a chat write tool (an HMAC over
-- trip, turn, tool call, tool name and canonical input). A response is
-- accepted once: the row moves out of 'requested' in a single UPDATE, so a
-- replayed or concurrent second response is refused.
CREATE TABLE agent_approvals (
    id           TEXT PRIMARY KEY,    -- the approvalId
    trip_id      TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    turn_id      TEXT NOT NULL,       -- the assistant message id of the turn
    tool_call_id TEXT NOT NULL,
    tool_name    TEXT NOT NULL,
    input_json   TEXT NOT NULL,       -- canonical JSON of the input that was shown
    status       TEXT NOT NULL
        CHECK (status IN ('requested', 'approved', 'denied', 'applied', 'failed')),
    requested_by TEXT,
    decided_by   TEXT,
    created_at   TEXT NOT NULL,
    decided_at   TEXT
);
CREATE INDEX agent_approvals_trip ON agent_approvals(trip_id, turn_id);
