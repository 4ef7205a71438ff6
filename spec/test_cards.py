"""Generative UI cards: the catalog's bounds, the sanitizer against hostile
specs, the showCard tool (strict schema, list -> flat, refine by patch) and
the data-spec part. The page's renderer is tested in test_browser_cards.py."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest

from app.agent import cards
from app.agent.cardtool import (SHOW_CARD, _without_titles, build_card, merge_patch, parse_card_call, show_card_model,
                                refinable, tool_spec)
from app.agent.cards import (CATALOG, MAX_DEPTH, MAX_ELEMENTS, MAX_SPEC_BYTES, clean_spec, sanitize_spec,
                             spec_data, spec_of_part, spec_part, street_view_card)
from app.agent.ui_stream import sse
from app.ai import strict_schema
from app.trips.model import Day, Stop, Trip

GALLERY = json.loads((Path(__file__).resolve().parent.parent / "public" / "cards-gallery.json").read_text())


def trip_of(fixture: dict) -> Trip:
    days = [Day(id=d["id"], position=i, stops=[Stop(id=s, day_id=d["id"], position=j, kind="sight", name=s)
                                               for j, s in enumerate(d["stops"])])
            for i, d in enumerate(fixture["days"])]
    return Trip(id=fixture["id"], title="Lisbon", dest_name="Lisbon", dest_lat=38.7, dest_lng=-9.1,
                start_date=fixture["startDate"], timezone="Europe/Lisbon", currency="EUR", version=1,
                created_by="u1", days=days)


TRIP = trip_of(GALLERY["trip"])


def el(type_: str, children: list | None = None, **props) -> dict:
    return {"type": type_, "props": props, "children": children or []}


def text(value: str = "Hello", **extra) -> dict:
    return el("Text", text=value, **extra)


def spec(root: str = "r", **elements) -> dict:
    return {"root": root, "elements": elements}


def card(*child_keys: str, title: str = "Plan", **elements) -> dict:
    """A TripPlanCard root `r` holding `child_keys`, plus `elements`."""
    return spec(r=el("TripPlanCard", list(child_keys), title=title), **elements)


def button(action: dict, label: str = "Go") -> dict:
    return el("ActionButton", label=label, action=action)


# -- the catalog ------------------------------------------------------------------


def test_every_string_and_list_in_the_catalog_is_bounded():
    def walk(node, path):
        if isinstance(node, dict):
            if node.get("type") == "string":
                assert {"maxLength", "pattern", "enum", "const"} & node.keys(), f"unbounded string at {path}"
            if node.get("type") == "array":
                assert "maxItems" in node, f"unbounded list at {path}"
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    for name, component in CATALOG.items():
        walk(component.props.model_json_schema(), name)


def test_the_gallery_shows_every_component_and_is_exactly_what_the_sanitizer_keeps():
    shown = {e["type"] for c in GALLERY["cards"] for e in c["spec"]["elements"].values()}
    assert shown == set(CATALOG)
    for entry in GALLERY["cards"]:
        assert sanitize_spec(entry["spec"], trip=TRIP, allow_server_only=True) == entry["spec"], entry["title"]


def test_a_clean_spec_is_stable_and_not_mutated():
    raw = copy.deepcopy(GALLERY["cards"][0]["spec"])
    raw["elements"]["plan"]["props"]["subtitle"] = None  # a strict-schema null: simply absent in the result
    before = copy.deepcopy(raw)
    once = sanitize_spec(raw, trip=TRIP)
    assert raw == before
    assert "subtitle" not in once["elements"]["plan"]["props"]
    assert sanitize_spec(once, trip=TRIP) == once


# -- hostile specs ----------------------------------------------------------------


def test_unknown_component_is_dropped_with_its_subtree():
    raw = card("a", "evil", a=text(), evil=el("IFrame", ["inner"], src="https://evil.example"), inner=text("x"))
    result = clean_spec(raw, trip=TRIP)
    assert result.spec["elements"].keys() == {"r", "a"}
    assert result.spec["elements"]["r"]["children"] == ["a"]
    assert any("IFrame" in d for d in result.dropped)
    assert sanitize_spec(spec(r=el("Script", src="x")), trip=TRIP) is None  # an unknown root: nothing left


@pytest.mark.parametrize("action", [
    {"kind": "url", "url": "https://evil.example"},
    {"kind": "followUp", "text": "hi", "url": "https://evil.example"},
    {"kind": "navigate", "href": "javascript:alert(1)"},
    {"kind": "api", "method": "POST", "path": "/api/trips/x/ops"},
    {"kind": "focus", "dayId": "day-a", "then": {"kind": "followUp", "text": "chained"}},
    "followUp",
])
def test_button_actions_other_than_follow_up_and_focus_are_dropped(action):
    result = clean_spec(card("b", b=button(action)), trip=TRIP)
    assert result.spec["elements"].keys() == {"r"}
    assert result.dropped


def test_url_like_props_and_dynamic_features_do_not_exist():
    raw = card("a", "b", "c", "d", "e", "f",
               a=el("Text", text="x", href="https://evil.example"),                        # a link prop
               b={**text(), "on": {"press": {"action": "navigate", "params": {"url": "x"}}}},  # handlers
               c={**text(), "visible": {"$state": "/show"}},                                 # conditions
               d={**text(), "repeat": {"statePath": "/items"}},                              # dynamic repeat
               e=el("Text", text={"$state": "/secret"}),                                     # a state binding
               f={**text(), "watch": {"/x": {"action": "refresh"}}})                         # watchers
    raw["state"] = {"secret": "x"}
    result = clean_spec(raw, trip=TRIP)
    assert result.spec == {"root": "r", "elements": {"r": el("TripPlanCard", title="Plan", days=[])}}
    assert len(result.dropped) >= 7


def test_a_script_in_a_prop_stays_plain_data():
    hostile = "<script>alert(1)</script><img src=x onerror=alert(1)> javascript:alert(1) data:text/html,<b>x</b>"
    kept = sanitize_spec(card("t", t=text(hostile)), trip=TRIP)
    assert kept["elements"]["t"]["props"]["text"] == hostile  # kept verbatim: the page renders it as text


def test_ten_thousand_elements_are_refused_whole_and_quickly():
    elements = {f"e{i}": text(f"line {i}") for i in range(10_000)}
    elements["r"] = el("TripPlanCard", [f"e{i}" for i in range(10_000)], title="Huge")
    started = time.monotonic()
    result = clean_spec({"root": "r", "elements": elements}, trip=TRIP)
    assert result.spec is None and "at most 60" in result.dropped[0]
    assert time.monotonic() - started < 5  # a guard against pathological work, not a speed claim


def test_the_element_and_size_bounds():
    keys = [f"t{i}" for i in range(MAX_ELEMENTS - 1)]
    fits = card(*keys, **{k: text() for k in keys})
    assert len(sanitize_spec(fits, trip=TRIP)["elements"]) == MAX_ELEMENTS
    over = card(*keys, "one-more", **{k: text() for k in keys}, **{"one-more": text()})
    assert sanitize_spec(over, trip=TRIP) is None
    long_texts = {f"t{i}": text("x" * 1000) for i in range(20)}  # every string in bounds, 20 KB in all
    result = clean_spec(card(*long_texts, **long_texts), trip=TRIP)
    assert result.spec is None and f"{MAX_SPEC_BYTES // 1024} KiB" in result.dropped[-1]
    padded = card("t", t=text(), junk={"type": "Text", "props": {"text": "y" * 40_000}})
    assert clean_spec(padded, trip=TRIP).spec is None  # the input bound: refused before any work


def test_cycles_missing_children_and_second_parents():
    raw = card("a", "ghost", "b", "a",
               a=el("DaySummary", ["a2"], dayId="day-a", title="Day 1"),
               a2=el("StopSummary", ["a", "r"], stopId="stop-castelo", name="Castelo"),
               b=el("DaySummary", ["a2"], dayId="day-b", title="Day 2"))
    result = clean_spec(raw, trip=TRIP)
    out = result.spec["elements"]
    assert out["r"]["children"] == ["a", "b"]
    assert out["a"]["children"] == ["a2"] and out["a2"]["children"] == []
    assert out["b"]["children"] == []  # a2 already has a parent
    text_of = " ".join(result.dropped)
    assert "cycle" in text_of and "no such element" in text_of and "second parent" in text_of


def test_nesting_is_cut_at_the_depth_bound():
    elements = {f"d{i}": el("StopSummary", [f"d{i + 1}"], stopId="stop-castelo", name="x") for i in range(10)}
    result = clean_spec({"root": "d0", "elements": elements}, trip=TRIP)
    assert set(result.spec["elements"]) == {f"d{i}" for i in range(MAX_DEPTH)}
    assert result.spec["elements"][f"d{MAX_DEPTH - 1}"]["children"] == []


def test_leaf_components_cannot_hold_children():
    result = clean_spec(card("t", t={**text(), "children": ["x"]}, x=text("inside")), trip=TRIP)
    assert result.spec["elements"].keys() == {"r", "t"} and result.spec["elements"]["t"]["children"] == []


def test_invalid_props_drop_the_element_or_the_whole_spec_at_the_root():
    raw = card("long", "ok", "bad-tone", long=text("x" * 1001), ok=text(), **{"bad-tone": el("Badge", label="a",
                                                                                              tone="neon")})
    assert sanitize_spec(raw, trip=TRIP)["elements"]["r"]["children"] == ["ok"]
    assert sanitize_spec(spec(r=el("TripPlanCard", title="x" * 81)), trip=TRIP) is None
    assert sanitize_spec(spec(r=el("Comparison", options=[{"title": "only one", "points": []}])), trip=TRIP) is None
    for bad in (None, [], "spec", {"root": "r"}, {"root": 1, "elements": {}}, {"root": "r", "elements": []}):
        assert sanitize_spec(bad, trip=TRIP) is None
    assert sanitize_spec(spec("bad key!", **{"bad key!": text()}), trip=TRIP) is None


def test_ids_must_be_this_trips():
    raw = card("d1", "d2", "d3", "s1", "s2", "f1", "f2", "f3", "f4",
               d1=el("DaySummary", dayId="day-a", date="2026-12-10", title="ok"),
               d2=el("DaySummary", dayId="day-zzz", title="unknown day"),
               d3=el("DaySummary", dayId="day-b", date="2026-12-10", title="wrong date"),
               s1=el("StopSummary", stopId="stop-belem", name="ok"),
               s2=el("StopSummary", stopId="stop-zzz", name="unknown stop"),
               f1=button({"kind": "focus", "dayId": "day-b", "stopId": "stop-belem"}),
               f2=button({"kind": "focus", "dayId": "day-zzz"}),
               f3=button({"kind": "focus", "dayId": "day-a", "stopId": "stop-belem"}),  # a stop of another day
               f4=button({"kind": "followUp", "text": "Plan day 3"}))
    assert sanitize_spec(raw, trip=TRIP)["elements"]["r"]["children"] == ["d1", "s1", "f1", "f4"]
    # Without a trip, no reference can be checked, so none is kept.
    assert sanitize_spec(raw, trip=None)["elements"]["r"]["children"] == ["f4"]


def test_budget_total_must_be_the_sum():
    lines = [{"label": "Museum", "amountMinor": 1800}, {"label": "Lunch", "amountMinor": 2500}]
    good = el("BudgetEstimate", currency="EUR", lines=lines, totalMinor=4300)
    assert sanitize_spec(spec(r=good), trip=TRIP) is not None
    assert sanitize_spec(spec(r={**good, "props": {**good["props"], "totalMinor": 9999}}), trip=TRIP) is None


# -- the server-only street-view card ---------------------------------------------


def test_street_view_cards_come_only_from_the_server():
    built = street_view_card("Torvehallerne", f"/api/trips/{TRIP.id}/street-view/abc123?heading=90", trip=TRIP,
                             captured="2023-06")
    image = built["elements"][built["root"]]
    assert image["type"] == "StreetViewImage" and image["props"]["date"] == "2023-06"
    assert sanitize_spec(built, trip=TRIP) is None                      # the same spec from the model: refused
    assert sanitize_spec(card("i", i=image), trip=TRIP)["elements"].keys() == {"r"}
    assert sanitize_spec(built, trip=TRIP, allow_server_only=True) == built
    for url in ("https://evil.example/x.jpg", "javascript:alert(1)", "/api/trips/othertrip/street-view/abc",
                f"/api/trips/{TRIP.id}/street-view/../../uploads/x",
                f"//evil.example/api/trips/{TRIP.id}/street-view/a",
                f"/api/trips/{TRIP.id}/street-view/a b"):
        with pytest.raises(ValueError):
            street_view_card("x", url, trip=TRIP)


# -- the showCard tool ------------------------------------------------------------


def test_tool_schema_is_the_strict_catalog():
    tool = tool_spec()
    assert tool["name"] == SHOW_CARD and tool["strict"] is True
    assert tool["parameters"] == _without_titles(strict_schema(show_card_model()))

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "object":
                assert node["additionalProperties"] is False and node["required"] == list(node["properties"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(tool["parameters"])
    defs = tool["parameters"]["$defs"]
    types = {d["properties"]["type"]["const"] for name, d in defs.items() if name.endswith("Element")}
    assert types == set(CATALOG) - {"StreetViewImage"}
    assert "title" in defs["TripPlanCardProps"]["properties"]  # titles of schemas go, a prop named title stays


def strict_call(**overrides) -> str:
    """Arguments as a strict-schema model sends them: every field, null when unused."""
    args = {
        "refine": None, "root": "plan", "remove": [],
        "elements": [
            {"key": "plan", "type": "TripPlanCard", "children": ["go", "warn"],
             "props": {"title": "Day 1", "subtitle": None, "days": [{"label": "Day 1", "title": "Alfama",
                                                                   "summary": None}]}},
            {"key": "go", "type": "ActionButton", "children": [],
             "props": {"label": "Show day 1", "variant": "primary",
                       "action": {"kind": "focus", "dayId": "day-a", "stopId": None}}},
            {"key": "warn", "type": "Alert", "children": [],
             "props": {"tone": "warning", "title": None, "text": "Closed on Mondays"}},
        ],
    }
    return json.dumps({**args, **overrides})


def test_a_tool_call_becomes_a_flat_spec():
    call = parse_card_call(strict_call())
    result = build_card(call, trip=TRIP)
    assert result.spec == {"root": "plan", "elements": {
        "plan": el("TripPlanCard", ["go", "warn"], title="Day 1", days=[{"label": "Day 1", "title": "Alfama"}]),
        "go": el("ActionButton", label="Show day 1", variant="primary", action={"kind": "focus", "dayId": "day-a"}),
        "warn": el("Alert", tone="warning", text="Closed on Mondays"),
    }}
    assert result.dropped == [] and result.for_model() == {"shown": True, "elements": 3}


def test_tool_call_oddities_are_noted_not_fatal():
    call = parse_card_call({"root": "a", "elements": [{"key": "a", "type": "Text", "props": {"text": "one"}},
                                                      {"key": "a", "type": "Text", "props": {"text": "two"}},
                                                      {"type": "Text"}, "junk"]})
    result = build_card(call, trip=TRIP)
    assert result.spec["elements"]["a"]["props"]["text"] == "one"
    assert len(result.dropped) == 3
    with pytest.raises(ValueError):
        parse_card_call("[1, 2]")
    with pytest.raises(ValueError):
        parse_card_call("not json")
    many = [{"key": f"k{i}", "type": "Text", "props": {"text": "x"}, "children": []} for i in range(5000)]
    refused = build_card(parse_card_call({"root": "k0", "elements": many}), trip=TRIP)
    assert refused.spec is None and refused.for_model()["shown"] is False


def test_refining_merges_a_patch_by_key_and_sanitizes_again():
    base = build_card(parse_card_call(strict_call()), trip=TRIP).spec
    snapshot = copy.deepcopy(base)
    patch = parse_card_call(strict_call(refine="spec-1", root=None, remove=["warn"], elements=[
        {"key": "plan", "type": "TripPlanCard", "children": ["go", "note", "bad"],
         "props": {"title": "Day 1, rainy", "subtitle": None, "days": []}},
        {"key": "note", "type": "Text", "children": [], "props": {"text": "Museums first", "variant": "body"}},
        {"key": "bad", "type": "ActionButton", "children": [],
         "props": {"label": "x", "variant": "secondary", "action": {"kind": "focus", "dayId": "nope", "stopId": None}}},
    ]))
    result = build_card(patch, trip=TRIP, base=base)
    assert base == snapshot
    assert result.spec["root"] == "plan"
    assert result.spec["elements"]["plan"]["props"]["title"] == "Day 1, rainy"
    assert result.spec["elements"]["plan"]["children"] == ["go", "note"]
    assert set(result.spec["elements"]) == {"plan", "go", "note"}
    assert any("bad" in d for d in result.dropped)
    # A refine that names no recent card is refused, not drawn as a new card.
    assert build_card(patch, trip=TRIP, base=None).spec is None


def test_merge_patch_removes_replaces_and_moves_the_root():
    base = spec("a", a=el("TripPlanCard", ["b"], title="A"), b=text("b"))
    merged = merge_patch(base, root="c", upsert={"c": el("TripPlanCard", ["a"], title="C")}, remove=["b"])
    assert merged == {"root": "c", "elements": {"a": base["elements"]["a"], "c": el("TripPlanCard", ["a"], title="C")}}
    assert sanitize_spec(merged, trip=TRIP)["elements"]["a"]["children"] == []


def test_refinable_cards_are_recent_clean_and_never_server_built():
    plan = sanitize_spec(card("d", d=el("DaySummary", dayId="day-b", title="Belém")), trip=TRIP)
    street = street_view_card("Nyhavn", f"/api/trips/{TRIP.id}/street-view/n1", trip=TRIP)
    recent = [("s0", plan), ("s1", plan), ("s2", street), ("s3", plan)]
    assert [c["id"] for c in refinable(recent, trip=TRIP)] == ["s1", "s3"]
    smaller = trip_of({**GALLERY["trip"], "days": GALLERY["trip"]["days"][:1]})  # day-b was deleted since
    assert refinable([("s0", plan)], trip=smaller)[0]["spec"]["elements"].keys() == {"r"}


# -- the part and the chunk -------------------------------------------------------


def test_spec_part_and_stream_chunk():
    built = GALLERY["cards"][0]["spec"]
    part = spec_part(built, "spec_abc")
    assert part == {"type": "data-spec", "id": "spec_abc", "data": {"type": "flat", "spec": built}}
    assert spec_of_part(part) == built
    assert spec_of_part({"type": "data-spec", "data": {"type": "patch", "patch": {}}}) is None
    assert spec_of_part({"type": "text", "text": "x"}) is None
    frame = sse("data-spec", id="spec_abc", data=spec_data(built))
    assert frame.startswith(b"data: ") and frame.endswith(b"\n\n")
    assert json.loads(frame[6:]) == part  # the chunk and the persisted part have the same shape
    assert cards.MAX_ELEMENTS == 60 and cards.MAX_DEPTH == 6
