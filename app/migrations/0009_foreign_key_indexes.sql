-- Every foreign key gets an index (spec/test_migrations.py checks that none
-- lacks one). Without it, deleting or updating a parent row makes SQLite scan
-- the whole child table: ON DELETE CASCADE and the foreign-key check both look
-- children up by this column. stops.day_id is the one that hurt: deleting a
-- day (or a trip, which deletes its days) scanned every stop of every trip.
CREATE INDEX stops_day ON stops(day_id);
CREATE INDEX votes_user ON votes(user_id);
CREATE INDEX agent_suggestion_dismissals_user ON agent_suggestion_dismissals(user_id);
CREATE INDEX trips_created_by ON trips(created_by);
CREATE INDEX invites_created_by ON invites(created_by);
CREATE INDEX media_uploaded_by ON media(uploaded_by);
