-- Issue 26: each day of a trip's TripDto as encoded (every "mine" as 0, no
-- votes or comments on its stops), kept so the first read of a trip after a
-- restart joins stored bytes instead of computing every leg and encoding
-- every day again (app/trips/stored_days.py writes them, behind the writes).
--
-- `trip_bodies.version` is the trip's version the stored days are valid
-- for: they are read only while it equals `trips.version`, so any write
-- that moves the version without storing them again leaves them unused.
-- `legs_until`: the clock time after which the day's legs would be asked
-- again (an outage's estimate, a cached route's age): the day is built then.
CREATE TABLE trip_bodies (
  trip_id TEXT PRIMARY KEY REFERENCES trips(id) ON DELETE CASCADE,
  version INTEGER NOT NULL
);

CREATE TABLE day_bodies (
  day_id TEXT PRIMARY KEY REFERENCES days(id) ON DELETE CASCADE,
  trip_id TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE,
  body BLOB NOT NULL,
  legs_until REAL NOT NULL
);

CREATE INDEX day_bodies_trip ON day_bodies(trip_id);
