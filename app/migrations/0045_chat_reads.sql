-- How far each member has read a trip's group chat (the page's unread
-- count, kept across reloads and devices). UI state, not trip content: no
-- page is told when it changes, and it goes with the membership.

CREATE TABLE chat_reads (
    trip_id    TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (trip_id, user_id),
    FOREIGN KEY (trip_id, user_id) REFERENCES members(trip_id, user_id) ON DELETE CASCADE
) WITHOUT ROWID;
