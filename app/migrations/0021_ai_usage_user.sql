-- Each member's share of the daily AI limits (WAYLINE_AI_USER_DAILY_SHARE) is
-- counted in the reservation's BEGIN IMMEDIATE transaction, by user and day.
CREATE INDEX ai_usage_user_day ON ai_usage(user_id, day);
