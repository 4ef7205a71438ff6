-- Each account keeps its newest drafts only (app/planner/drafts.py, DRAFTS_PER_USER):
-- the bound is kept on every store, by this index.
CREATE INDEX planner_drafts_user ON planner_drafts(user_id, created_at);
