"""What a trip costs on the wire (issue 26): the TripDto compressed (brotli,
else gzip) once per version and shared by every reader of that version, and
an ETag made from the version, not from hashing the body."""

from __future__ import annotations

import gzip
import json

import brotli

from app.trips.dto import member_pieces
from app.web import compression
from helpers import add_sights, join, new_trip, op, signup, use


def _big_trip(client, days: int = 5, per_day: int = 8) -> dict:
    trip = new_trip(client, days=days)
    add_sights(client, trip, per_day)
    return trip


def _raw(client, path: str, accept: str | None, **headers: str) -> tuple[int, dict, bytes]:
    """The answer as it crossed the wire (not decoded)."""
    headers = {"Accept-Encoding": accept or "identity", **headers}
    with client.stream("GET", path, headers=headers) as r:
        return r.status_code, dict(r.headers), b"".join(r.iter_raw())


def test_a_large_trip_is_sent_compressed_at_under_a_quarter_of_its_size(client):
    signup(client)
    trip = _big_trip(client)
    path = f"/api/trips/{trip['id']}"
    _, plain_headers, plain = _raw(client, path, None)
    assert "content-encoding" not in plain_headers
    for accept, coding, decode in (("gzip, deflate, br", "br", brotli.decompress),
                                   ("gzip", "gzip", gzip.decompress),
                                   ("br;q=0, gzip", "gzip", gzip.decompress)):
        status, headers, packed = _raw(client, path, accept)
        assert status == 200 and headers["content-encoding"] == coding
        assert "accept-encoding" in headers["vary"].lower()
        assert decode(packed) == plain
        assert len(packed) * 4 <= len(plain), (coding, len(packed), len(plain))
    assert json.loads(plain)["data"]["id"] == trip["id"]


def test_a_trip_is_compressed_once_per_version_for_all_its_readers(client, monkeypatch):
    owner = signup(client)
    trip = _big_trip(client)
    path = f"/api/trips/{trip['id']}"
    friends = [signup(client), signup(client)]
    for friend in friends:
        join(client, owner, trip["id"], friend)
    made = []
    real = compression.compress
    monkeypatch.setattr(compression, "compress", lambda body, coding: made.append(coding) or real(body, coding))
    answers = set()
    for member in (*friends, *friends):
        use(client, member)
        answers.add(_raw(client, path, "br")[2])
    assert made == ["br"] and len(answers) == 1      # two editors, one compression, the same bytes
    use(client, owner)
    assert op(client, trip["id"], "update_trip", title="Lisbon again").status_code == 200
    for member in friends:
        use(client, member)
        _raw(client, path, "br")
    assert made == ["br", "br"]                      # a new version: compressed once more


def test_what_a_view_keeps_is_counted_and_no_reader_keeps_a_joined_copy(client):
    owner = signup(client)
    trip = _big_trip(client)
    path = f"/api/trips/{trip['id']}"
    trips = client.app.state.services.trips
    _raw(client, path, "br")
    state = trips.cached(trip["id"])
    view = state.view
    packed = sum(len(v) for v in view.derived.values() if isinstance(v, bytes))
    assert packed > 0 and state.size == view.size() >= view.length + packed
    counted = state.size
    _, _, body = _raw(client, path, None)      # a reader without compression: joined into its answer, not kept
    assert trips.cached(trip["id"]).view is view and state.size == counted == view.size()
    assert body == b'{"data":' + b"".join(member_pieces(view, owner["id"], "owner")) + b"}"


def test_small_answers_are_not_compressed(client):
    signup(client)
    trip = new_trip(client, days=1)
    status, headers, _ = _raw(client, f"/api/trips/{trip['id']}", "br, gzip")
    assert status == 200 and "content-encoding" not in headers


def test_the_etag_comes_from_the_version_and_answers_304_compressed_or_not(client):
    signup(client)
    trip = _big_trip(client, days=3, per_day=6)
    path = f"/api/trips/{trip['id']}"
    status, headers, body = _raw(client, path, "br")
    version = json.loads(brotli.decompress(body))["data"]["version"]
    etag = headers["etag"]
    assert etag.startswith(f'"{version}.')
    assert _raw(client, path, None)[1]["etag"] == etag           # the same bytes, however they travel
    assert _raw(client, path, "gzip", **{"If-None-Match": etag})[0] == 304
    assert op(client, trip["id"], "update_trip", title="Porto").status_code == 200
    status, headers, _ = _raw(client, path, None, **{"If-None-Match": etag})
    assert status == 200 and headers["etag"].startswith(f'"{version + 1}.')


def test_other_large_json_answers_are_gzip_when_accepted(client):
    status, headers, packed = _raw(client, "/api/openapi.json", "gzip")
    assert status == 200 and headers["content-encoding"] == "gzip" and len(packed) > 0
    status, headers, plain = _raw(client, "/api/openapi.json", None)
    assert "content-encoding" not in headers and gzip.decompress(packed) == plain and len(plain) > 4096
