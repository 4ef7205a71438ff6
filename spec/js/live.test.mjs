// public/live.js: a connected page confirms its presence every minute and
// again when it is shown, so the server can drop a page that went silent
// (a phone that lost its connection) from who is looking at which day.
// The browser is stood in for: EventSource, fetch, document and the clock.
// Run: node --test spec/js/live.test.mjs
import { test, mock } from "node:test";
import assert from "node:assert/strict";

const listeners = {};
globalThis.window = { addEventListener() {} };
globalThis.navigator = { onLine: true };
globalThis.document = {
  visibilityState: "visible",
  documentElement: { dataset: {} },
  addEventListener(type, fn) {
    (listeners[type] ||= new Set()).add(fn);
  },
  removeEventListener(type, fn) {
    listeners[type]?.delete(fn);
  },
};

const sources = [];
globalThis.EventSource = class {
  constructor(url) {
    this.url = url;
    this.handlers = {};
    sources.push(this);
  }
  addEventListener(kind, fn) {
    this.handlers[kind] = fn;
  }
  close() {}
  emit(kind, data, id = "e-1") {
    this.handlers[kind]({ data: JSON.stringify(data), lastEventId: id });
  }
};

const puts = [];
globalThis.fetch = async (path, init) => {
  if (init.method === "PUT") puts.push({ path, body: JSON.parse(init.body) });
  return { ok: true, status: 200, text: async () => '{"data":{}}' };
};

const { startLive } = await import("../../public/live.js");

function shown(state) {
  document.visibilityState = state;
  for (const fn of listeners.visibilitychange || []) fn();
}

test("presence is confirmed every minute while connected, at once when shown, and never after stop", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const live = startLive("trip1", {}, { presenceEveryMs: 60000 });
    const source = sources.at(-1);
    live.setPresence("day1");
    assert.equal(puts.length, 0, "not before the stream said which connection it is");
    source.emit("hello", { connectionId: "c1", resumed: false });
    assert.deepEqual(puts.map((p) => p.body), [{ connectionId: "c1", dayId: "day1" }]);
    assert.equal(puts[0].path, "/api/trips/trip1/presence");

    mock.timers.tick(59999);
    assert.equal(puts.length, 1);
    mock.timers.tick(1);
    assert.equal(puts.length, 2, "confirmed after a minute");
    mock.timers.tick(60000);
    assert.equal(puts.length, 3);

    live.setPresence("day2"); // a new day: sent now, and the minute starts again
    assert.deepEqual(puts.at(-1).body, { connectionId: "c1", dayId: "day2" });
    mock.timers.tick(30000);
    assert.equal(puts.length, 4);
    shown("hidden");
    assert.equal(puts.length, 4, "hiding the page sends nothing");
    shown("visible");
    assert.equal(puts.length, 5, "shown again: confirmed at once");
    mock.timers.tick(59999);
    assert.equal(puts.length, 5, "and the minute counts from there");
    mock.timers.tick(1);
    assert.equal(puts.length, 6);

    live.stop();
    mock.timers.tick(600000);
    shown("visible");
    assert.equal(puts.length, 6, "a stopped page confirms nothing");
  } finally {
    mock.timers.reset();
  }
});

test("a page that has not said which day it shows sends no presence", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const before = puts.length;
    const live = startLive("trip2", {}, {});
    sources.at(-1).emit("hello", { connectionId: "c2", resumed: false });
    mock.timers.tick(300000);
    shown("visible");
    assert.equal(puts.length, before);
    live.setPresence(null); // outside the itinerary: no particular day, still there
    assert.deepEqual(puts.at(-1).body, { connectionId: "c2", dayId: null });
    live.stop();
  } finally {
    mock.timers.reset();
  }
});
