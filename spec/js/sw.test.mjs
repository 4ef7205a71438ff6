// public/sw.js's answer for an uploaded image, run in a vm with stand-ins for
// the worker's globals (fetch, caches, indexedDB). Run: node --test spec/js/sw.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const SOURCE = readFileSync(new URL("../../public/sw.js", import.meta.url), "utf8");
const PATH = "/api/uploads/trips/0123456789abcdef/89abcdef01234567.png";
const KEPT = { path: PATH, type: "image/jpeg", blob: new Blob(["kept thumbnail"], { type: "image/jpeg" }) };

// An IndexedDB holding one kept thumbnail at PATH, answering as the browser does (callbacks).
function keptDb() {
  return {
    open() {
      const request = {};
      queueMicrotask(() => {
        const db = {
          objectStoreNames: { contains: (name) => name === "media" },
          close() {},
          transaction() {
            const tx = {};
            return {
              objectStore: () => ({
                get(path) {
                  const get = { transaction: tx };
                  queueMicrotask(() => { get.result = path === PATH ? KEPT : undefined; get.onsuccess(); });
                  return get;
                },
              }),
            };
          },
        };
        request.result = db;
        request.onsuccess();
      });
      return request;
    },
  };
}

// The worker's answer for PATH when the network does `network()`.
async function answer(network) {
  const handlers = {};
  const self = { location: { origin: "https://wayline.example" }, addEventListener: (kind, fn) => { handlers[kind] = fn; } };
  const context = {
    self, SHELL: { version: "t", files: ["/"] }, URL, Response, Blob, Promise, queueMicrotask,
    fetch: async () => network(), indexedDB: keptDb(), caches: { open: async () => ({ match: async () => null }) },
  };
  vm.runInNewContext(SOURCE, context);
  let responded = null;
  handlers.fetch({
    request: { method: "GET", url: `https://wayline.example${PATH}`, mode: "no-cors" },
    respondWith: (promise) => { responded = promise; },
  });
  return responded;
}

test("no connection: the kept thumbnail answers", async () => {
  const r = await answer(() => { throw new TypeError("Failed to fetch"); });
  assert.equal(await r.text(), "kept thumbnail");
});

test("the server cannot answer (503): the kept thumbnail answers", async () => {
  const r = await answer(() => new Response("busy", { status: 503 }));
  assert.equal(await r.text(), "kept thumbnail");
});

for (const status of [401, 403, 404]) {
  test(`a refusal (${status}: signed out, removed, deleted) is passed on, never the kept copy`, async () => {
    const r = await answer(() => new Response("{}", { status }));
    assert.equal(r.status, status);
    assert.equal(await r.text(), "{}");
  });
}

test("a served image is the server's", async () => {
  const r = await answer(() => new Response("fresh", { status: 200 }));
  assert.equal(await r.text(), "fresh");
});
