-- Personal access tokens for outside AI assistants over MCP (issue 24,
-- app/assistants/). Stored as the sha256 of the token, shown once. A token
-- is for one trip (trip_id) or every trip of its member (NULL); its scope is
-- 'read' or 'propose', and it never acts above the member's role, checked on
-- every call. A one-trip token ends with the membership (cascade from
-- members); every token ends with the account (app/accounts.py deletes them:
-- the users row stays as a placeholder) or when revoked (deleted).
CREATE TABLE access_tokens (
    id           TEXT PRIMARY KEY,
    token_hash   TEXT NOT NULL UNIQUE,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    trip_id      TEXT REFERENCES trips(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    scope        TEXT NOT NULL CHECK (scope IN ('read', 'propose')),
    created_at   TEXT NOT NULL,
    last_used_at TEXT,
    FOREIGN KEY (trip_id, user_id) REFERENCES members(trip_id, user_id) ON DELETE CASCADE
);
CREATE INDEX access_tokens_user ON access_tokens(user_id);
CREATE INDEX access_tokens_trip ON access_tokens(trip_id, user_id);

-- A suggestion an assistant filed for a member: the member (proposed_by),
-- the name it is shown under ("Claude via Alice", proposed_as) and the
-- review's verdict on the trip after it (review_json). The agent's own
-- suggestions leave all three NULL.
ALTER TABLE agent_suggestions ADD COLUMN proposed_by TEXT REFERENCES users(id) ON DELETE SET NULL;
ALTER TABLE agent_suggestions ADD COLUMN proposed_as TEXT;
ALTER TABLE agent_suggestions ADD COLUMN review_json TEXT;
CREATE INDEX agent_suggestions_proposed_by ON agent_suggestions(proposed_by);
