-- Issue 26: each day of a trip's TripDto as encoded (every "mine" as 0, no
-- votes or comments on its stops), kept so the first read of a trip after a
-- restart joins stored bytes instead of computing every leg and encoding
-- every day again (app/trips/stored_days.py writes them, behind the writes).
--
-- `trip_bodies.version` is the trip's version the stored days are valid
-- for: they are read only while it equals `trips.version`, so any write
-- that moves the version without storing them again leaves them unused.
-- And whatever writes a day's rows (the app, or a manual fix made while it
-- is stopped, even one that leaves the version as it is) deletes that
-- day's stored bytes in the same statement (the triggers below); a new
-- start date or new shared preferences delete all of the trip's.
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

CREATE TRIGGER day_bodies_stop_inserted AFTER INSERT ON stops BEGIN
  DELETE FROM day_bodies WHERE day_id = NEW.day_id;
END;

CREATE TRIGGER day_bodies_stop_updated AFTER UPDATE ON stops BEGIN
  DELETE FROM day_bodies WHERE day_id IN (OLD.day_id, NEW.day_id);
END;

CREATE TRIGGER day_bodies_stop_deleted AFTER DELETE ON stops BEGIN
  DELETE FROM day_bodies WHERE day_id = OLD.day_id;
END;

CREATE TRIGGER day_bodies_day_updated AFTER UPDATE ON days BEGIN
  DELETE FROM day_bodies WHERE day_id IN (OLD.id, NEW.id);
END;

CREATE TRIGGER day_bodies_start_date AFTER UPDATE OF start_date ON trips
WHEN OLD.start_date IS NOT NEW.start_date BEGIN
  DELETE FROM day_bodies WHERE trip_id = NEW.id;
END;

CREATE TRIGGER day_bodies_prefs_inserted AFTER INSERT ON trip_preferences BEGIN
  DELETE FROM day_bodies WHERE trip_id = NEW.trip_id;
END;

CREATE TRIGGER day_bodies_prefs_updated AFTER UPDATE ON trip_preferences BEGIN
  DELETE FROM day_bodies WHERE trip_id IN (OLD.trip_id, NEW.trip_id);
END;

CREATE TRIGGER day_bodies_prefs_deleted AFTER DELETE ON trip_preferences BEGIN
  DELETE FROM day_bodies WHERE trip_id = OLD.trip_id;
END;
