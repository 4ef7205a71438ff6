// Writes kept on this device until the server has them: comments, votes and
// the trip ops the registry marks as safe to send later (GET /api/config
// `offlineOps`). Every other write needs a connection.
//
// Each write is stored (IndexedDB "outbox", kept.js) before it is sent, with
// its own Idempotency-Key: if the answer is lost on the way (the connection
// dropped, the page closed), sending it again cannot apply it twice; the
// server answers the repeat with the first answer. Writes go one at a time,
// in the order they were made, through the normal write path.
//
// Every op also carries `madeOnVersion` from its first try: the trip
// version it was made on. A write made online may reach the trip late too
// (its answer lost, a busy server asked again 10 s on), and each try must be
// the same request for its Idempotency-Key. The server refuses it if another member
// changed the same thing meanwhile (409 changed_meanwhile) or it names
// something gone (404); such a write is kept as "failed" with the server's
// sentence and shown to its author until dismissed, never dropped quietly.
//
// Whoever shows a trip listens (`onOutbox`) and applies each answer through
// the store's one place for a write's answer (store.applyWriteAnswer).
//
// send(write) -> Promise of {answer} once sent, or {queued: true} when it
// waits for a connection; rejects with the ApiError when the server refused a
// write made while online (the caller shows it, nothing is kept).

import { api } from "../api.js";
import { isOnline, onConnection } from "./connection.js";
import { storeAll, storeDelete, storePut } from "./kept.js";

const RETRY_MS = 10000; // a busy or failing server is asked again after this
const listeners = new Set();
const entries = new Map(); // key -> write, in the order made (Map keeps insertion order)
const waiters = new Map(); // key -> {resolve, reject}: a write made online whose caller awaits it
let loaded = null;
let flushing = false;
let again = false;
let retryTimer = null;
let generation = 0; // +1 each time this device's writes are forgotten (forgetWrites)

function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function load() {
  if (!loaded) {
    loaded = storeAll("outbox").then((all) => {
      for (const w of all.sort((a, b) => a.seq - b.seq)) entries.set(w.key, w);
    });
  }
  return loaded;
}

function emit(event) {
  for (const fn of [...listeners]) {
    try {
      fn(event);
    } catch (err) {
      console.error(err);
    }
  }
}

// fn({type: "queued" | "sent" | "failed" | "dismissed", write, answer?}); returns the unsubscribe.
export function onOutbox(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

// The trip's writes on this device, oldest first: waiting (`kept` once they
// wait for the connection) and failed.
export function writesOf(tripId) {
  return [...entries.values()].filter((w) => w.tripId === tripId).sort((a, b) => a.seq - b.seq);
}

// Every write this device still holds (waiting or failed).
export function allWrites() {
  return [...entries.values()];
}

export async function ready() {
  await load();
}

// `write`: {tripId, kind: "op" | "comment" | "vote", method, path, body,
// label (what it is, in words: "Move “Belém” to Day 2"), op?, stopId?,
// madeOnVersion?}. Sent at once when online (after any older kept writes).
export async function send(write) {
  await load();
  const offline = !isOnline();
  const body = { ...write.body };
  if (write.kind === "op" && typeof write.madeOnVersion === "number") body.madeOnVersion = write.madeOnVersion;
  // `kept`: it waits for the connection (made offline, or its sending could not get through). A write
  // made online is not shown as waiting while its first try is on the way (no flicker on every change).
  const entry = { ...write, body, key: newKey(), seq: Date.now() * 1000 + entries.size, createdAt: new Date().toISOString(),
    madeOffline: offline, kept: offline, state: "waiting", error: null };
  entries.set(entry.key, entry);
  await storePut("outbox", entry.key, entry);
  emit({ type: "queued", write: entry });
  if (offline) return { queued: true };
  const settled = new Promise((resolve, reject) => waiters.set(entry.key, { resolve, reject }));
  flush();
  return settled;
}

// This device's data was cleared (signing out, another account): nothing
// kept is sent any more.
export function forgetWrites() {
  generation += 1; // a write on its way now leaves nothing behind when its answer comes
  entries.clear();
  for (const waiter of waiters.values()) waiter.resolve({ queued: true });
  waiters.clear();
  loaded = Promise.resolve();
}

// Forget a failed write once its author has read what happened.
export async function dismiss(key) {
  const entry = entries.get(key);
  if (!entry || entry.state !== "failed") return;
  entries.delete(key);
  await storeDelete("outbox", key);
  emit({ type: "dismissed", write: entry });
}

// Sends the waiting writes in order; stops at the first that cannot get
// through (it and the rest wait: for the connection, or RETRY_MS when the
// server was busy).
export async function flush() {
  await load();
  if (flushing) {
    again = true; // a write made during this pass, after the pass went by
    return;
  }
  flushing = true;
  clearTimeout(retryTimer);
  retryTimer = null;
  try {
    do {
      again = false;
      for (const entry of [...entries.values()]) {
        if (entry.state !== "waiting" || !entries.has(entry.key)) continue;
        if (!isOnline() || (await deliver(entry)) === "stop") {
          again = false;
          await settleWaitersAsQueued();
          break;
        }
      }
    } while (again);
  } finally {
    flushing = false;
  }
}

// Sending stopped: every write still waiting is kept for later (and shown
// so), and callers waiting for one made online learn it was kept.
async function settleWaitersAsQueued() {
  for (const entry of entries.values()) {
    if (entry.state !== "waiting" || entry.kept) continue;
    entry.kept = true;
    await storePut("outbox", entry.key, entry);
    emit({ type: "queued", write: entry });
  }
  for (const [key, waiter] of waiters) {
    waiters.delete(key);
    waiter.resolve({ queued: true });
  }
}

async function deliver(entry) {
  const waiter = waiters.get(entry.key);
  const sentIn = generation;
  let answer;
  try {
    answer = await api(entry.path, { method: entry.method, body: entry.body, headers: { "Idempotency-Key": entry.key } });
  } catch (err) {
    if (sentIn !== generation) return "next"; // forgotten meanwhile (signed out): nothing is kept of it
    if (err.status === 0 || err.status === 401) return "stop"; // not reached, or not signed in: tried again later
    if (err.status === 408 || err.status === 429 || err.status >= 500) {
      // busy, or the body arrived too slowly (a poor connection): asked again with the same key
      retryTimer = setTimeout(flush, RETRY_MS);
      return "stop";
    }
    if (waiter) {
      // Made online: its caller shows the refusal where it was made; nothing is kept.
      waiters.delete(entry.key);
      entries.delete(entry.key);
      await storeDelete("outbox", entry.key);
      waiter.reject(err);
      return "next";
    }
    const failed = { ...entry, state: "failed", error: { status: err.status, code: err.code, message: err.message } };
    entries.set(entry.key, failed);
    await storePut("outbox", entry.key, failed);
    emit({ type: "failed", write: failed });
    return "next";
  }
  if (sentIn !== generation) return "next";
  entries.delete(entry.key);
  await storeDelete("outbox", entry.key);
  emit({ type: "sent", write: entry, answer });
  if (waiter) {
    waiters.delete(entry.key);
    waiter.resolve({ answer });
  }
  return "next";
}

onConnection((online) => {
  if (online) flush();
});
