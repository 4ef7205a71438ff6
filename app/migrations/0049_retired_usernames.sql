-- Usernames of deleted accounts (app/accounts.py), kept as a SHA-256 of the
-- name rather than the name itself. A freed name may be taken again, except
-- one that WAYLINE_AI_ADMINS lists: the admin view is granted by username, so
-- whoever signed up next under a deleted admin's name would have had it
-- (app/auth.py, create_user).
CREATE TABLE retired_usernames (
  username_hash TEXT PRIMARY KEY,
  retired_at TEXT NOT NULL
) WITHOUT ROWID;
