-- Turn ids (docs/agent.md "Turn ids and debug info"). An agent turn is named
-- by the id of the member message that started it; the id stays the same
-- across approval continuations. Every model call of the turn records it, and
-- the provider's response id, so one id finds a turn's calls, log lines and
-- spans. Older rows have NULL.

ALTER TABLE ai_usage ADD COLUMN turn_id TEXT;
ALTER TABLE ai_usage ADD COLUMN response_id TEXT;
CREATE INDEX ai_usage_turn ON ai_usage(turn_id) WHERE turn_id IS NOT NULL;

-- The turn an agent's message answers (NULL for member messages and events).
ALTER TABLE agent_messages ADD COLUMN turn_id TEXT;

-- Per-account UI state that follows a member across devices. Not a
-- preference: never given to the model.
CREATE TABLE user_ui_state (
    user_id          TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    agent_panel_open INTEGER NOT NULL CHECK (agent_panel_open IN (0, 1)),
    updated_at       TEXT NOT NULL
);
