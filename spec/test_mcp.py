"""The MCP server (issue 24, item 3), driven the way an assistant drives it:
the official `mcp` client SDK over streamable HTTP against the real app on a
loopback port. Members act through the HTTP API next to it."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import ExitStack, contextmanager

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from app.assistants.tools import mcp_name
from app.read_tools import READ_TOOLS
from app.tls import tls_context
from app.web.application import create_app
from helpers import LiveServer, mcp_session
from standins.google_standin import google_settings
from standins.openai_standin import ai_settings

PLACE = {"lat": 38.6916, "lng": -9.2160}


@contextmanager
def world(settings, **overrides):
    """The app on a loopback port; the members' HTTP clients close with it."""
    with LiveServer(create_app(settings, **overrides)) as server, ExitStack() as clients:
        server.clients = clients
        yield server


def member(server, name: str) -> httpx.Client:
    client = server.clients.enter_context(httpx.Client(base_url=server.url, timeout=30, verify=tls_context()))
    r = client.post("/api/auth/signup", json={"username": name, "password": "correct horse"})
    assert r.status_code == 201, r.text
    return client


def data(r: httpx.Response):
    assert r.status_code < 300, r.text
    return r.json()["data"]


def invite(owner: httpx.Client, guest: httpx.Client, trip_id: str, role: str) -> None:
    token = data(owner.post(f"/api/trips/{trip_id}/invites", json={"role": role}))["token"]
    data(guest.post(f"/api/invites/{token}/accept", json={}))


def connect(client: httpx.Client, name: str, scope: str, trip_id: str | None = None) -> dict:
    return data(client.post("/api/users/me/assistants", json={"name": name, "scope": scope, "tripId": trip_id}))


def mcp(server, token: str, work):
    return mcp_session(server.url, token, work)


def text(result) -> str:
    return result.content[0].text


def test_an_assistant_reads_and_proposes_and_nothing_changes_until_a_member_approves(settings):
    with world(settings) as server:
        alice, bob = member(server, "alice"), member(server, "bob")
        trip = data(alice.post("/api/trips", json={"title": "Lisbon", "startDate": "2027-05-03", "days": 2,
                                                   "timezone": "Europe/Lisbon", "currency": "EUR"}))
        t, day = trip["id"], trip["days"][0]["id"]
        data(alice.post(f"/api/trips/{t}/ops/insert_stop", json={"dayId": day, "name": "Belém Tower", **PLACE}))
        invite(alice, bob, t, "editor")
        version = data(alice.get(f"/api/trips/{t}"))["version"]
        made = connect(alice, "Claude", "propose", t)
        assert made["token"].startswith("wl_pat_") and made["mcpUrl"] == f"{server.url}/mcp"

        async def session_work(session: ClientSession):
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            got = await session.call_tool("get_trip", {"tripId": t})
            proposed = await session.call_tool("insert_stop", {"tripId": t, "dayId": day, "name": "Jerónimos",
                                                               "lat": 38.6979, "lng": -9.2068, "kind": "sight"})
            bad = await session.call_tool("insert_stop", {"tripId": t, "dayId": "no-such-day", "name": "X"})
            followed = await session.call_tool(
                "get_suggestion", {"tripId": t, "suggestionId": proposed.structured_content["suggestionId"]})
            return listed, got, proposed, bad, followed

        listed, got, proposed, bad, followed = mcp(server, made["token"], session_work)
        # Read tools are annotated read-only; write tools come from TRIP_OPS (agent ops only), none read-only.
        assert {"list_trips", "get_trip", "review_day", "shortest_order", "place_search", "recent_timeline",
                "get_suggestion", "propose_fix", "insert_stop", "update_stop", "move_stop"} <= set(listed)
        assert "delete_day" not in listed and "set_trip_preferences" not in listed
        assert listed["get_trip"].annotations.read_only_hint is True
        # One definition per read tool: the shared table's (app/read_tools.py) for assistants, as it stands.
        for tool in (t for t in READ_TOOLS.values() if t.mcp):
            offered = listed[mcp_name(tool.name)]
            assert offered.description == tool.description and offered.annotations.read_only_hint is True
            assert offered.input_schema["properties"] == {"tripId": offered.input_schema["properties"]["tripId"],
                                                          **tool.args.model_json_schema().get("properties", {})}
        assert "read_trip_media" not in listed   # the agent's own: its answer is model input
        assert listed["insert_stop"].annotations.read_only_hint is False
        schema = listed["insert_stop"].input_schema   # the op's own schema, plus the trip
        assert {"tripId", "dayId", "name"} <= set(schema["required"]) and "afterStopId" in schema["properties"]
        # Reading: the trip as the agent sees it.
        assert not got.is_error
        assert got.structured_content["title"] == "Lisbon"
        assert [s["name"] for s in got.structured_content["days"][0]["stops"]] == ["Belém Tower"]
        # Proposing files a pending suggestion with the review's verdict, and changes nothing.
        assert not proposed.is_error, text(proposed)
        filed = proposed.structured_content
        assert filed["status"] == "pending" and filed["review"]["status"] in ("ok", "warning", "problem")
        assert bad.is_error and text(bad) == "No day no-such-day in this trip"   # refused at once, in words
        assert followed.structured_content["status"] == "pending"
        assert followed.structured_content["proposedAs"] == "Claude via alice"
        now = data(alice.get(f"/api/trips/{t}"))
        assert now["version"] == version and [s["name"] for s in now["days"][0]["stops"]] == ["Belém Tower"]

        # The group sees it like the agent's suggestions, attributed to the assistant and the member.
        events = data(bob.get(f"/api/trips/{t}/agent/events?after=0"))
        (suggestion,) = events["suggestions"]
        assert suggestion["id"] == filed["suggestionId"] and suggestion["proposedAs"] == "Claude via alice"
        assert suggestion["patch"]["op"] == "insert_stop"
        line = next(m for m in events["messages"] if m["source"] == "assistant")
        assert line["actorName"] == "Claude via alice"
        assert line["actorUserId"] == data(alice.get("/api/auth/me"))["user"]["id"]
        # Meanwhile alice edits something else: an assistant's proposal still applies to the trip as it is
        # (the agent's own would be stale), and bob approves it in the API, attributed to bob.
        data(alice.post(f"/api/trips/{t}/ops/update_day", json={"dayId": day, "title": "Belém"}))
        applied = data(bob.post(f"/api/trips/{t}/agent/suggestions/{suggestion['id']}/approve",
                                json={"approved": True}))
        assert [s["name"] for s in applied["days"][0]["stops"]] == ["Belém Tower", "Jerónimos"]
        assert applied["version"] == version + 2 and applied["days"][0]["title"] == "Belém"
        edit = [m for m in data(bob.get(f"/api/trips/{t}/agent/events?after=0"))["messages"]
                if m["source"] == "operation"][-1]
        assert edit["actorName"] == "bob" and edit["parts"][1]["data"]["via"] == "suggestion"

        async def follow(session):
            return await session.call_tool("get_suggestion", {"tripId": t, "suggestionId": suggestion["id"]})

        assert mcp(server, made["token"], follow).structured_content["status"] == "applied"

        # A proposal that no longer applies (its stop was removed) is stale when someone approves it.
        tower = applied["days"][0]["stops"][0]["id"]

        async def rename(session):
            return await session.call_tool("update_stop", {"tripId": t, "stopId": tower, "name": "Torre"})

        renamed = mcp(server, made["token"], rename).structured_content["suggestionId"]
        data(alice.post(f"/api/trips/{t}/ops/delete_stop", json={"stopId": tower}))
        late = bob.post(f"/api/trips/{t}/agent/suggestions/{renamed}/approve", json={"approved": True})
        assert late.status_code == 409 and late.json()["error"]["code"] == "stale"


def test_a_viewers_token_cannot_propose_a_read_token_is_read_only_and_a_revoked_token_is_refused(settings):
    with world(settings) as server:
        alice, vic = member(server, "alice"), member(server, "vic")
        t = data(alice.post("/api/trips", json={"title": "Porto", "startDate": "2027-06-01", "days": 1}))["id"]
        invite(alice, vic, t, "viewer")
        vics = connect(vic, "ChatGPT", "propose")            # all of vic's trips
        reader = connect(alice, "Claude", "read", t)

        async def try_propose(session):
            tools = {tool.name for tool in (await session.list_tools()).tools}
            trips = await session.call_tool("list_trips", {})
            proposed = await session.call_tool("add_day", {"tripId": t, "title": "Extra"})
            return tools, trips, proposed

        tools, trips, proposed = mcp(server, vics["token"], try_propose)
        assert "add_day" in tools   # offered for the scope; refused for the role
        assert [x["id"] for x in trips.structured_content["trips"]] == [t]
        assert trips.structured_content["trips"][0]["canPropose"] is False
        assert proposed.is_error and "viewer" in text(proposed) and "cannot propose" in text(proposed)

        async def read_only(session):
            tools = {tool.name for tool in (await session.list_tools()).tools}
            unknown = await session.call_tool("add_day", {"tripId": t})
            return tools, unknown

        tools, unknown = mcp(server, reader["token"], read_only)
        assert "add_day" not in tools and "get_trip" in tools
        assert unknown.is_error and "no tool called" in text(unknown)
        assert data(alice.get(f"/api/trips/{t}/agent/events?after=0"))["suggestions"] == []
        assert len(data(alice.get(f"/api/trips/{t}"))["days"]) == 1

        # Revoked: refused at the door (401), and the client says so.
        listed = data(alice.get("/api/users/me/assistants"))["tokens"]
        assert [x["name"] for x in listed] == ["Claude"] and listed[0]["lastUsedAt"] is not None
        assert "token" not in listed[0]
        data(alice.delete(f"/api/users/me/assistants/{reader['id']}"))
        with pytest.raises(ExceptionGroup) as refused_session:
            mcp(server, reader["token"], read_only)
        assert refused_session.group_contains(MCPError, match="error response", depth=2)
        refused = httpx.post(f"{server.url}/mcp", json={}, headers={"Authorization": f"Bearer {reader['token']}"})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_token"
        # The ops endpoint's body limit holds at the door.
        big = httpx.post(f"{server.url}/mcp", content=b"x" * (200 * 1024), headers={
            "Authorization": f"Bearer {vics['token']}", "Content-Type": "application/json"})
        assert big.status_code == 413 and big.json()["error"]["code"] == "too_large"
        # An all-trips token ends with the account.
        data(vic.request("DELETE", "/api/users/me", json={"password": "correct horse"}))
        gone = httpx.post(f"{server.url}/mcp", json={}, headers={"Authorization": f"Bearer {vics['token']}"})
        assert gone.status_code == 401


def test_review_fixes_are_proposals_reads_stay_bounded_and_a_token_ends_with_the_membership(settings):
    with world(settings, mcp_calls_per_minute=8) as server:
        alice, bob = member(server, "alice"), member(server, "bob")
        trip = data(alice.post("/api/trips", json={"title": "Lisbon", "startDate": "2027-05-03", "days": 1,
                                                   "timezone": "Europe/Lisbon"}))
        t, day = trip["id"], trip["days"][0]["id"]
        for name, at, lat, lng in (("Castle", "10:00", 38.7139, -9.1335), ("Tiles museum", "10:30", 38.7247, -9.1135)):
            data(alice.post(f"/api/trips/{t}/ops/insert_stop", json={"dayId": day, "name": name, "setTime": at,
                                                                      "durationMin": 90, "lat": lat, "lng": lng}))
        invite(alice, bob, t, "editor")
        bobs = connect(bob, "Claude", "propose", t)
        version = data(alice.get(f"/api/trips/{t}"))["version"]

        async def work(session):
            review = (await session.call_tool("review_day", {"tripId": t, "dayId": day})).structured_content
            fix = next(f for finding in review["findings"] for f in finding["fixes"])
            proposed = await session.call_tool("propose_fix", {"tripId": t, "dayId": day, "fixId": fix["id"]})
            stale_fix = await session.call_tool("propose_fix", {"tripId": t, "dayId": day, "fixId": "x_nope"})
            lines = await session.call_tool("recent_timeline", {"tripId": t, "limit": 5})
            order = await session.call_tool("shortest_order", {"tripId": t, "dayId": day})
            search = await session.call_tool("place_search", {"tripId": t, "query": "pastéis"})
            calls = [await session.call_tool("list_trips", {}) for _ in range(3)]   # the 9th call in a minute
            return review, fix, proposed, stale_fix, lines, order, search, calls

        review, fix, proposed, stale_fix, lines, order, search, calls = mcp(server, bobs["token"], work)
        assert review["status"] == "problem" and fix["op"] in ("update_stop", "move_stop", "update_day")
        assert not proposed.is_error, text(proposed)
        assert stale_fix.is_error and "not in the day's review any more" in text(stale_fix)
        assert lines.structured_content["lines"][-1]["who"] == "Claude via bob"
        last = lines.structured_content["lines"][-1]["text"]
        assert last.startswith("Claude via bob proposes a change for a member to approve: ")
        # Both stops have set times: nothing to reorder, said in words (a tool error, not a crash).
        assert order.is_error and "nothing to reorder" in text(order)
        # Place search answers in plain words when OpenStreetMap cannot be reached.
        assert search.is_error and "Traceback" not in text(search) and "OpenStreetMap" in text(search)
        assert [c.is_error for c in calls] == [False, False, True]
        assert text(calls[-1]).startswith("Too many requests from this assistant: wait ")
        # Nothing changed until alice approves the fix.
        assert data(alice.get(f"/api/trips/{t}"))["version"] == version
        sid = proposed.structured_content["suggestionId"]
        assert data(alice.post(f"/api/trips/{t}/agent/suggestions/{sid}/approve",
                               json={"approved": True}))["version"] == version + 1

        # Bob leaves: his one-trip token ends with the membership.
        me = data(bob.get("/api/auth/me"))["user"]["id"]
        data(bob.delete(f"/api/trips/{t}/members/{me}"))
        assert data(bob.get("/api/users/me/assistants"))["tokens"] == []
        refused = httpx.post(f"{server.url}/mcp", json={}, headers={"Authorization": f"Bearer {bobs['token']}"})
        assert refused.status_code == 401


def test_an_assistant_uses_no_ai_budget_even_where_ai_is_on(settings, openai_standin):
    on = ai_settings(settings, openai_standin)
    with world(on) as server:
        alice = member(server, "alice")
        trip = data(alice.post("/api/trips", json={"title": "Porto", "startDate": "2027-06-01", "days": 1}))
        t, day = trip["id"], trip["days"][0]["id"]
        token = connect(alice, "Claude", "propose", t)["token"]

        async def work(session):
            await session.call_tool("get_trip", {"tripId": t})
            await session.call_tool("review_day", {"tripId": t, "dayId": day})
            return await session.call_tool("insert_stop", {"tripId": t, "dayId": day, "name": "Ribeira"})

        sid = mcp(server, token, work).structured_content["suggestionId"]
        data(alice.post(f"/api/trips/{t}/agent/suggestions/{sid}/approve", json={"approved": True}))
    assert openai_standin.requests == []
    with sqlite3.connect(on.db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM ai_usage").fetchone()[0] == 0


def test_an_assistants_place_searches_count_with_its_members_own(settings, google_standin):
    """An assistant's place search may be a paid Google call like the page's:
    one in a loop spent without end (its calls a minute were capped per token,
    and a member may connect several). They count against the member's own
    place lookups (app/quotas.py), Google is not asked past them, and the
    refusal is a tool error in words; reading the trip is not a lookup."""
    paced = google_settings(settings, google_standin).with_(place_lookups_per_user_minute=2)
    with world(paced) as server:
        alice = member(server, "alice")
        trip = data(alice.post("/api/trips", json={"title": "Lisbon", "startDate": "2027-05-03", "days": 1,
                                                   "timezone": "Europe/Lisbon"}))
        t = trip["id"]
        assert alice.get(f"/api/trips/{t}/places/search", params={"q": "pastéis"}).status_code == 200
        tokens = [connect(alice, name, "read", t)["token"] for name in ("Claude", "ChatGPT")]

        async def first(session):
            return await session.call_tool("place_search", {"tripId": t, "query": "tiles"})

        async def second(session):
            searched = await session.call_tool("place_search", {"tripId": t, "query": "castle"})
            read = await session.call_tool("get_trip", {"tripId": t})
            return searched, read

        before = sum(google_standin.calls.values())
        found = mcp(server, tokens[0], first)
        asked = sum(google_standin.calls.values())
        assert not found.is_error and asked == before + 1
        refused, read = mcp(server, tokens[1], second)
        assert refused.is_error and text(refused).startswith("You are looking places up faster than Wayline")
        assert sum(google_standin.calls.values()) == asked
        assert not read.is_error
        r = alice.get(f"/api/trips/{t}/places/search", params={"q": "fado"})
        assert r.status_code == 429 and r.json()["error"]["quota"] == "place_lookups_per_user_minute"


def test_malformed_arguments_and_unknown_ids_are_refused_in_words_and_change_nothing(settings):
    """What a model gets wrong (a number as text, an argument it made up, a
    name too long, an id it invented) comes back as a tool error a person can
    read, naming the argument: not pydantic's sentences ("Input should be a
    valid number", "Extra inputs are not permitted", "Value error, ...") nor
    the agent's own name for a read tool ("Invalid arguments for getTrip")."""
    with world(settings) as server:
        alice = member(server, "alice")
        trip = data(alice.post("/api/trips", json={"title": "Lisbon", "startDate": "2027-05-03", "days": 1,
                                                   "timezone": "Europe/Lisbon"}))
        t, day = trip["id"], trip["days"][0]["id"]
        data(alice.post(f"/api/trips/{t}/ops/insert_stop", json={"dayId": day, "name": "Belém Tower", **PLACE}))
        version = data(alice.get(f"/api/trips/{t}"))["version"]
        token = connect(alice, "Claude", "propose", t)["token"]
        calls = {
            ("get_trip", "extra"): ({"tripId": t, "verbose": True}, "verbose: is not expected here"),
            ("get_trip", "number id"): ({"tripId": 5}, "tripId: must be a trip's id as list_trips gives it"),
            ("get_trip", "no id"): ({}, "tripId: must be a trip's id as list_trips gives it"),
            ("get_trip", "unknown"): ({"tripId": "0123456789abcdef"},
                                      "Trip not found: this assistant's access is for another trip"),
            ("review_day", "no day"): ({"tripId": t}, "dayId: is required"),
            ("review_day", "unknown day"): ({"tripId": t, "dayId": "nope"}, "No day nope in this trip"),
            ("recent_timeline", "text"): ({"tripId": t, "limit": "lots"}, "limit: must be a whole number"),
            ("recent_timeline", "big"): ({"tripId": t, "limit": 10_000}, "limit: must be at most 50"),
            ("place_search", "long"): ({"tripId": t, "query": "x" * 5000}, "query: must be at most 200 characters"),
            ("list_trips", "extra"): ({"all": True}, "all: is not expected here"),
            ("get_suggestion", "unknown"): ({"tripId": t, "suggestionId": "nope"}, "No such suggestion in this trip"),
            ("insert_stop", "long"): ({"tripId": t, "dayId": day, "name": "x" * 5000},
                                      "name: must be at most 120 characters"),
            ("insert_stop", "text lat"): ({"tripId": t, "dayId": day, "name": "A", "lat": "north"},
                                          "lat: must be a number"),
            ("insert_stop", "far lat"): ({"tripId": t, "dayId": day, "name": "A", "lat": 500},
                                         "lat: must be at most 90"),
            ("insert_stop", "made up"): ({"tripId": t, "dayId": day, "name": "A", "rating": 5},
                                         "rating: is not expected here"),
            ("insert_stop", "no name"): ({"tripId": t, "dayId": day}, "name: is required"),
            ("insert_stop", "bad time"): ({"tripId": t, "dayId": day, "name": "A", "setTime": "30:00"},
                                          "setTime: must be a time as HH:MM, 00:00-29:59 (24:45 is 00:45 the next "
                                          "morning)"),
            ("update_trip", "zone"): ({"tripId": t, "timezone": "Mars/Olympus"},
                                      "timezone: must be an IANA time zone such as Europe/Lisbon"),
            ("delete_stop", "unknown"): ({"tripId": t, "stopId": "nope"}, "No stop nope in this trip"),
            ("propose_fix", "no fix"): ({"tripId": t, "dayId": day}, "fixId: is required"),
        }

        async def work(session):
            return {key: await session.call_tool(key[0], args) for key, (args, _) in calls.items()}

        answers = mcp(server, token, work)
        for key, (_, expected) in calls.items():
            assert answers[key].is_error and text(answers[key]) == expected, (key, text(answers[key]))
        after = data(alice.get(f"/api/trips/{t}"))
        assert after["version"] == version
        assert data(alice.get(f"/api/trips/{t}/agent/events?after=0"))["suggestions"] == []


def test_a_body_that_is_not_a_json_rpc_message_is_an_invalid_request_in_words(settings):
    """The SDK answered a JSON body that is no JSON-RPC message with pydantic's
    whole report as the error's message (its model names, the input, a link to
    pydantic's site). It is JSON-RPC's Invalid Request (-32600), in words."""
    with world(settings) as server:
        alice = member(server, "alice")
        token = connect(alice, "Claude", "read")["token"]
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        for body in (b"[1, 2]", b'"tools/list"', b'{"jsonrpc": "2.0", "id": 1}'):
            r = httpx.post(f"{server.url}/mcp", content=body, headers=headers, verify=tls_context())
            assert r.status_code == 400, (body, r.text)
            error = r.json()["error"]
            assert error["code"] == -32600 and "pydantic" not in r.text and "JSONRPCRequest" not in r.text, r.text
            assert error["message"].startswith("Invalid Request: the body must be one JSON-RPC 2.0 message")
        broken = httpx.post(f"{server.url}/mcp", content=b"{not json", headers=headers, verify=tls_context())
        assert broken.status_code == 400 and broken.json()["error"]["code"] == -32700   # Parse error, as it was
        listed = httpx.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                            headers=headers, verify=tls_context())
        assert listed.status_code == 200 and "get_trip" in {t["name"] for t in listed.json()["result"]["tools"]}


def test_get_and_delete_are_405_with_allow_post_and_open_no_stream(settings):
    """Stateless: no session to end (DELETE) and nothing to push on a stream
    (GET), so both are 405 naming POST, answered at once in the API's error
    shape, for anyone (the method is wrong whoever asks)."""
    with world(settings) as server:
        alice = member(server, "alice")
        token = connect(alice, "Claude", "read")["token"]
        for method in ("GET", "DELETE"):
            for headers in ({"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}, {}):
                r = httpx.request(method, f"{server.url}/mcp", headers=headers, timeout=30, verify=tls_context())
                assert r.status_code == 405, (method, r.status_code, r.text)
                assert r.headers["allow"] == "POST"
                assert r.json()["error"]["code"] == "method_not_allowed"


def test_a_members_assistants_keep_a_bounded_number_of_proposals_waiting_in_a_trip(settings):
    """Every open page of every member reads each pending suggestion on every
    poll, so one member's assistants (a token files 60 a minute, and a member
    may hold 20 tokens) could bury the group in proposals that wait a week.
    At most MAX_PENDING_PROPOSALS wait per member and trip, all their tokens
    together; then a tool error in words, nothing filed. Deciding one (applied)
    makes room; another member's assistant has its own room."""
    MAX_PENDING_PROPOSALS = 20   # app/assistants/proposals.py

    with world(settings, mcp_calls_per_minute=1000) as server:
        alice, bob = member(server, "alice"), member(server, "bob")
        trip = data(alice.post("/api/trips", json={"title": "Porto", "startDate": "2027-06-01", "days": 1}))
        t, day = trip["id"], trip["days"][0]["id"]
        invite(alice, bob, t, "editor")
        first, second = connect(alice, "Claude", "propose", t)["token"], connect(alice, "GPT", "propose")["token"]
        bobs = connect(bob, "Claude", "propose", t)["token"]

        def propose(token, n):
            async def work(session):
                return [await session.call_tool("update_day", {"tripId": t, "dayId": day, "title": f"Day {i}"})
                        for i in range(n)]
            return mcp(server, token, work)

        filed = propose(first, MAX_PENDING_PROPOSALS - 1) + propose(second, 1)
        assert not any(r.is_error for r in filed)
        [refused] = propose(second, 1)
        [also_refused] = propose(first, 1)
        for r in (refused, also_refused):
            assert r.is_error and text(r) == (f"{MAX_PENDING_PROPOSALS} changes proposed by alice's assistants are "
                                              "already waiting in this trip: wait until the group has decided on "
                                              "some of them.")
        waiting = data(alice.get(f"/api/trips/{t}/agent/events?after=0"))["suggestions"]
        assert len(waiting) == MAX_PENDING_PROPOSALS
        [bobs_one] = propose(bobs, 1)
        assert not bobs_one.is_error, text(bobs_one)

        data(bob.post(f"/api/trips/{t}/agent/suggestions/{waiting[0]['id']}/approve", json={"approved": True}))
        [room] = propose(second, 1)
        assert not room.is_error, text(room)


def test_a_proposal_that_the_deployments_rules_refuse_is_refused_at_once_not_filed(settings):
    """The dry run of a proposal checks what the write will check: this
    server's days-per-trip quota too (WAYLINE_DAYS_PER_TRIP). It used to check
    the schema's ceiling only, so "add a day" to a trip at its quota was filed
    for the group, and the member who approved it got a 409 `stale` instead."""
    with world(settings.with_(days_per_trip=2)) as server:
        alice = member(server, "alice")
        trip = data(alice.post("/api/trips", json={"title": "Porto", "startDate": "2027-06-01", "days": 2}))
        token = connect(alice, "Claude", "propose", trip["id"])["token"]

        async def work(session):
            return await session.call_tool("add_day", {"tripId": trip["id"], "title": "Douro"})

        refused = mcp(server, token, work)
        assert refused.is_error and text(refused) == "A trip can have at most 2 days."
        assert data(alice.get(f"/api/trips/{trip['id']}/agent/events?after=0"))["suggestions"] == []
        # The HTTP API says the same to a member.
        r = alice.post(f"/api/trips/{trip['id']}/ops/add_day", json={"title": "Douro"})
        assert r.status_code == 413 and r.json()["error"]["message"] == "A trip can have at most 2 days."


def test_a_proposal_is_decided_by_the_group_as_it_is_when_they_decide(settings):
    """Whoever filed it and whatever happened since: a denial hides it for that
    member only and they may still approve it; the proposer removed from the
    trip leaves it to the group; an approver demoted to viewer is refused and
    it stays pending; two members approving at once over two connections,
    after the trip moved on, apply it once; the day it moves a stop to
    removed, it is stale."""
    with world(settings) as server:
        alice, bob, carol = member(server, "alice"), member(server, "bob"), member(server, "carol")
        trip = data(alice.post("/api/trips", json={"title": "Lisbon", "startDate": "2027-05-03", "days": 3,
                                                   "timezone": "Europe/Lisbon"}))
        t, days = trip["id"], [d["id"] for d in trip["days"]]
        tower = data(alice.post(f"/api/trips/{t}/ops/insert_stop?full=1", json={
            "dayId": days[0], "name": "Belém Tower", **PLACE}))["trip"]["days"][0]["stops"][0]["id"]
        invite(alice, bob, t, "editor")
        invite(alice, carol, t, "editor")
        token = connect(bob, "Claude", "propose", t)["token"]

        async def work(session):
            calls = [("update_stop", {"stopId": tower, "note": "Book ahead"}),
                     ("update_day", {"dayId": days[1], "title": "Sintra"}),
                     ("update_stop", {"stopId": tower, "name": "Torre de Belém"}),
                     ("move_stop", {"stopId": tower, "toDayId": days[2], "position": 0})]
            return [(await session.call_tool(name, {"tripId": t, **args})).structured_content["suggestionId"]
                    for name, args in calls]

        noted, renamed_day, renamed, moved = mcp(server, token, work)

        def approve(client, sid, approved=True):
            return client.post(f"/api/trips/{t}/agent/suggestions/{sid}/approve", json={"approved": approved})

        # Denied by alice: gone from her tray only; she changes her mind and approves it.
        assert data(approve(alice, noted, False)) == {"dismissed": True}
        assert noted not in [s["id"] for s in data(alice.get(f"/api/trips/{t}/agent/events?after=0"))["suggestions"]]
        assert noted in [s["id"] for s in data(carol.get(f"/api/trips/{t}/agent/events?after=0"))["suggestions"]]
        assert data(approve(alice, noted))["days"][0]["stops"][0]["note"] == "Book ahead"
        # Bob is removed: what his assistant proposed is still the group's to decide.
        bob_id = data(bob.get("/api/auth/me"))["user"]["id"]
        data(alice.delete(f"/api/trips/{t}/members/{bob_id}"))
        assert data(approve(carol, renamed_day))["days"][1]["title"] == "Sintra"
        # Carol demoted to viewer: refused, and it waits for someone who may edit.
        carol_id = data(carol.get("/api/auth/me"))["user"]["id"]
        data(alice.patch(f"/api/trips/{t}/members/{carol_id}", json={"role": "viewer"}))
        refused = approve(carol, renamed)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
        data(alice.patch(f"/api/trips/{t}/members/{carol_id}", json={"role": "editor"}))
        # The trip moves on; alice and carol approve at once: it applies once.
        version = data(alice.get(f"/api/trips/{t}"))["version"]
        start, answers = threading.Barrier(2), {}

        def at_once(name, client):
            start.wait()
            answers[name] = approve(client, renamed)

        threads = [threading.Thread(target=at_once, args=pair) for pair in (("alice", alice), ("carol", carol))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sorted(r.status_code for r in answers.values()) == [200, 409], answers
        assert next(r for r in answers.values() if r.status_code == 409).json()["error"]["code"] == "not_pending"
        after = data(alice.get(f"/api/trips/{t}"))
        assert after["version"] == version + 1 and after["days"][0]["stops"][0]["name"] == "Torre de Belém"
        # The day it moves the tower to is deleted: stale, in words.
        data(alice.post(f"/api/trips/{t}/ops/delete_day", json={"dayId": days[2]}))
        late = approve(carol, moved)
        assert late.status_code == 409 and late.json()["error"]["code"] == "stale"
        assert late.json()["error"]["message"] == f"This suggestion no longer applies: No day {days[2]} in this trip"
        assert data(alice.get(f"/api/trips/{t}/agent/events?after=0"))["suggestions"] == []


def test_a_long_trip_is_read_whole_as_valid_json_with_each_day_in_full_on_request(settings):
    """A two-week trip with a few stops a day and their notes is more than one
    answer holds (OUTPUT_CHARS): get_trip used to cut its JSON mid-way, so the
    assistant got no structured answer and text that does not parse, without
    the later days. Now the whole trip comes as valid JSON: the first days in
    full, the rest as an outline (ids, dates, titles, how many stops) with
    words saying how to read them, and get_trip with a dayId gives that day
    in full."""
    with world(settings) as server:
        alice = member(server, "alice")
        trip = data(alice.post("/api/trips", json={"title": "Portugal", "startDate": "2027-05-03", "days": 14,
                                                   "timezone": "Europe/Lisbon"}))
        t = trip["id"]
        for n, day in enumerate(trip["days"]):
            edits = [{"op": "insert_stop", "args": {"dayId": day["id"], "name": f"Stop {n}.{i}", "kind": "sight",
                                                     "lat": 38.7 + i / 100, "lng": -9.1, "note": "Tickets " * 40}}
                     for i in range(8)]
            data(alice.post(f"/api/trips/{t}/ops", json={"edits": edits}))
        token = connect(alice, "Claude", "read", t)["token"]
        last = trip["days"][-1]["id"]

        async def work(session):
            return (await session.call_tool("get_trip", {"tripId": t}),
                    await session.call_tool("get_trip", {"tripId": t, "dayId": last}),
                    await session.call_tool("get_trip", {"tripId": t, "dayId": "nope"}))

        whole, one, unknown = mcp(server, token, work)
        assert not whole.is_error and whole.structured_content is not None, text(whole)[-200:]
        read = whole.structured_content
        assert [d["id"] for d in read["days"]] == [d["id"] for d in trip["days"]]
        full = [d for d in read["days"] if "stops" in d]
        outlined = [d for d in read["days"] if "stops" not in d]
        assert full and outlined and read["days"][:len(full)] == full   # the first days in full, then the outline
        assert all(len(d["stops"]) == 8 for d in full)
        assert all(d["stopCount"] == 8 and d["date"] for d in outlined)
        assert read["outline"] == (f"{len(outlined)} of the 14 days are an outline here (too long for one answer): "
                                   "read each in full with get_trip and its dayId.")
        assert not one.is_error and [d["id"] for d in one.structured_content["days"]] == [last]
        assert [s["name"] for s in one.structured_content["days"][0]["stops"]] == [f"Stop 13.{i}" for i in range(8)]
        assert unknown.is_error and text(unknown) == "No day nope in this trip"


def test_ids_from_another_trip_are_refused_even_for_a_token_that_sees_both(settings):
    """An all-trips token reaches both of alice's trips; each call is about
    the trip it names, so a stop, day, fix or suggestion of the other trip is
    refused in words, and nothing is filed in either trip."""
    with world(settings) as server:
        alice = member(server, "alice")
        porto, lisbon = (data(alice.post("/api/trips", json={"title": title, "startDate": "2027-06-01", "days": 1}))
                         for title in ("Porto", "Lisbon"))
        stop = data(alice.post(f"/api/trips/{porto['id']}/ops/insert_stop?full=1", json={
            "dayId": porto["days"][0]["id"], "name": "Ribeira"}))["trip"]["days"][0]["stops"][0]["id"]
        token = connect(alice, "Claude", "propose")["token"]
        p_day, l_trip = porto["days"][0]["id"], lisbon["id"]

        async def work(session):
            filed = await session.call_tool("update_day", {"tripId": porto["id"], "dayId": p_day, "title": "Douro"})
            sid = filed.structured_content["suggestionId"]
            calls = {
                "update_stop": {"tripId": l_trip, "stopId": stop, "name": "Ribeira"},
                "insert_stop": {"tripId": l_trip, "dayId": lisbon["days"][0]["id"], "afterStopId": stop, "name": "X"},
                "move_stop": {"tripId": l_trip, "stopId": stop, "toDayId": lisbon["days"][0]["id"], "position": 0},
                "review_day": {"tripId": l_trip, "dayId": p_day},
                "propose_fix": {"tripId": l_trip, "dayId": p_day, "fixId": "f_x"},
                "get_suggestion": {"tripId": l_trip, "suggestionId": sid},
            }
            return sid, {name: await session.call_tool(name, args) for name, args in calls.items()}

        sid, answers = mcp(server, token, work)
        expected = {"update_stop": f"No stop {stop} in this trip", "insert_stop": f"No stop {stop} in this trip",
                    "move_stop": f"No stop {stop} in this trip", "review_day": f"No day {p_day} in this trip",
                    "propose_fix": f"No day {p_day} in this trip",
                    "get_suggestion": "No such suggestion in this trip"}
        assert {name: (r.is_error, text(r)) for name, r in answers.items()} == \
            {name: (True, words) for name, words in expected.items()}
        assert data(alice.get(f"/api/trips/{l_trip}/agent/events?after=0"))["suggestions"] == []
        assert [s["id"] for s in data(alice.get(f"/api/trips/{porto['id']}/agent/events?after=0"))["suggestions"]] \
            == [sid]
