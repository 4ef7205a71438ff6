"""Proactive suggestions: evaluate members' edits, approve or dismiss patches.

Evaluation (an op listener, debounced per trip): after a member's op the
review rules (`app.review.findings.material_risks`, with the trip's places and weather
loaded as the review route loads them) look for a NEW material risk. Only
then is the model asked for an `intervention_decision`, so a benign edit costs
nothing and a burst of edits costs one call. The forecast watch
(app/agent/watch.py) asks the same way when a risk appears without an edit.
The model chooses; the server owns the facts: the patch it may pick is one of
the fixes review computed and verified (by its id, stored exactly; several
edits are one patch, `{"edits": [...]}`), or an op of PATCH_OPS that
validates and applies to the current trip; anything else is dropped. When it
speaks up without a usable pick and a risk has a computed fix, that fix is
the patch. A suggestion remembers the finding its fix clears (resolve.py
marks it `resolved` once that finding is gone).

- shouldNotify, confidence >= AI_PROACTIVE_THRESHOLD, a usable patch:
  an assistant message and a pending suggestion (members see a toast);
- shouldNotify otherwise: a quiet observation line, no toast;
- not shouldNotify: nothing.

Approval: edit rights (viewers 403), non-pending 409, expired 409 (marked
expired); when the trip moved on since the suggestion, the patch is checked
again against the trip as it is (its finding still there, its edits still
valid) and applied on it, so an unrelated edit costs nothing; a finding
that is gone marks it resolved (409 `resolved`), edits that no longer apply
mark it stale (409 `stale`) and the agent looks at the day again. Then a
claim with a single `UPDATE ... WHERE status = 'pending'` so concurrent
approvals are first come, first served, and `apply_ops` (one change, one
timeline line) attributed to the approver.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from ..ids import new_id
from ..ai import require_ai
from ..errors import AppError, NotFound
from .deps import AgentDeps
from ..trips.model import Trip
from ..trips.ops import PATCH_OPS, TRIP_OPS, OpContext, validate_args
from ..db import Tx
from ..trips import store
from ..trips.edits import as_patch
from ..trips.events import OpsApplied
from ..review.facts import stop_places, trip_country, trip_weather
from ..review.findings import material_risks, review_day
from .timeline import iso, now_dt
from . import focus
from .snapshot import agent_snapshot
from .watch import remember_seen

log = logging.getLogger("wayline.agent")

EVAL_MAX_OUTPUT_TOKENS = 800
DEFAULT_EXPIRY_MIN = 120
MAX_EXPIRY_MIN = 7 * 24 * 60
AGENT_SOURCES = ("agent", "suggestion")  # ops the agent itself caused are never re-evaluated


# -- the model's answer --------------------------------------------------------


def _json_object(value: Any) -> Any:
    """`args` arrives as a JSON string (what a strict schema can carry) or an object."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise ValueError("args must be a JSON object") from None
    return value


PatchArgs = Annotated[
    dict[str, Any], BeforeValidator(_json_object),
    WithJsonSchema({"type": "string", "description": "The operation's arguments as a JSON object, encoded as a "
                    "string. To choose a computed fix, copy its args exactly."}),
]


class PendingPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    op: Literal[PATCH_OPS]  # type: ignore[valid-type]
    args: PatchArgs


class InterventionDecision(BaseModel):
    """Structured output `intervention_decision` (spec section 10), plus the
    id of the computed fix the model picks (`fixId`)."""

    model_config = ConfigDict(extra="forbid")
    shouldNotify: bool
    severity: Literal["low", "medium", "high"]
    confidence: float = Field(ge=0, le=1)
    reason: str
    suggestion: str
    pendingPatch: PendingPatch | None
    expiresInMinutes: int | None
    fixId: str | None = Field(default=None, description="The id of the computed fix to propose (preferred), "
                                                        "or null.")


EVAL_INSTRUCTIONS = """You watch a shared trip plan for a small group and speak up only for MATERIAL planning risks:
impossible timing, duplicate or conflicting stops, a stop its opening hours rule out, weather or season conflicts,
avoidable backtracking, and inconsistent budget entries. Style, taste and minor inefficiencies are not material:
stay quiet.

You get the trip, the edit a member just made (or, with no edit, a note that the forecast or the opening hours
changed), and the risks the server's rules found that are NEW, each with fixes the server computed and verified
(exact registry operations).
Answer with intervention_decision:
- shouldNotify: true only if a member should hear about this now.
- severity: low | medium | high; confidence: 0..1 that this is a real problem worth interrupting for.
- reason: one sentence a member understands; suggestion: one short sentence proposing the change.
- fixId: the id of the computed fix to propose (a fix may be several edits applied together). Prefer this.
- pendingPatch: null when you give a fixId; otherwise your own single edit {op, args} (args as a JSON string),
  or null when no fix fits. Never invent ids.
- expiresInMinutes: how long the proposal stays useful (for example 120), or null."""


# -- risks and patches ---------------------------------------------------------


SUGGESTION_OPS = frozenset(name for name, spec in TRIP_OPS.items() if spec.agent)   # a computed fix's edits


def risk_json(finding: Any) -> dict:
    """A finding as the model and the suggestion see it (with its day)."""
    return finding.to_json() if hasattr(finding, "to_json") else dict(finding)


def new_risks(before: Trip, after: Trip, places: dict | None = None, weather: dict | None = None) -> list[dict]:
    """Material risks present after the edit and not before (review rules, no I/O)."""
    return [risk_json(f) for f in material_risks(before, after, places=places, weather=weather)]


def offered_fixes(risks: list[dict]) -> list[tuple[dict, dict]]:
    """(risk, fix) for every computed fix a suggestion may carry."""
    return [(risk, fix) for risk in risks for fix in risk.get("fixes", [])
            if all(edit["op"] in SUGGESTION_OPS for edit in fix["edits"])]


def _same_args(model_args: dict, fix_args: dict) -> bool:
    """Equal when every key means the same thing; a missing key and null are
    the same to a strict-schema model, which must send every field."""
    keys = set(model_args) | set(fix_args)
    return all(model_args.get(k) == fix_args.get(k) for k in keys)


def dry_run(trip: Trip, op: str, args: dict, actor_id: str = "agent") -> dict:
    """Validate against TRIP_OPS and apply to a copy of `trip`; the args as
    they will be sent to apply_ops. Raises AppError when it cannot apply."""
    validated = validate_args(op, args)
    TRIP_OPS[op].apply(trip.edit(), validated, OpContext(actor_id=actor_id, now=""))
    return validated.model_dump(mode="json", exclude_unset=True)


@dataclass(frozen=True)
class Chosen:
    patch: dict                  # {"edits": [...], "label"?, "op"?, "args"?}
    finding: dict | None         # {id, kind, dayId, stopIds}: what the patch clears; None for the model's own edit


def _fix_patch(risk: dict, fix: dict) -> Chosen:
    edits = [(e["op"], e["args"]) for e in fix["edits"]]
    return Chosen(as_patch(edits, label=fix["label"]),
                  {"id": risk["id"], "kind": risk["kind"], "dayId": risk.get("dayId"), "stopIds": risk["stopIds"]})


def choose_patch(decision: InterventionDecision, risks: list[dict], trip: Trip) -> Chosen | None:
    """The patch to store: the computed fix the model picked (by id, or by
    copying a one-edit fix), exactly as the server computed it; else the
    model's own PATCH_OPS op if it validates and applies to this trip; else,
    when a risk has a computed fix, the first one (the cheapest of the first
    risk). None when there is nothing to propose."""
    fixes = offered_fixes(risks)
    picked = decision.pendingPatch
    for risk, fix in fixes:
        if decision.fixId is not None and fix["id"] == decision.fixId:
            return _fix_patch(risk, fix)
    for risk, fix in fixes:
        if picked is not None and len(fix["edits"]) == 1 and fix["edits"][0]["op"] == picked.op \
                and _same_args(picked.args, fix["edits"][0]["args"]):
            return _fix_patch(risk, fix)
    if picked is not None:
        args = {k: v for k, v in picked.args.items() if v is not None}
        try:
            return Chosen(as_patch([(picked.op, dry_run(trip, picked.op, args))]), None)
        except AppError:
            log.info("agent evaluation: dropped a patch that does not apply (%s)", picked.op)
    return _fix_patch(*fixes[0]) if fixes else None


# -- evaluation ------------------------------------------------------------------


@dataclass
class _Burst:
    before: Trip
    after: Trip
    actor_id: str
    deadline: float
    summaries: list[str] = field(default_factory=list)


class Evaluator:
    """Subscribed to `OpsApplied` (the AGENT phase) when AI is on. It only
    records the edit; a tracked background task waits out the debounce and
    evaluates everything since the first edit of the burst at once."""

    def __init__(self, svc: AgentDeps):
        self.svc = svc
        self._bursts: dict[str, _Burst] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def debounce_s(self) -> float:
        return float(self.svc.agent_timing.debounce_s)

    def __call__(self, event: OpsApplied) -> None:
        if event.source in AGENT_SOURCES or self.svc.ai is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.debounce_s
        burst = self._bursts.get(event.trip_id)
        if burst is None:
            self._bursts[event.trip_id] = _Burst(event.before, event.after, event.actor_id, deadline,
                                                 list(event.summaries))
            self.svc.background.spawn(self._after_quiet(event.trip_id), name=f"agent-eval-{event.trip_id}")
        else:
            burst.after, burst.actor_id, burst.deadline = event.after, event.actor_id, deadline
            burst.summaries.extend(event.summaries)

    async def _after_quiet(self, trip_id: str) -> None:
        loop = asyncio.get_running_loop()
        while True:
            wait = self._bursts[trip_id].deadline - loop.time()
            if wait <= 0:
                break
            await asyncio.sleep(wait)
        lock = self._locks.setdefault(trip_id, asyncio.Lock())
        async with lock:  # one evaluation of a trip at a time
            # Taken only now: edits made while the previous evaluation ran joined
            # this burst, and a decision that came too late can hand it its edits.
            burst = self._bursts.pop(trip_id)
            try:
                await self.evaluate(trip_id, burst)
            except NotFound:
                pass  # the trip was deleted meanwhile
            except AppError as exc:  # limits reached, provider down: the edit stands, we stay quiet
                log.info("agent evaluation skipped: %s", exc.code)
            except Exception:
                log.exception("agent evaluation failed")

    async def evaluate(self, trip_id: str, burst: _Burst) -> None:
        # The trip as the burst's last edit left it, not as it is now: an edit
        # landing after the debounce starts its own burst, and judging it here
        # too would raise its risks twice.
        svc, after = self.svc, burst.after
        # The facts the review route sees: every stop's place (the cache), the weather.
        places, weather = await asyncio.gather(stop_places(svc.places, [*burst.before.all_stops(), *after.all_stops()],
                                                           trip_country(after)),
                                               trip_weather(svc.weather, after))
        # Pure CPU (review simulates its fixes): off the event loop.
        risks = await asyncio.to_thread(new_risks, burst.before, after, places, weather)
        if not risks:
            return
        if await self.decide(after, risks, burst.summaries[-12:], burst.actor_id,
                             days=focus.changed(burst.before, after)):
            await remember_seen(svc, trip_id, [r["id"] for r in risks])   # the watch need not raise them again
        else:
            await self._carry_over(trip_id, burst)

    async def _carry_over(self, trip_id: str, burst: _Burst) -> None:
        """The trip moved on while the model decided, so nothing was recorded.
        The next evaluation judges from this burst's `before`: its risks are
        still new to it (when still there), else they would never be raised,
        since the next burst starts from a trip that already had them. A burst
        waiting for its turn takes them over; when the trip moved by an edit
        that is never evaluated (an approved suggestion), one more burst judges
        the trip as it is now."""
        waiting = self._bursts.get(trip_id)
        if waiting is not None:
            waiting.before, waiting.summaries = burst.before, burst.summaries + waiting.summaries
            return
        now = (await self.svc.trips.get(trip_id)).trip
        self._bursts[trip_id] = _Burst(burst.before, now, burst.actor_id, asyncio.get_running_loop().time(),
                                       list(burst.summaries))
        self.svc.background.spawn(self._after_quiet(trip_id), name=f"agent-eval-{trip_id}")

    async def decide(self, trip: Trip, risks: list[dict], edit: list[str], user_id: str | None,
                     days: list[str] | None = None) -> bool:
        """Ask the model about new material risks (feature `agent_eval`, under
        the AI limits) and record what it decided; False when the trip moved
        on meanwhile (nothing recorded). Raises AppError when the limits or
        the provider refuse. A long trip is sent with the risks' days (their
        stops, their fixes' days) and the edited `days` in full."""
        usable = {id(fix) for _, fix in offered_fixes(risks)}
        snapshot = await asyncio.to_thread(agent_snapshot, trip, [*focus.named(trip, risks), *(days or ())],
                                           now=now_dt(self.svc), can_read=False)
        payload = {"trip": snapshot, "edit": edit, "newRisks": [
            {**{k: r[k] for k in ("kind", "severity", "message", "stopIds")},
             "fixes": [f for f in r.get("fixes", []) if id(f) in usable]} for r in risks]}
        decision = await require_ai(self.svc.ai).structured(
            feature="agent_eval", user_id=user_id, trip_id=trip.id, name="intervention_decision",
            schema=InterventionDecision, instructions=EVAL_INSTRUCTIONS,
            input=json.dumps(payload, ensure_ascii=False), max_output_tokens=EVAL_MAX_OUTPUT_TOKENS)
        return await self.record(trip, decision, choose_patch(decision, risks, trip))

    async def reconsider(self, trip_id: str, day_id: str, user_id: str, why: str) -> None:
        """Look at a day again (a suggestion for it could not apply): its
        material findings as they are now go to the model like new ones, but
        for those a pending suggestion already answers (it would suggest the
        same fix twice)."""
        try:
            entry = await self.svc.trip_cache.entry(trip_id)
            trip = entry.trip
            places, weather = await asyncio.gather(stop_places(self.svc.places, trip.all_stops(), trip_country(trip)),
                                                   trip_weather(self.svc.weather, trip))
            days = [d for d in trip.days if d.id == day_id]
            risks = await asyncio.to_thread(lambda: [
                risk_json(f) for d in days
                for f in review_day(trip, d, entry.legs.get(d.id, []), trip.prefs, places, weather=weather,
                                    trip_legs=dict(entry.legs)).findings if f.material])
            waiting = {json.loads(row[0])["id"] for row in await self.svc.db.fetchall(
                "SELECT finding_json FROM agent_suggestions WHERE trip_id = ? AND status = 'pending' "
                "AND finding_json IS NOT NULL AND (expires_at IS NULL OR expires_at > ?)",
                (trip_id, iso(now_dt(self.svc))))}
            risks = [r for r in risks if r["id"] not in waiting]
            if risks:
                await self.decide(trip, risks, [why], user_id)
        except NotFound:
            pass
        except AppError as exc:
            log.info("agent re-evaluation skipped: %s", exc.code)

    async def record(self, trip: Trip, decision: InterventionDecision, chosen: Chosen | None) -> bool:
        """Store the decision; False when the trip moved on since it was read."""
        if not decision.shouldNotify:
            return True
        svc = self.svc
        threshold = svc.settings.ai_proactive_threshold
        reason, text = decision.reason.strip()[:1000], (decision.suggestion.strip() or decision.reason.strip())[:1000]
        now = now_dt(svc)

        def work(tx: Tx) -> bool:
            if tx.fetchval("SELECT version FROM trips WHERE id = ?", (trip.id,)) != trip.version:
                return False  # the trip moved on; the edit that moved it gets its own evaluation
            if decision.confidence >= threshold and chosen is not None:
                patch = chosen.patch
                suggestion_id = new_id()
                minutes = min(max(decision.expiresInMinutes or DEFAULT_EXPIRY_MIN, 1), MAX_EXPIRY_MIN)
                message = store.append_message(tx, trip.id, role="assistant", source="threshold",
                                               actor_name="Wayline agent", parts=[
                    {"type": "text", "text": text},
                    {"type": "data-suggestion", "data": {"suggestionId": suggestion_id, "severity": decision.severity,
                                                         "confidence": decision.confidence, "reason": reason,
                                                         "patch": patch}}])
                tx.touch(trip.id, "suggestions")
                tx.execute(
                    "INSERT INTO agent_suggestions (id, trip_id, message_id, status, severity, confidence, reason, "
                    "suggestion_text, patch_json, trip_version, expires_at, created_at, updated_at, finding_json) "
                    "VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (suggestion_id, trip.id, message["id"], decision.severity, decision.confidence, reason, text,
                     json.dumps(patch, ensure_ascii=False), trip.version,
                     iso(now + timedelta(minutes=minutes)), iso(now), iso(now),
                     None if chosen.finding is None else json.dumps(chosen.finding, ensure_ascii=False)))
            else:
                store.append_message(tx, trip.id, role="assistant", source="threshold", actor_name="Wayline agent",
                                     parts=[{"type": "text", "text": reason or text},
                                            {"type": "data-observation", "data": {
                                                "severity": decision.severity, "confidence": decision.confidence,
                                                "quiet": True}}])
            return True

        return await svc.db.write(work)
