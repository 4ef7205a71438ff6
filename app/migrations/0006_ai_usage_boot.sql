-- The process that reserved each call (app/aiusage.py). One process owns the
-- database, so at start every running row of another boot is a call of an
-- earlier process that can no longer finish: it is closed as 'abandoned' at
-- once instead of holding its slot until its lease ends. Rows from before this
-- column have NULL, which is never the current boot.

ALTER TABLE ai_usage ADD COLUMN boot_id TEXT;
