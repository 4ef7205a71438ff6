// What this device keeps so Wayline opens without a connection, in
// IndexedDB (database "wayline"):
//   reads   url -> {url, data, savedAt}  the last answer of each read the page
//           keeps: who I am, the config and meals, the trips list, and for
//           every trip opened its TripDto, day reviews, weather and the
//           comment threads looked at
//   media   path -> {path, tripId, type, blob, bytes, savedAt}  thumbnails of
//           the images in an opened trip's notes (at most MEDIA_PER_TRIP per
//           trip, each at most THUMB_PX wide); the service worker answers
//           /api/uploads/… with them when there is no connection
//   outbox  key -> a write made on this device and not yet sent (outbox.js)
//   meta    "owner" -> the user whose data this is
// Signing out (or another account signing in) clears all of it: `forget()`.
// Without IndexedDB (some private windows) nothing is kept and every read
// simply goes to the network.

import { get, ApiError } from "../api.js";

const DB_NAME = "wayline"; // the service worker reads "media" (public/sw.js)
const DB_VERSION = 1;
const STORES = ["reads", "media", "outbox", "meta"];
export const MEDIA_PER_TRIP = 24;
const THUMB_PX = 480;

let opening = null;
// Counts the times this device's data was cleared. An answer to a read (or a
// trip page) from before the last clearing is never kept: signing out while a
// trip's reviews or thumbnails were still on their way left them on the
// device after `forget()`, for the next person to open offline.
let era = 0;
export const keptEra = () => era;

function openDb() {
  if (!opening) {
    opening = new Promise((resolve) => {
      let request;
      try {
        request = indexedDB.open(DB_NAME, DB_VERSION);
      } catch {
        resolve(null);
        return;
      }
      request.onupgradeneeded = () => {
        const db = request.result;
        for (const name of STORES) if (!db.objectStoreNames.contains(name)) db.createObjectStore(name);
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => resolve(null);
      request.onblocked = () => resolve(null);
    });
  }
  return opening;
}

// One transaction on `store`: `work(objectStore)` returns a request (or
// nothing); resolves with its result once the transaction is done.
async function run(store, mode, work) {
  const db = await openDb();
  if (!db) return undefined;
  return new Promise((resolve, reject) => {
    let result;
    const tx = db.transaction(store, mode);
    const request = work(tx.objectStore(store));
    if (request) request.onsuccess = () => { result = request.result; };
    tx.oncomplete = () => resolve(result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

export const storeGet = (store, key) => run(store, "readonly", (s) => s.get(key)).catch(() => undefined);
export const storePut = (store, key, value) => run(store, "readwrite", (s) => s.put(value, key)).catch(() => {});
export const storeDelete = (store, key) => run(store, "readwrite", (s) => s.delete(key)).catch(() => {});
export const storeAll = (store) => run(store, "readonly", (s) => s.getAll()).then((v) => v || []).catch(() => []);

// -- reads -------------------------------------------------------------------------

// `madeIn`: the era the answer was asked for in (keptEra()); not kept if cleared since.
export function keep(url, data, savedAt = Date.now(), madeIn = era) {
  if (madeIn !== era) return Promise.resolve();
  return storePut("reads", url, { url, data, savedAt });
}

export function kept(url) {
  return storeGet("reads", url);
}

// A read that falls back on what this device kept when the server cannot be
// reached: {data, savedAt, fromDevice}. Errors the server answered (404,
// 401, …) are thrown as they are: a kept copy never hides them.
export async function readThrough(url) {
  const madeIn = era;
  try {
    const data = await get(url);
    const savedAt = Date.now();
    keep(url, data, savedAt, madeIn);
    return { data, savedAt, fromDevice: false };
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 0) throw err;
    const copy = await kept(url);
    if (!copy) throw err;
    return { data: copy.data, savedAt: copy.savedAt, fromDevice: true };
  }
}

// readThrough's data alone.
export async function keptGet(url) {
  return (await readThrough(url)).data;
}

// The trip's kept TripDto is still current as of now (a 304 said so).
export async function stillCurrent(url, madeIn = era) {
  const copy = await kept(url);
  if (copy) await keep(url, copy.data, Date.now(), madeIn);
}

// -- the owner, and forgetting -----------------------------------------------------

// Called once who is signed in is known: another account's data never
// shows. True when an earlier account's data was cleared.
export async function claimFor(userId) {
  const owner = await storeGet("meta", "owner");
  const other = Boolean(owner && owner !== userId);
  if (other) await forget();
  if (owner !== userId) await storePut("meta", "owner", userId);
  return other;
}

export async function forget() {
  era += 1; // at once: whatever is on its way now is not kept
  const db = await openDb();
  if (!db) return;
  await new Promise((resolve) => {
    const tx = db.transaction(STORES, "readwrite");
    for (const name of STORES) tx.objectStore(name).clear();
    tx.oncomplete = resolve;
    tx.onerror = resolve;
    tx.onabort = resolve;
  });
}

// A trip that is not this account's any more (its member removed, the trip
// deleted): its kept answers and thumbnails go, so it does not open from
// this device offline. Its kept writes stay until their refusal is read
// (outbox.js, offline/status.js).
export function forgetTrip(tripId) {
  return forgetTripsWhere((id) => id === tripId);
}

// The server's list of this account's trips just came: any other trip kept
// here is not theirs any more (removed while this page was elsewhere).
export function keepOnlyTrips(tripIds) {
  const mine = new Set(tripIds);
  return forgetTripsWhere((id) => !mine.has(id));
}

const TRIP_READ = /^\/api\/trips\/([^/?]+)(?:[/?]|$)/;

async function forgetTripsWhere(gone) {
  const db = await openDb();
  if (!db) return;
  await new Promise((resolve) => {
    const tx = db.transaction(["reads", "media", "meta"], "readwrite");
    const reads = tx.objectStore("reads");
    const keys = reads.getAllKeys();
    keys.onsuccess = () => {
      for (const url of keys.result) {
        const match = TRIP_READ.exec(String(url));
        if (match && gone(decodeURIComponent(match[1]))) reads.delete(url);
      }
    };
    const media = tx.objectStore("media");
    const thumbs = media.getAll();
    thumbs.onsuccess = () => {
      for (const thumb of thumbs.result) if (thumb && gone(thumb.tripId)) media.delete(thumb.path);
    };
    const meta = tx.objectStore("meta");
    const marks = meta.getAllKeys();
    marks.onsuccess = () => {
      for (const key of marks.result) if (String(key).startsWith("reviews:") && gone(String(key).slice(8))) meta.delete(key);
    };
    tx.oncomplete = resolve;
    tx.onerror = resolve;
    tx.onabort = resolve;
  });
}

// -- thumbnails ----------------------------------------------------------------------

const IMAGE_LINK = /!\[[^\]]*\]\((\/api\/uploads\/trips\/[^)\s]+)\)/g;

// Keeps thumbnails of the images in the trip's stop notes (the first
// MEDIA_PER_TRIP; the ones already kept are not fetched again). Quiet: a
// failure only means an image is missing offline.
export async function keepThumbnails(trip, madeIn = era) {
  const paths = [];
  for (const day of trip.days || []) {
    for (const stop of day.stops || []) {
      for (const match of (stop.note || "").matchAll(IMAGE_LINK)) {
        if (!paths.includes(match[1])) paths.push(match[1]);
      }
    }
  }
  for (const path of paths.slice(0, MEDIA_PER_TRIP)) {
    if (madeIn !== era) return; // this device was cleared meanwhile (signed out)
    if (await storeGet("media", path)) continue;
    try {
      const res = await fetch(path, { credentials: "same-origin" });
      if (!res.ok) continue;
      const blob = await thumbnail(await res.blob());
      if (blob && madeIn === era) await storePut("media", path, { path, tripId: trip.id, type: blob.type, blob, bytes: blob.size, savedAt: Date.now() });
    } catch {
      return; // offline again: the rest waits for the next time the trip opens
    }
  }
}

// The image at most THUMB_PX wide (JPEG); small images as they are.
async function thumbnail(blob) {
  if (!blob.type.startsWith("image/")) return null;
  if (typeof createImageBitmap !== "function" || typeof OffscreenCanvas !== "function") {
    return blob.size <= 256 * 1024 ? blob : null;
  }
  const bitmap = await createImageBitmap(blob);
  if (bitmap.width <= THUMB_PX && blob.size <= 256 * 1024) {
    bitmap.close();
    return blob;
  }
  const scale = Math.min(1, THUMB_PX / bitmap.width);
  const canvas = new OffscreenCanvas(Math.max(1, Math.round(bitmap.width * scale)), Math.max(1, Math.round(bitmap.height * scale)));
  canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  return canvas.convertToBlob({ type: "image/jpeg", quality: 0.8 });
}
