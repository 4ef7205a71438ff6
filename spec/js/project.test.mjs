// public/offline/project.js: every op the page may keep while offline (the
// registry's `replay` ops, spec/fixtures/offline_ops.json, which
// spec/test_offline_replay.py checks against GET /api/config) shows in the
// picture of the trip. A kept write the picture leaves out looks lost, and its
// author makes it again: so a new offline op (a delete, one day) fails here
// until project.js shows it.
// Run: node --test spec/js/project.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { projectTrip } from "../../public/offline/project.js";

const { offlineOps } = JSON.parse(readFileSync(new URL("../fixtures/offline_ops.json", import.meta.url), "utf8"));

function stop(id, name, position, start) {
  return { id, name, kind: "sight", note: "", position, durationMin: 60, startMinutes: start, endMinutes: start + 60,
    votes: { up: 0, down: 0, mine: 0 }, commentCount: 0 };
}

// The server's trip: Castle and Belém on day 1, Sintra on day 2, one expense.
function serverTrip() {
  return {
    id: "t1", version: 7,
    days: [
      { id: "d1", position: 0, title: "", startTime: "09:00", stops: [stop("castle", "Castle", 0, 540), stop("belem", "Belém", 1, 610)] },
      { id: "d2", position: 1, title: "", startTime: "09:00", stops: [stop("sintra", "Sintra", 0, 540)] },
    ],
    expenses: [{ id: "taxi", title: "Taxi", amountMinor: 2000, currency: "EUR", paidBy: "alice", split: null }],
  };
}

const stopIn = (trip, dayId, stopId) => trip.days.find((d) => d.id === dayId).stops.find((s) => s.id === stopId);
const expense = (trip, id) => (trip.expenses || []).find((e) => e.id === id);

// One write of each op, and what the picture must show for it.
const SAMPLES = {
  update_day: { args: { dayId: "d1", title: "Old town" }, shows: (t) => t.days[0].title === "Old town" },
  insert_stop: { args: { dayId: "d1", name: "Tram 28" },
    shows: (t) => stopIn(t, "d1", "pending:k1")?.name === "Tram 28" && stopIn(t, "d1", "pending:k1").pending === true },
  update_stop: { args: { stopId: "castle", name: "Castle at dusk" },
    shows: (t) => stopIn(t, "d1", "castle")?.name === "Castle at dusk" && stopIn(t, "d1", "castle").pending === true },
  move_stop: { args: { stopId: "belem", toDayId: "d2", position: 0 },
    shows: (t) => t.days[1].stops[0].id === "belem" && t.days[1].stops[0].pending === true && !stopIn(t, "d1", "belem") },
  add_expense: { args: { title: "Dinner", amountMinor: 4250, currency: "EUR", paidBy: "alice" },
    shows: (t) => expense(t, "pending:k1")?.title === "Dinner" && expense(t, "pending:k1").pending === true },
  update_expense: { args: { expenseId: "taxi", amountMinor: 2500 },
    shows: (t) => expense(t, "taxi")?.amountMinor === 2500 && expense(t, "taxi").pending === true },
};

const kept = (op, args) => ({ key: "k1", kind: "op", op, body: args, state: "waiting", kept: true });

for (const op of offlineOps) {
  test(`${op} made offline shows in the picture of the trip`, () => {
    const sample = SAMPLES[op];
    assert.ok(sample, `${op} can be kept offline: show it in public/offline/project.js and add a sample here`);
    const trip = serverTrip();
    assert.equal(sample.shows(trip), false, "the sample changes something");
    assert.equal(sample.shows(projectTrip(trip, [kept(op, sample.args)])), true);
    assert.deepEqual(trip, serverTrip(), "the server's trip is left as it was");
  });
}

test("a write still on its first try, or refused, is not laid over the trip", () => {
  const trip = serverTrip();
  const { args } = SAMPLES.update_stop;
  assert.equal(projectTrip(trip, [{ ...kept("update_stop", args), kept: false }]), trip);
  assert.equal(projectTrip(trip, [{ ...kept("update_stop", args), state: "failed" }]), trip);
});
