-- Who joined through which invite link (the owner's list of links shows
-- them), and who an owner removed from a trip: a removed member cannot
-- rejoin with a link made before the removal, used or not (issue 22).
-- Leaving a trip by yourself is not a removal.

CREATE TABLE invite_uses (
    invite_id TEXT NOT NULL REFERENCES invites(id) ON DELETE CASCADE,
    user_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    used_at   TEXT NOT NULL,
    PRIMARY KEY (invite_id, user_id)
) WITHOUT ROWID;
CREATE INDEX invite_uses_user ON invite_uses(user_id);

CREATE TABLE trip_removals (
    trip_id    TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    removed_at TEXT NOT NULL,
    PRIMARY KEY (trip_id, user_id)
) WITHOUT ROWID;
CREATE INDEX trip_removals_user ON trip_removals(user_id);
