"""What committed is heard in phases (app/changes.py), whatever order the
subscribers registered in; one failing subscriber does not silence the
others; and a read that must not be older than an announced change reads
again, a bounded number of times (app/shared_reads.py)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import anyio

from app.changes import ChangeBus, Phase, TripChanged, TripEvent
from app.db import Database
from app.shared_reads import FreshReads


@dataclass(frozen=True)
class Commented(TripEvent):
    body: str

    def kinds(self) -> frozenset[str]:
        return frozenset({"social"})


def test_phases_run_in_order_whatever_order_they_subscribed_in(tmp_path):
    async def main():
        db = await Database.open(str(tmp_path / "p.db"))
        heard: list[tuple[str, str]] = []
        try:
            # Registered backwards on purpose: the phase decides, not the order.
            db.changes.subscribe(Phase.AGENT, Commented, lambda e: heard.append(("agent", e.body)))
            db.changes.subscribe(Phase.LIVE, TripEvent, lambda e: heard.append(("live", type(e).__name__)))
            db.changes.subscribe(Phase.HEADS, TripEvent, lambda e: heard.append(("heads", type(e).__name__)))
            db.changes.subscribe(Phase.CACHES, TripEvent, lambda e: heard.append(("caches", type(e).__name__)))

            def work(tx):
                tx.touch("t1", "social")
                tx.announce(Commented("t1", "@agent where do we eat?"))

            await db.write(work)
        finally:
            await db.close()
        assert heard == [("caches", "TripChanged"), ("caches", "Commented"),
                         ("heads", "TripChanged"), ("heads", "Commented"),
                         ("live", "TripChanged"), ("live", "Commented"),
                         ("agent", "@agent where do we eat?")]

    anyio.run(main)


def test_a_failing_subscriber_is_logged_and_the_later_phases_still_hear(caplog):
    bus = ChangeBus()
    heard: list[str] = []

    def broken(event):
        raise RuntimeError("a bug in one subscriber")

    bus.subscribe(Phase.CACHES, TripEvent, broken)
    bus.subscribe(Phase.CACHES, TripEvent, lambda e: heard.append("caches"))
    bus.subscribe(Phase.AGENT, TripEvent, lambda e: heard.append("agent"))
    bus.publish([TripChanged("t1", frozenset({"content"}))])
    assert heard == ["caches", "agent"]
    assert "a change subscriber failed (caches)" in caplog.text


def test_a_fresh_read_reads_again_while_changes_land_and_gives_up_after_its_tries():
    async def main():
        fresh = FreshReads(tries=3)
        calls = 0

        async def overtaken():   # a change of the key is announced during every read
            nonlocal calls
            calls += 1
            await asyncio.sleep(0)
            fresh.changed("t1")
            return calls

        value, clean = await fresh.read("t1", overtaken)
        assert (value, clean, calls) == (3, False, 3)   # answered, not kept: the next change is announced anyway

        async def once_overtaken():
            nonlocal calls
            calls += 1
            if calls == 4:
                fresh.changed("t1")
            return calls

        value, clean = await fresh.read("t1", once_overtaken)
        assert (value, clean) == (5, True)

        fresh.changed("t1")   # no read in flight: nothing to remember
        assert not fresh.reading("t1")

    anyio.run(main)
