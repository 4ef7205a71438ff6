-- Issue 20: a suggestion knows the finding its patch fixes, and becomes
-- 'resolved' when that finding is gone (fixed by hand, the stop deleted).
-- The patch may now be several edits: {"edits": [{op, args}, ...]} (with
-- "op"/"args" kept for one edit), in the same patch_json column.

-- {id, kind, dayId, stopIds}: the finding the patch clears; NULL when none
-- is known (the model's own edit, an outside assistant's plain proposal).
ALTER TABLE agent_suggestions ADD COLUMN finding_json TEXT;

-- The status may now be 'resolved'. SQLite cannot alter a CHECK constraint,
-- and rebuilding the table would lose columns later migrations add to it
-- (0026 runs before this one on a database made since it landed), so the
-- constraint's text is widened in place, as SQLite documents for a change
-- that no stored row can violate (lang_altertable.html, "Making Other Kinds
-- Of Table Schema Changes"): writable_schema, then RESET to reload it, and a
-- real schema change so that every other connection reloads it too.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, 'CHECK (status IN (''pending'', ''applied'', ''stale'', ''expired''))',
                          'CHECK (status IN (''pending'', ''applied'', ''stale'', ''expired'', ''resolved''))')
 WHERE type = 'table' AND name = 'agent_suggestions';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_reload (x);
DROP TABLE schema_reload;
