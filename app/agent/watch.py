"""The forecast watch: the trip agent notices when a plan turns risky
without anyone editing it (the forecast turns wet, a place's dated hours
close a day).

A tracked background loop (`run`, started by app/lifecycle.py when AI is on,
cancelled at shutdown) makes a pass every `agent_timing.watch_interval_s`. A pass
(`pass_once`) is bounded: trips whose days fall within the next
WATCH_HORIZON_DAYS (the forecast horizon), each at most once per
WATCH_EVERY_S, at most MAX_TRIPS_PER_PASS per pass, oldest check first. For
each it runs the review on every day with the trip's places and weather (the
loaders the review route uses) and keeps the material findings of the kinds
that change without an edit (WATCH_KINDS). Only the ones not seen before
(`agent_watch.seen_json`: the last pass's findings, plus the risks the
after-edit evaluation already raised) go to the model, through the same
decision as an edit (`Evaluator.decide`, feature `agent_eval`, counted
against the AI limits like any call). A refused or failed call leaves them
unseen, so a later pass asks again; weather that cannot be read skips the
trip (its findings would look resolved and come back as new).
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import timedelta
from typing import Any, Protocol

from ..db import Tx
from ..errors import AppError, NotFound
from ..ids import iso
from ..review.facts import stop_places, trip_country, trip_weather
from ..review.findings import Finding, review_day
from ..trips.model import Trip
from .timeline import now_dt

from .deps import AgentDeps

log = logging.getLogger("wayline.agent")

WATCH_HORIZON_DAYS = 16                 # Open-Meteo's forecast horizon
WATCH_EVERY_S = 6 * 3600                # at most one check per trip in this time
MAX_TRIPS_PER_PASS = 50
WATCH_KINDS = frozenset({"weather", "closed"})
NO_EDIT = ["No member edited the trip: the forecast or a place's opening hours changed since the last check."]


async def remember_seen(svc: AgentDeps, trip_id: str, finding_ids: list[str]) -> None:
    """Add findings the agent has already raised, so the watch stays quiet about them."""
    def work(tx: Tx) -> None:
        raw = tx.fetchval("SELECT seen_json FROM agent_watch WHERE trip_id = ?", (trip_id,))
        seen = set(json.loads(raw)) if raw else set()
        tx.execute(
            "INSERT INTO agent_watch (trip_id, seen_json) VALUES (?, ?) "
            "ON CONFLICT (trip_id) DO UPDATE SET seen_json = excluded.seen_json",
            (trip_id, json.dumps(sorted(seen | set(finding_ids)))))

    await svc.db.write(work)


def watched_findings(trip: Trip, legs: dict[str, list], places: dict | None, weather: dict | None, *,
                     with_fixes: bool, day_ids: set[str] | None = None) -> list[Finding]:
    """The trip's material findings of the watched kinds (pure; runs off the loop)."""
    found = []
    for day in trip.days:
        if day_ids is not None and day.id not in day_ids:
            continue
        result = review_day(trip, day, legs.get(day.id, []), trip.prefs, places, weather=weather, trip_legs=legs,
                            with_fixes=with_fixes)
        found += [f for f in result.findings if f.kind in WATCH_KINDS and f.material]
    return found


class Decider(Protocol):
    """What the watch asks about new risks (the agent's Evaluator, app/agent/proactive.py);
    an approval that hit a real conflict asks it to look at the day again."""

    async def decide(self, trip: Trip, risks: list[dict[str, Any]], edit: list[str], user_id: str | None) -> bool: ...

    async def reconsider(self, trip_id: str, day_id: str, user_id: str, why: str) -> None: ...


class Watch:
    def __init__(self, svc: AgentDeps, evaluator: Decider):
        self.svc, self.evaluator = svc, evaluator

    async def run(self) -> None:
        """The loop: a pass every interval until cancelled (shutdown)."""
        while True:
            await asyncio.sleep(self.svc.agent_timing.watch_interval_s)
            try:
                await self.pass_once()
            except Exception:  # one bad pass must not end the loop
                log.exception("agent watch: the pass failed")

    async def pass_once(self) -> list[str]:
        """Check the trips that are due; returns the ids of the trips checked."""
        now = now_dt(self.svc)
        today = now.date()
        rows = await self.svc.db.fetchall(
            "SELECT t.id FROM trips t LEFT JOIN agent_watch w ON w.trip_id = t.id "
            "WHERE t.start_date <= ? AND date(t.start_date, '+' || "
            "  ((SELECT COUNT(*) FROM days d WHERE d.trip_id = t.id) - 1) || ' days') >= ? "
            "AND (w.checked_at IS NULL OR w.checked_at <= ?) "
            "ORDER BY w.checked_at IS NOT NULL, w.checked_at LIMIT ?",
            ((today + timedelta(days=WATCH_HORIZON_DAYS)).isoformat(), today.isoformat(),
             iso(now - timedelta(seconds=WATCH_EVERY_S)), MAX_TRIPS_PER_PASS))
        checked = []
        for row in rows:
            try:
                if await self.check_trip(row[0]):
                    checked.append(row[0])
                    continue
            except NotFound:
                continue  # deleted meanwhile
            except Exception:  # one trip's trouble must not stop the others' checks
                log.exception("agent watch: a trip's check failed")
            await self._put_back(row[0])
        return checked

    async def _put_back(self, trip_id: str) -> None:
        """A skipped or failed trip goes to the back of the queue (what it has
        seen is kept), or it would come first again in every pass."""
        await self.svc.db.write(lambda tx: tx.execute(
            "INSERT INTO agent_watch (trip_id, checked_at) VALUES (?, ?) "
            "ON CONFLICT (trip_id) DO UPDATE SET checked_at = excluded.checked_at",
            (trip_id, iso(now_dt(self.svc)))))

    async def check_trip(self, trip_id: str) -> bool:
        """One trip: ask about new risks, store what was seen. False when skipped."""
        svc = self.svc
        entry = await svc.trip_cache.entry(trip_id)
        trip, legs = entry.trip, dict(entry.legs)
        weather = await trip_weather(svc.weather, trip)
        if weather is None and trip.dest_lat is not None:
            log.info("agent watch: skipped a trip, its weather is unavailable")
            return False
        places = await stop_places(svc.places, trip.all_stops(), trip_country(trip))
        found = await asyncio.to_thread(watched_findings, trip, legs, places, weather, with_fixes=False)
        row = await svc.db.fetchone("SELECT seen_json FROM agent_watch WHERE trip_id = ?", (trip_id,))
        seen = set(json.loads(row[0])) if row else set()
        new = [f for f in found if f.id not in seen]
        current = {f.id for f in found}
        if new:
            # The fixes are computed only for the days with something new.
            days = {f.day_id for f in new if f.day_id}
            detailed = await asyncio.to_thread(watched_findings, trip, legs, places, weather, with_fixes=True,
                                               day_ids=days)
            risks = [f.to_json() for f in detailed if f.id in {n.id for n in new}]
            try:
                decided = await self.evaluator.decide(trip, risks, NO_EDIT, trip.created_by)
            except AppError as exc:   # limits reached, provider down: ask again next time
                log.info("agent watch: evaluation skipped: %s", exc.code)
                decided = False
            if not decided:           # refused, or the trip moved on meanwhile: still unseen
                current -= {f.id for f in new}
        await svc.db.write(lambda tx: tx.execute(
            "INSERT INTO agent_watch (trip_id, checked_at, seen_json) VALUES (?, ?, ?) "
            "ON CONFLICT (trip_id) DO UPDATE SET checked_at = excluded.checked_at, seen_json = excluded.seen_json",
            (trip_id, iso(now_dt(svc)), json.dumps(sorted(current)))))
        return True
