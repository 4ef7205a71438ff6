"""App-wide AI limits, reservations, leases and usage records (app/aiusage.py)."""

from __future__ import annotations

import asyncio
import json
import queue as queue_module
from datetime import UTC, datetime

import anyio
import pytest
from pydantic import BaseModel

# The racing processes' server (forkserver) imports this module, so its top level stays
# light: the app, the SDK and the helpers are imported inside the tests that use them.
from app.ai import AIError
from app.aiusage import LIMIT_MESSAGE, AIUsage
from app.db import Database
from app.errors import Busy, Unavailable
from app.settings import Settings
from standins.openai_standin import TEST_KEY, ai_settings

NOON = datetime(2026, 12, 10, 12, 0, tzinfo=UTC).timestamp()


@pytest.fixture
def settings(settings):
    """Most tests here are about the app-wide limits, spent by one member: a
    whole share (1.0) leaves them alone. The share's own tests set 0.25."""
    return settings.with_(ai_user_daily_share=1.0)


class FakeClock:
    def __init__(self, start: float = NOON):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Reply(BaseModel):
    answer: str


async def open_usage(settings: Settings, clock=None) -> AIUsage:
    return AIUsage(await Database.open(settings.db_path), settings, clock=clock or FakeClock())


async def rows(usage: AIUsage) -> list[dict]:
    return [dict(r) for r in await usage.db.fetchall("SELECT * FROM ai_usage ORDER BY rowid")]


async def spend(usage: AIUsage, calls: int, tokens=(100, 50), feature="copilot") -> None:
    for _ in range(calls):
        async with usage.guard(user_id="u1", trip_id="t1", feature=feature) as g:
            g.record(*tokens)


def log_lines(capsys) -> list[dict]:
    out = capsys.readouterr().out
    return [json.loads(line) for line in out.splitlines() if line.startswith('{"event":"AI_')]


# -- limits -------------------------------------------------------------------


@pytest.mark.anyio
async def test_daily_limit_holds_across_restarts(settings):
    settings = settings.with_(ai_daily_limit=2)
    clock = FakeClock()
    first = await open_usage(settings, clock)
    await spend(first, 2)
    await first.db.close()

    # A new Database on the same file: the counts come from SQLite, not memory.
    second = await open_usage(settings, clock)
    with pytest.raises(Unavailable) as refused:
        await second.reserve("u2", None, "plan_day")
    assert refused.value.status == 503 and refused.value.code == "ai_limit"
    assert refused.value.message == LIMIT_MESSAGE
    assert len(await rows(second)) == 2  # a refused call writes no row
    await second.db.close()


def test_limit_holds_in_a_restarted_app(settings):
    from helpers import make_client

    settings = settings.with_(ai_daily_limit=1)
    with make_client(settings) as client:
        usage = client.app.state.services.aiusage
        client.portal.call(spend, usage, 1)
    with make_client(settings) as client:  # a restart: a new app on the same file
        usage = client.app.state.services.aiusage
        with pytest.raises(Unavailable):
            client.portal.call(usage.reserve, "u1", None, "copilot")


def _race_worker(db_path: str, settings: Settings, now: float, barrier, results) -> None:
    """One process: its own Database on the shared file, then one reservation."""

    async def main() -> str:
        usage = AIUsage(await Database.open(db_path), settings, clock=lambda: now)
        try:
            barrier.wait(timeout=60)
            try:
                await usage.reserve("racer", None, "agent_chat")
                return "admitted"
            except Busy as exc:
                return "share" if exc.code == "ai_user_limit" else "busy"
            except Unavailable:
                return "limit"
        finally:
            await usage.db.close()

    results.put(asyncio.run(main()))


@pytest.mark.parametrize("limits, taken, admitted, refusal", [
    ({"ai_daily_limit": 5, "ai_concurrent": 50}, 2, 3, "limit"),   # 3 daily slots left
    ({"ai_daily_limit": 100, "ai_concurrent": 2}, 0, 2, "busy"),   # 2 concurrent slots
    ({"ai_daily_limit": 20, "ai_concurrent": 50, "ai_user_daily_share": 0.25}, 0, 5, "share"),  # a quarter of 20
])
def test_six_processes_race_for_the_remaining_slots(settings, limits, taken, admitted, refusal):
    settings = settings.with_(**limits)

    async def prepare():
        usage = await open_usage(settings)
        await spend(usage, taken)
        await usage.db.close()

    anyio.run(prepare)
    # Six real processes, each with its own Database on the file, forked from one server
    # process that imported this module (and so the app's pieces) once for the worker
    # (helpers.forked_context), instead of six fresh interpreters importing them again.
    from helpers import forked_context

    ctx = forked_context(__name__)
    barrier, results = ctx.Barrier(6), ctx.Queue()
    workers = [ctx.Process(target=_race_worker, args=(settings.db_path, settings, NOON, barrier, results))
               for _ in range(6)]
    for worker in workers:
        worker.start()
    try:
        outcomes = [results.get(timeout=90) for _ in workers]
    except queue_module.Empty:
        pytest.fail("a racing process did not answer")
    finally:
        for worker in workers:
            worker.join(timeout=30)
        results.close()
        results.join_thread()
    assert all(worker.exitcode == 0 for worker in workers)
    assert sorted(outcomes) == sorted(["admitted"] * admitted + [refusal] * (6 - admitted))

    async def count():
        usage = await open_usage(settings)
        found = await rows(usage)
        await usage.db.close()
        return found

    found = anyio.run(count)
    assert len(found) == taken + admitted
    assert sum(r["status"] == "running" for r in found) == admitted


@pytest.mark.anyio
async def test_each_member_has_a_share_of_the_calls_and_the_tokens_that_renews_at_midnight(settings, capsys):
    clock = FakeClock()
    usage = await open_usage(settings.with_(ai_daily_limit=8, ai_daily_tokens=40_000, ai_user_daily_share=0.25,
                                            ai_concurrent=50), clock)
    assert usage.user_share() == (2, 10_000)
    await spend(usage, 2)   # u1's two calls
    with pytest.raises(Busy) as refused:
        await usage.reserve("u1", "t1", "copilot")
    error = refused.value.to_json()["error"]
    assert refused.value.status == 429 and error["code"] == "ai_user_limit"
    assert error["resetsAt"] == "2026-12-11T00:00:00.000Z" and error["retryAfterS"] == 12 * 3600
    assert "12 h 0 min" in error["message"]
    log_lines(capsys)
    await usage.reserve("u2", "t1", "copilot")    # the others keep theirs
    await usage.reserve(None, "t1", "agent_eval")  # work charged to no one is not a share
    # Tokens: a call whose reservation would take the member past 10,000 is refused too.
    await spend_tokens(usage, "u3", 8_000)
    with pytest.raises(Busy) as refused:
        await usage.reserve("u3", "t1", "copilot", max_output_tokens=3_000)
    assert refused.value.code == "ai_user_limit"
    await usage.reserve("u3", "t1", "copilot", max_output_tokens=2_000)   # this one fits
    assert [line["limit"] for line in log_lines(capsys) if line["event"] == "AI_LIMIT_REACHED"] == ["user_tokens"]
    clock.advance(12 * 3600)   # midnight UTC: a new share
    await usage.reserve("u1", "t1", "copilot")
    await usage.db.close()


async def spend_tokens(usage: AIUsage, user_id: str, tokens: int) -> None:
    async with usage.guard(user_id=user_id, trip_id="t1", feature="copilot", max_output_tokens=100) as g:
        g.record(tokens, 0)


@pytest.mark.anyio
async def test_concurrency_limit_is_busy_429(settings):
    usage = await open_usage(settings.with_(ai_concurrent=2))
    first = await usage.reserve("u1", "t1", "copilot")
    await usage.reserve("u2", "t1", "agent_chat")
    with pytest.raises(Busy) as busy:
        await usage.reserve("u3", "t1", "plan_day")
    assert busy.value.status == 429 and busy.value.code == "busy"
    await usage.finish(first, "completed", 10, 5)
    await usage.reserve("u3", "t1", "plan_day")  # a finished call frees its slot
    await usage.db.close()


@pytest.mark.anyio
async def test_expired_lease_is_closed_as_abandoned_and_frees_its_slot(settings, capsys):
    settings = settings.with_(ai_concurrent=1, ai_timeout_ms=10_000)
    clock = FakeClock()
    usage = await open_usage(settings, clock)
    crashed = await usage.reserve("u1", "t1", "copilot")  # never finished: a crash mid-call
    clock.advance(39)  # lease = timeout (10 s) + 30 s: not over yet
    with pytest.raises(Busy):
        await usage.reserve("u2", "t1", "copilot")
    clock.advance(2)
    fresh = await usage.reserve("u2", "t1", "copilot")
    by_id = {r["id"]: r for r in await rows(usage)}
    assert by_id[crashed.id]["status"] == "abandoned"
    assert by_id[crashed.id]["reserved_output_tokens"] == settings.ai_max_output_tokens  # still counted
    assert by_id[fresh.id]["status"] == "running"
    assert any(line["event"] == "AI_REQUEST_FAILED" and line["status"] == "abandoned"
               and line["id"] == crashed.id for line in log_lines(capsys))
    await usage.db.close()


@pytest.mark.anyio
async def test_a_call_cancelled_while_reserving_frees_its_slot_at_once(settings, capsys):
    """The member left while their call's row was being written: the writer
    committed it as running, and it held the one concurrent slot until its
    lease ran out (the timeout and 30 s). It is closed as cancelled instead."""
    usage = await open_usage(settings.with_(ai_concurrent=1))
    entered = asyncio.Event()

    async def call() -> None:
        async with usage.guard(user_id="u1", trip_id="t1", feature="copilot"):
            entered.set()

    task = asyncio.ensure_future(call())
    await asyncio.sleep(0)   # the task is now waiting on the writer
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not entered.is_set()
    deadline = asyncio.get_running_loop().time() + 30
    while [r["status"] for r in await rows(usage)] in ([], ["running"]):   # written, then closed
        assert asyncio.get_running_loop().time() < deadline, "the cancelled call's row stayed running"
        await asyncio.sleep(0.01)
    [row] = await rows(usage)
    assert row["status"] == "failed" and row["reserved_output_tokens"] == 0 and row["output_tokens"] == 0
    assert any(line["event"] == "AI_REQUEST_FAILED" and line.get("error") == "cancelled" for line in log_lines(capsys))
    fresh = await usage.reserve("u2", "t1", "copilot")   # the slot is free, not Busy
    await usage.finish(fresh, "completed", 1, 1)
    await usage.db.close()


def test_a_restart_abandons_the_earlier_process_calls_at_once(settings, capsys):
    """One process owns the file: calls left running by a crashed process are
    closed as abandoned when the next app starts, not when their leases end."""
    from helpers import make_client

    settings = settings.with_(ai_concurrent=2)

    async def crash() -> list[str]:  # a process that died mid-call: its rows stay running
        usage = AIUsage(await Database.open(settings.db_path), settings, boot_id="earlier-boot")
        taken = [await usage.reserve("u1", "t1", "copilot"), await usage.reserve("u2", None, "agent_chat")]
        await usage.db.close()
        return [r.id for r in taken]

    crashed = anyio.run(crash)
    with make_client(settings) as client:
        usage = client.app.state.services.aiusage
        assert usage.boot_id != "earlier-boot"
        found = {r["id"]: r for r in client.portal.call(rows, usage)}
        assert [found[i]["status"] for i in crashed] == ["abandoned", "abandoned"]
        assert [found[i]["reserved_output_tokens"] for i in crashed] == [settings.ai_max_output_tokens] * 2
        # Both slots are free at once (the leases had over a minute to run).
        mine = [client.portal.call(usage.reserve, "u3", None, "plan_day") for _ in range(2)]
        with pytest.raises(Busy):
            client.portal.call(usage.reserve, "u3", None, "plan_day")
        # This process's own running calls are never abandoned.
        assert client.portal.call(usage.abandon_earlier_boots) == 0
        assert {r["id"] for r in client.portal.call(rows, usage) if r["status"] == "running"} == {m.id for m in mine}
    abandoned = [line for line in log_lines(capsys) if line.get("status") == "abandoned"]
    assert sorted(line["id"] for line in abandoned) == sorted(crashed)
    assert {line["error"] for line in abandoned} == {"earlier_process"}


@pytest.mark.anyio
async def test_reservations_count_until_real_counts_replace_them(settings):
    settings = settings.with_(ai_daily_tokens=7_000, ai_max_output_tokens=3_000,
                              ai_price_input_per_mtok=2.0, ai_price_output_per_mtok=8.0)
    usage = await open_usage(settings)
    first = await usage.reserve("u1", "t1", "plan_day", max_output_tokens=2_500)
    await usage.reserve("u1", "t1", "copilot", max_output_tokens=9_999)  # capped at 3000
    with pytest.raises(Unavailable) as refused:  # 2500 + 3000 + 3000 > 7000
        await usage.reserve("u1", "t1", "copilot")
    assert refused.value.message == LIMIT_MESSAGE
    summary = await usage.today_summary()
    assert summary["reservedOutputTokens"] == 5_500 and summary["running"] == 2

    record = await usage.finish(first, "completed", 500, 200)
    assert record["costUsd"] == pytest.approx((500 * 2.0 + 200 * 8.0) / 1e6)
    await usage.reserve("u1", "t1", "copilot")  # 700 + 3000 + 3000 <= 7000
    row = {r["id"]: r for r in await rows(usage)}[first.id]
    assert (row["input_tokens"], row["output_tokens"], row["reserved_output_tokens"]) == (500, 200, 0)
    assert row["status"] == "completed" and row["duration_ms"] == 0 and row["cost_usd"] == pytest.approx(0.0026)
    await usage.db.close()


@pytest.mark.anyio
async def test_cost_is_null_without_both_prices(settings):
    usage = await open_usage(settings.with_(ai_price_input_per_mtok=2.0))
    await spend(usage, 1)
    assert (await rows(usage))[0]["cost_usd"] is None
    assert (await usage.today_summary())["costUsd"] is None
    await usage.db.close()


@pytest.mark.anyio
async def test_the_day_rolls_over_at_utc_midnight(settings):
    clock = FakeClock(datetime(2026, 12, 10, 23, 59, 58, tzinfo=UTC).timestamp())
    usage = await open_usage(settings.with_(ai_daily_limit=1), clock)
    await spend(usage, 1)
    with pytest.raises(Unavailable):
        await usage.reserve("u1", None, "copilot")
    clock.advance(3)  # 00:00:01 UTC on the 11th
    await spend(usage, 1, feature="agent_eval")
    assert (await usage.today_summary())["calls"] == 1
    days = await usage.last_30_days()
    assert [(d["date"], d["feature"], d["calls"]) for d in days] == [
        ("2026-12-11", "agent_eval", 1), ("2026-12-10", "copilot", 1)]
    clock.advance(30 * 86400)  # older than 30 days drops out of the history
    assert await usage.last_30_days() == []
    await usage.db.close()


@pytest.mark.anyio
async def test_unknown_feature_is_a_programming_error(settings):
    usage = await open_usage(settings)
    with pytest.raises(ValueError):
        await usage.reserve("u1", None, "poetry")
    await usage.db.close()


# -- the guard with the real gateway ------------------------------------------


def gateway(usage: AIUsage):
    from app.ai import AI

    return AI(usage.settings, usage)


async def guarded_call(ai, question: str = "Is my day OK?") -> str:
    answer = await ai.structured(feature="copilot", user_id="u1", trip_id="t1", name="copilot_answer",
                                 schema=Reply, instructions="Answer.", input=question, max_output_tokens=800)
    return answer.answer


@pytest.mark.anyio
async def test_a_refused_call_never_reaches_the_provider(settings, openai_standin, capsys):
    settings = ai_settings(settings, openai_standin, ai_daily_limit=1)
    usage = await open_usage(settings)
    ai = gateway(usage)
    openai_standin.reply_json({"answer": "First answer"})
    openai_standin.reply_json({"answer": "Second answer"})
    try:
        assert await guarded_call(ai) == "First answer"
        with pytest.raises(Unavailable):
            await guarded_call(ai)
        assert openai_standin.request_count == 1
    finally:
        await ai.close()
        await usage.db.close()
    lines = log_lines(capsys)
    assert [line["event"] for line in lines] == ["AI_REQUEST_COMPLETED", "AI_LIMIT_REACHED"]
    assert lines[0]["inputTokens"] == 100 and lines[0]["outputTokens"] == 50
    assert lines[1]["limit"] == "daily_calls"


@pytest.mark.anyio
async def test_busy_while_a_call_is_running_then_free(settings, openai_standin):
    settings = ai_settings(settings, openai_standin, ai_concurrent=1)
    usage = await open_usage(settings)
    ai = gateway(usage)
    openai_standin.hold()
    openai_standin.reply_json({"answer": "Held answer"}, usage=(222, 11))
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(guarded_call, ai)
            await anyio.to_thread.run_sync(openai_standin.wait_for_requests, 1)
            with pytest.raises(Busy):
                await guarded_call(ai)
            openai_standin.release()
        assert openai_standin.request_count == 1
        [row] = await rows(usage)
        assert (row["status"], row["input_tokens"], row["output_tokens"]) == ("completed", 222, 11)
        assert row["reserved_output_tokens"] == 0
    finally:
        await ai.close()
        await usage.db.close()


@pytest.mark.anyio
async def test_failures_are_recorded_and_free_the_slot(settings, openai_standin, capsys):
    # The timeout is the only call that waits it out: its answer comes when the stand-in stops.
    # The other two answer at once, well inside a timeout that a loaded machine cannot reach.
    settings = ai_settings(settings, openai_standin, ai_concurrent=1, ai_timeout_ms=10_000)
    usage = await open_usage(settings)
    ai = gateway(usage)
    openai_standin.fail(500)
    openai_standin.reply_json({"answer": "too late"}, delay=600)
    openai_standin.reply_text("not json at all", usage=(90, 9))
    try:
        for _ in range(3):
            with pytest.raises(AIError):
                await guarded_call(ai)
    finally:
        await ai.close()
    found = await rows(usage)
    assert [r["status"] for r in found] == ["failed"] * 3
    # 500: nothing spent; timeout: unknown, the reservation stays; bad output: real counts.
    assert [(r["input_tokens"], r["output_tokens"], r["reserved_output_tokens"]) for r in found] == [
        (0, 0, 0), (0, 0, 800), (90, 9, 0)]
    lines = log_lines(capsys)
    assert [line["error"] for line in lines if line["event"] == "AI_REQUEST_FAILED"] == [
        "ai_provider_error", "ai_timeout", "ai_bad_output"]
    await usage.db.close()


@pytest.mark.anyio
async def test_logs_never_hold_the_key_prompt_or_answer(settings, openai_standin, capsys):
    settings = ai_settings(settings, openai_standin, ai_daily_limit=2)
    usage = await open_usage(settings)
    ai = gateway(usage)
    openai_standin.reply_json({"answer": "SECRET-ANSWER-TEXT"})
    openai_standin.fail(401)
    try:
        await guarded_call(ai, question="SECRET-PROMPT-TEXT")
        with pytest.raises(AIError):
            await guarded_call(ai, question="SECRET-PROMPT-TEXT")
        with pytest.raises(Unavailable):
            await guarded_call(ai, question="SECRET-PROMPT-TEXT")
    finally:
        await ai.close()
        await usage.db.close()
    captured = capsys.readouterr()
    output = captured.out + captured.err
    events = [json.loads(line)["event"] for line in captured.out.splitlines() if line.startswith("{")]
    assert events == ["AI_REQUEST_COMPLETED", "AI_REQUEST_FAILED", "AI_LIMIT_REACHED"]
    for secret in (TEST_KEY, "sk-", "SECRET-PROMPT-TEXT", "SECRET-ANSWER-TEXT", "Incorrect API key"):
        assert secret not in output
