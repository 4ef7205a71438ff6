-- A deleted account (app/accounts.py) stays as a placeholder users row named
-- 'deleted:<id>'. A request that started before the deletion may still reach
-- its write after it: a sign-in whose password check passed, an invite being
-- accepted, a vote or comment. Those writes would give the placeholder a live
-- session, a membership ("Deleted member" joining a trip) or words in a trip.
-- The database refuses them here, whichever code path writes; the app answers
-- 401 `account_deleted` (app/errors.py, database_refusal).

CREATE TRIGGER sessions_need_a_live_account BEFORE INSERT ON sessions
WHEN (SELECT username FROM users WHERE id = NEW.user_id) GLOB 'deleted:*'
BEGIN SELECT RAISE(ABORT, 'account_deleted'); END;

CREATE TRIGGER members_need_a_live_account BEFORE INSERT ON members
WHEN (SELECT username FROM users WHERE id = NEW.user_id) GLOB 'deleted:*'
BEGIN SELECT RAISE(ABORT, 'account_deleted'); END;

CREATE TRIGGER votes_need_a_live_account BEFORE INSERT ON votes
WHEN (SELECT username FROM users WHERE id = NEW.user_id) GLOB 'deleted:*'
BEGIN SELECT RAISE(ABORT, 'account_deleted'); END;

CREATE TRIGGER comments_need_a_live_account BEFORE INSERT ON comments
WHEN (SELECT username FROM users WHERE id = NEW.user_id) GLOB 'deleted:*'
BEGIN SELECT RAISE(ABORT, 'account_deleted'); END;

CREATE TRIGGER agent_messages_need_a_live_account BEFORE INSERT ON agent_messages
WHEN (SELECT username FROM users WHERE id = NEW.actor_user_id) GLOB 'deleted:*'
BEGIN SELECT RAISE(ABORT, 'account_deleted'); END;

CREATE TRIGGER user_preferences_need_a_live_account BEFORE INSERT ON user_preferences
WHEN (SELECT username FROM users WHERE id = NEW.user_id) GLOB 'deleted:*'
BEGIN SELECT RAISE(ABORT, 'account_deleted'); END;

CREATE TRIGGER access_tokens_need_a_live_account BEFORE INSERT ON access_tokens
WHEN (SELECT username FROM users WHERE id = NEW.user_id) GLOB 'deleted:*'
BEGIN SELECT RAISE(ABORT, 'account_deleted'); END;
