"""The agent on a trip several members edit at once, over HTTP against the
OpenAI stand-in: a risk is raised once, whatever lands while the model decides."""

from __future__ import annotations

from helpers import join, new_trip, op, signup, use
from test_agent_support import agent_client, eventually, events, make_set_time_unreachable, pick_first_fix


def test_a_risk_is_raised_even_when_another_member_edits_while_the_model_decides(settings, openai_standin):
    """Alice's edits make a set time unreachable; while the model decides, Bob
    renames the other day. The decision arrives for a trip that moved on, so it
    is not stored as it was, and Bob's rename brings no new risk of its own: the
    risk used to be lost (one model call, no suggestion, nothing said). Now the
    next evaluation judges from before Alice's edits and raises it, once."""
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin) as client:
        alice, bob = signup(client, "alice"), signup(client, "bob")
        use(client, alice)
        trip = new_trip(client)
        join(client, alice, trip["id"], bob)
        use(client, alice)
        openai_standin.hold()
        make_set_time_unreachable(client, trip["id"], trip["days"][0]["id"])
        openai_standin.wait_for_requests(1)          # the model is deciding about Alice's edits
        use(client, bob)
        assert op(client, trip["id"], "update_day", dayId=trip["days"][1]["id"], title="Sintra").status_code == 200
        openai_standin.release()

        [suggestion] = eventually(lambda: events(client, trip["id"])["suggestions"])
        assert suggestion["tripVersion"] == client.get(f"/api/trips/{trip['id']}").json()["data"]["version"]
        assert openai_standin.request_count == 2
        second = openai_standin.requests[1].body["input"]
        assert "Sintra" in second and "Palácio da Pena" in second   # both bursts' edits, judged together
        said = [m for m in events(client, trip["id"])["messages"] if m["source"] == "threshold"]
        assert len(said) == 1
