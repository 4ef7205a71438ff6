// public/offline/kept.js and outbox.js when this device is cleared (signing
// out) while answers are still on their way: nothing that arrives afterwards
// is kept. IndexedDB is stood in for by an in-memory one answering through
// callbacks, as the browser does; the server by a fetch held until the test
// lets it answer. Run: node --test spec/js/kept.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";

globalThis.window = { addEventListener() {} };
globalThis.navigator = { onLine: true };
globalThis.document = { documentElement: { dataset: {} }, addEventListener() {}, querySelectorAll: () => [] };

// -- an IndexedDB in memory ------------------------------------------------------------

const stores = new Map();
function request(work, done) {
  const r = {};
  queueMicrotask(() => {
    r.result = work();
    if (r.onsuccess) r.onsuccess();
    done();
  });
  return r;
}
const database = {
  objectStoreNames: { contains: (name) => stores.has(name) },
  createObjectStore: (name) => stores.set(name, new Map()),
  transaction() {
    const tx = {};
    let open = 0;
    const done = () => {
      open -= 1;
      if (open === 0) queueMicrotask(() => tx.oncomplete && tx.oncomplete());
    };
    tx.objectStore = (name) => {
      const s = stores.get(name);
      const ask = (work) => {
        open += 1;
        return request(work, done);
      };
      return {
        get: (key) => ask(() => s.get(key)),
        getAll: () => ask(() => [...s.values()]),
        put: (value, key) => ask(() => s.set(key, structuredClone(value)) && key),
        delete: (key) => ask(() => s.delete(key) && undefined),
        clear: () => ask(() => s.clear()),
      };
    };
    return tx;
  },
};
globalThis.indexedDB = {
  open() {
    const r = { result: database };
    queueMicrotask(() => {
      if (!stores.size && r.onupgradeneeded) r.onupgradeneeded();
      r.onsuccess();
    });
    return r;
  },
};
const rows = (name) => [...(stores.get(name) || new Map()).values()];

// -- a server whose answers wait for the test ------------------------------------------

const held = [];
globalThis.fetch = (path, init = {}) => new Promise((resolve) => {
  held.push({ path, init, answer: (status, body) => resolve({ ok: status < 300, status, text: async () => JSON.stringify(body) }) });
});
async function nextRequest() {
  while (!held.length) await new Promise((resolve) => setImmediate(resolve));
  return held.shift();
}

const kept = await import("../../public/offline/kept.js");
const outbox = await import("../../public/offline/outbox.js");
const { noteReached } = await import("../../public/offline/connection.js");

test("a read answered after the device was cleared is not kept", async () => {
  const reading = kept.readThrough("/api/trips/t1/days/d1/review");
  const req = await nextRequest();
  kept.forget(); // signing out while the trip's reviews are still being read one after another
  req.answer(200, { data: { status: "ok", findings: [] } });
  assert.equal((await reading).data.status, "ok"); // the page that asked still gets its answer
  await kept.storeAll("reads"); // every write queued before this one has run
  assert.equal(await kept.kept("/api/trips/t1/days/d1/review"), undefined);
  assert.deepEqual(rows("reads"), []);
  // Afterwards (the next account) reads are kept as ever.
  const next = kept.readThrough("/api/trips");
  (await nextRequest()).answer(200, { data: { trips: [] } });
  await next;
  await kept.storeAll("reads");
  assert.deepEqual(rows("reads").map((r) => r.url), ["/api/trips"]);
});

test("a trip page's copy made before the device was cleared is not kept after it", async () => {
  await kept.forget();
  const madeIn = kept.keptEra(); // a trip page opened now (planner/store.js)
  await kept.keep("/api/trips/t2", { id: "t2" }, Date.now(), madeIn);
  assert.ok(await kept.kept("/api/trips/t2"));
  await kept.forget(); // signed out; the page's late echo or poll comes after
  await kept.keep("/api/trips/t2", { id: "t2", version: 9 }, Date.now(), madeIn);
  await kept.stillCurrent("/api/trips/t2", madeIn);
  assert.deepEqual(rows("reads"), []);
});

test("a kept write whose refusal arrives after signing out leaves nothing behind", async () => {
  await kept.forget();
  await outbox.ready();
  navigator.onLine = false;
  noteReached(false);
  assert.deepEqual(await outbox.send({ tripId: "t3", kind: "comment", method: "POST", path: "/api/trips/t3/stops/s1/comments",
    body: { body: "Go early" }, label: "Comment on “Castle”" }), { queued: true });
  navigator.onLine = true;
  noteReached(true); // back online: the kept comment is on its way
  const req = await nextRequest();
  assert.equal(rows("outbox").length, 1);
  outbox.forgetWrites(); // signing out meanwhile: app.js forgets the writes, then the device
  await kept.forget();
  req.answer(409, { error: { code: "changed_meanwhile", message: "Refused" } });
  // The next account's write goes after it in the same pass: once it is sent, the refused one was handled.
  const after = outbox.send({ tripId: "t4", kind: "comment", method: "POST", path: "/api/trips/t4/stops/s9/comments",
    body: { body: "Hello" }, label: "Comment on “Ribeira”" });
  (await nextRequest()).answer(201, { data: { id: "c1" } });
  assert.ok((await after).answer);
  await kept.storeAll("outbox");
  assert.deepEqual(outbox.allWrites(), []);
  assert.deepEqual(rows("outbox"), []);
});
