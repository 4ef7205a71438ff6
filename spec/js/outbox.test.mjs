// public/offline/outbox.js sending the writes kept offline once the
// connection is back, and offline/words.js saying a refusal in words. The
// browser is stood in for: fetch (the server), navigator, document; without
// IndexedDB the outbox keeps its writes in memory only (kept.js).
// Run: node --test spec/js/outbox.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";

globalThis.window = { addEventListener() {} };
globalThis.navigator = { onLine: false };
globalThis.document = { documentElement: { dataset: {} }, addEventListener() {}, querySelectorAll: () => [] };

// The server: answers each request with `answer(path, body)`, {status, body}; records what it got.
const received = [];
let answer = () => ({ status: 200, body: { data: { ok: true } } });
globalThis.fetch = async (path, init = {}) => {
  const body = init.body ? JSON.parse(init.body) : null;
  received.push({ path, body, key: init.headers && init.headers["Idempotency-Key"] });
  const { status, body: out } = answer(path, body);
  return { ok: status < 300, status, text: async () => JSON.stringify(out), json: async () => out };
};

const outbox = await import("../../public/offline/outbox.js");
const { noteReached } = await import("../../public/offline/connection.js");
const { refusalText } = await import("../../public/offline/words.js");

const events = [];
outbox.onOutbox((e) => events.push(e));

// Until none of the trip's writes waits any more (each one sent or refused).
async function sent(tripId) {
  while (outbox.writesOf(tripId).some((w) => w.state === "waiting")) await new Promise((resolve) => setImmediate(resolve));
}

function kept(tripId, label, body, extra = {}) {
  return outbox.send({ tripId, kind: "op", op: "update_stop", method: "POST", path: `/api/trips/${tripId}/ops/update_stop`,
    body, label, madeOnVersion: 3, ...extra });
}

test("back online, a refused write is kept with its reason and the ones after it still go, in order", async () => {
  assert.deepEqual(await kept("t1", "Set “Castle” to 10:00", { stopId: "s1", setTime: "10:00" }), { queued: true });
  await kept("t1", "Set “Belém” to 11:00", { stopId: "s2", setTime: "11:00" });
  await kept("t1", "Set “Sintra” to 12:00", { stopId: "s3", setTime: "12:00" });
  answer = (path, body) => (body.stopId === "s2"
    ? { status: 409, body: { error: { code: "changed_meanwhile", message: "Before your change reached the trip, Bob removed “Belém” from Day 1, so this change was not made." } } }
    : { status: 200, body: { data: { ok: true, summary: "done" } } });
  noteReached(true); // the connection is back: the outbox sends what it kept
  await sent("t1");
  assert.deepEqual(received.map((r) => r.body.stopId), ["s1", "s2", "s3"]);
  assert.ok(received.every((r) => r.body.madeOnVersion === 3 && r.key), "made offline: version and key");
  const left = outbox.writesOf("t1");
  assert.equal(left.length, 1);
  assert.equal(left[0].state, "failed");
  assert.equal(refusalText(left[0]), "Before your change reached the trip, Bob removed “Belém” from Day 1, so this change was not made.");
  assert.deepEqual(events.filter((e) => e.type === "sent").map((e) => e.write.body.stopId), ["s1", "s3"]);
  // Dismissed once read; nothing stays.
  await outbox.dismiss(left[0].key);
  assert.equal(outbox.writesOf("t1").length, 0);
});

test("a refused write is said in words: a thing gone by what it is, not by its id", () => {
  const write = (error) => ({ tripTitle: "Lisbon", state: "failed", error });
  assert.equal(refusalText(write({ status: 404, code: "stop_not_found", message: "No stop 6ba7f00d in this trip" })),
    "That stop is no longer in the trip: someone else may have just removed it.");
  assert.equal(refusalText(write({ status: 404, code: "expense_not_found", message: "No expense 8f7a in this trip" })),
    "That expense is no longer in the trip: someone else may have just removed it.");
  // The trip itself answered 404: its author was removed from it, or it was deleted.
  assert.equal(refusalText(write({ status: 404, code: "not_found", message: "Trip not found" })),
    "You are no longer a member of “Lisbon”, or it was deleted, so this change was not made.");
  assert.equal(refusalText(write({ status: 409, code: "idempotency_unknown",
    message: "The first request with this Idempotency-Key did not finish (the server restarted), …" })),
  "The server restarted while this change was being sent, so it may or may not have been made. "
    + "Check the plan, and make it again if it is not there.");
  assert.equal(refusalText(write({ status: 403, code: "forbidden", message: "Only owners and editors can do this; you are a viewer on this trip." })),
    "Only owners and editors can do this; you are a viewer on this trip.");
});

test("removed from one trip meanwhile: its writes are refused, another trip's still go, nothing waits for ever", async () => {
  received.length = 0;
  noteReached(false);
  await kept("gone", "Set “Castle” to 10:00", { stopId: "g1", setTime: "10:00" }, { tripTitle: "Lisbon" });
  await kept("other", "Set “Ribeira” to 18:00", { stopId: "o1", setTime: "18:00" });
  await kept("gone", "Set “Belém” to 11:00", { stopId: "g2", setTime: "11:00" }, { tripTitle: "Lisbon" });
  answer = (path) => (path.startsWith("/api/trips/gone/")
    ? { status: 404, body: { error: { code: "not_found", message: "Trip not found" } } }
    : { status: 200, body: { data: { ok: true } } });
  noteReached(true);
  await sent("gone");
  await sent("other");
  assert.deepEqual(received.map((r) => r.body.stopId), ["g1", "o1", "g2"]);
  assert.equal(outbox.writesOf("other").length, 0);
  const refused = outbox.writesOf("gone");
  assert.deepEqual(refused.map((w) => w.state), ["failed", "failed"]);
  assert.equal(refusalText(refused[0]), "You are no longer a member of “Lisbon”, or it was deleted, so this change was not made.");
});

test("a server that cannot answer now (503) keeps the write waiting; sent again later with the same key", async () => {
  received.length = 0;
  noteReached(false);
  await kept("t2", "Set “Castle” to 09:00", { stopId: "c1", setTime: "09:00" });
  answer = () => ({ status: 503, body: { error: { code: "busy", message: "Busy" } } });
  noteReached(true);
  while (received.length < 1) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(outbox.writesOf("t2").map((w) => [w.state, w.kept]), [["waiting", true]]);
  answer = () => ({ status: 200, body: { data: { ok: true } } });
  await outbox.flush();   // what the retry timer (or the next reconnect) does
  await sent("t2");
  assert.equal(outbox.writesOf("t2").length, 0);
  assert.ok(received.length >= 2);
  assert.equal(new Set(received.map((r) => r.key)).size, 1, "every try with the write's own key");
  await outbox.flush();   // idle now: also clears the retry timer the 503 set
});

test("an op sent online carries its version from the first try, and a retry is the same request", async () => {
  // Its answer lost or put off (a busy server), it reaches the trip later like one made offline: the
  // server must be able to tell if another member changed the same thing meanwhile, and the retry
  // must be the request the Idempotency-Key was first sent with.
  received.length = 0;
  noteReached(true);
  answer = () => ({ status: 503, body: { error: { code: "busy", message: "Busy" } } });
  const answered = kept("t3", "Set “Castle” to 08:00", { stopId: "c3", setTime: "08:00" });
  while (received.length < 1) await new Promise((resolve) => setImmediate(resolve));
  answer = () => ({ status: 200, body: { data: { ok: true, summary: "done" } } });
  await outbox.flush();
  await answered;
  assert.ok(received.length >= 2);
  assert.ok(received.every((r) => r.body.madeOnVersion === 3), "the version from the first try");
  assert.equal(new Set(received.map((r) => JSON.stringify([r.key, r.body]))).size, 1, "each try the same request");
  await outbox.flush();
});
