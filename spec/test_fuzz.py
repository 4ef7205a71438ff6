"""Property-based tests over the OpenAPI document (issue 12): schemathesis
generates valid and invalid requests for every operation `GET
/api/openapi.json` describes; none may answer a 500, signed in as a member
of a real trip (its ids fill the path parameters) or anonymous.

Bounded so the suite stays fast: WAYLINE_FUZZ_EXAMPLES examples per
operation and generation mode (default 4; half that anonymous), derandomized so a run is
repeatable; raise the number for a deeper run."""

from __future__ import annotations

import os

import pytest

from app.auth import SignInLimiter
from helpers import join, new_trip, op, signup, use
from standins.openai_standin import Reply
from test_agent_support import agent_client

EXAMPLES = int(os.environ.get("WAYLINE_FUZZ_EXAMPLES", "4"))
# Last, so that what they end (the trip, the session) ends after everything else ran.
DESTRUCTIVE = ("DELETE /api/trips/{tripId}", "POST /api/auth/signout", "DELETE /api/users/me")
# A live stream never ends by itself, so a request to it would never return
# here: its bad input (ids, Last-Event-ID) is covered by spec/test_live.py.
NEVER_ENDS = ("GET /api/trips/{tripId}/live",)


# schemathesis and hypothesis are imported where they are used: every xdist
# worker imports every test module, and they cost seconds to import (the
# worker that runs these tests pays it once).


def ordered_operations(doc: dict) -> list:
    import schemathesis

    operations = [result.ok() for result in schemathesis.openapi.from_dict(doc).get_all_operations()]
    assert set(NEVER_ENDS) <= {f"{o.method.upper()} {o.path}" for o in operations}
    operations = [o for o in operations if f"{o.method.upper()} {o.path}" not in NEVER_ENDS]
    return sorted(operations, key=lambda o: f"{o.method.upper()} {o.path}" in DESTRUCTIVE)


def send(client, case):
    kwargs = case.as_transport_kwargs(base_url=str(client.base_url))
    kwargs.pop("cookies", None)   # the client's own cookie jar is the session
    data = kwargs.pop("data", None)
    if isinstance(data, (bytes, str)):   # requests' raw body is httpx's content
        kwargs["content"] = data
    elif data is not None:
        kwargs["data"] = data
    return client.request(**kwargs)


def fuzz(client, operation, path_parameters: dict[str, str], examples: int) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode

    known = {name: value for name, value in path_parameters.items() if "{" + name + "}" in operation.path}
    # Invalid requests need something to get wrong besides the path: its
    # parameters are non-empty strings, and an empty path segment is not a
    # request to this operation. Hypothesis would spend about 460 rejected
    # draws (1-1.6 CPU-seconds) proving that for each of the ~37 path-only
    # operations, most of these tests' time.
    invalid_possible = bool(len(operation.body) or len(operation.query) or len(operation.headers)
                            or len(operation.cookies))
    modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if invalid_possible else (GenerationMode.POSITIVE,)
    for mode in modes:
        strategy = operation.as_strategy(mode, path_parameters=known or None)

        @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(case=strategy)
        def no_server_error(case):
            r = send(client, case)
            # 502/503 are deliberate (a model answer refused, a limit or provider unavailable); 500 is a bug.
            assert r.status_code != 500, (case.method, case.formatted_path, r.text[:300])
            assert "traceback" not in r.text.lower()

        try:
            no_server_error()
        except Unsatisfiable:
            # Nothing of this operation can be made invalid (e.g. its only query parameter is an optional string).
            assert mode is GenerationMode.NEGATIVE, operation.path


@pytest.fixture
def world(settings, openai_standin):
    openai_standin.responder = lambda request: Reply(output=[{
        "type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "Fine.", "annotations": []}]}])
    # Fuzzed wrong passwords must not lock the member out of the rest of the run.
    lenient = SignInLimiter(pair_limit=10**6, address_limit=10**6, slow_after=10**6)
    with agent_client(settings, openai_standin, limiter=lenient) as client:
        alice = signup(client, "alice")
        trip = new_trip(client, days=2)
        day = trip["days"][0]["id"]
        r = op(client, trip["id"], "insert_stop", dayId=day, name="Museum")
        stop = r.json()["data"]["trip"]["days"][0]["stops"][0]["id"]
        bob = signup(client, "bob")
        join(client, alice, trip["id"], bob)
        use(client, alice)
        invite = client.post(f"/api/trips/{trip['id']}/invites", json={"role": "viewer"}).json()["data"]
        upload = client.post(f"/api/trips/{trip['id']}/media", files={"file": ("a.txt", b"notes", "text/plain")})
        ids = {"tripId": trip["id"], "dayId": day, "stopId": stop, "userId": bob["id"], "inviteId": invite["id"],
               "token": invite["token"], "name": upload.json()["data"]["url"].rsplit("/", 1)[-1]}
        yield client, alice, ids


# Each fuzz test computes for several CPU-seconds (hypothesis drawing cases for ~85 operations): on a
# two-core machine running several suites that can be minutes, past pyproject's hang guard.
FUZZ_TIMEOUT_S = 900


@pytest.mark.timeout(FUZZ_TIMEOUT_S)
def test_no_route_answers_500_to_a_member(world):
    client, alice, ids = world
    doc = client.get("/api/openapi.json").json()
    operations = ordered_operations(doc)
    assert len(operations) > 50
    for operation in operations:
        use(client, alice)
        if client.get("/api/auth/me").json()["data"]["user"] is None:   # a fuzzed sign-out ended the session
            r = client.post("/api/auth/signin", json={"username": "alice", "password": "correct horse"})
            assert r.status_code == 200, r.text
            alice = {**alice, "token": r.cookies["wayline_session"]}
        fuzz(client, operation, ids, EXAMPLES)
    use(client, alice)
    trip = client.get(f"/api/trips/{ids['tripId']}")
    assert trip.status_code in (200, 404)   # the fuzzed DELETE may have deleted it, last


@pytest.mark.timeout(FUZZ_TIMEOUT_S)
def test_no_route_answers_500_to_anyone(world):
    client, _, ids = world
    client.cookies.clear()
    doc = client.get("/api/openapi.json").json()
    for operation in ordered_operations(doc):   # path parameters generated too
        fuzz(client, operation, {}, max(1, EXAMPLES // 2))
    assert client.get("/api/auth/me").json()["data"]["user"] is None   # still anonymous
