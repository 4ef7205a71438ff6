// Wayline's service worker: the page opens with no connection, cold.
// The server writes `const SHELL = {version, files}` in front of this file
// (app/web/service_worker.py): the page's own files and a hash of them.
//
// - Install caches the whole shell under "wayline-shell-<version>".
// - The shell is served from that cache first, the page itself included
//   (any address of the app opens index.html; the router reads the hash),
//   so a cold start offline is the same start as online. The data the page
//   shows offline is the page's business (IndexedDB, public/offline/kept.js).
// - Uploaded images are fetched as usual; when that fails (no connection, or a
//   5xx) the kept thumbnail answers (the page keeps them in IndexedDB's "media"
//   store). A 4xx refusal is passed on as it is.
// - Updates: a new page version means a new /sw.js; the browser installs it
//   beside the running one and it WAITS (no skipWaiting) until no page uses
//   the old one, so it takes over at the next start and never swaps the
//   code under someone who is editing. Activation then drops older shells.
/* global SHELL */

const CACHE = `wayline-shell-${SHELL.version}`;
const SHELL_FILES = new Set(SHELL.files);
const KEPT_DB = "wayline"; // public/offline/kept.js
const MEDIA_STORE = "media";

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL.files)));
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("wayline-shell-") && name !== CACHE) await caches.delete(name);
    }
    // The very first install: control the page that registered it, so its
    // images can be answered offline without a reload.
    await self.clients.claim();
  })());
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate" && isPageAddress(url.pathname)) {
    event.respondWith(fromShell("/", request));
  } else if (SHELL_FILES.has(url.pathname)) {
    event.respondWith(fromShell(url.pathname, request));
  } else if (url.pathname.startsWith("/api/uploads/")) {
    event.respondWith(upload(request, url.pathname));
  }
});

// Addresses that open the app (the others, e.g. the admin page or the API, go to the network).
function isPageAddress(path) {
  return path === "/" || path === "/index.html" || path.startsWith("/invite/");
}

async function fromShell(path, request) {
  const cache = await caches.open(CACHE);
  const hit = await cache.match(path);
  return hit || fetch(request);
}

// The network first; when there is none (or the server cannot answer: 5xx),
// the thumbnail the page kept (if any). A refusal is the answer: 401/403/404
// mean signed out, removed from the trip, or the file or trip deleted, and a
// kept copy must not show what the server no longer shows this person.
async function upload(request, path) {
  let response = null;
  let failure = null;
  try {
    response = await fetch(request);
    if (response.ok || response.status < 500) return response;
  } catch (err) {
    failure = err;
  }
  const kept = await keptMedia(path);
  if (kept) return new Response(kept.blob, { headers: { "Content-Type": kept.type || kept.blob.type } });
  if (response) return response;
  throw failure;
}

function keptMedia(path) {
  return new Promise((resolve) => {
    let open;
    try {
      open = indexedDB.open(KEPT_DB);
    } catch {
      resolve(null);
      return;
    }
    // Never create the page's database here (it would be made without its stores).
    open.onupgradeneeded = () => open.transaction.abort();
    open.onerror = () => resolve(null);
    open.onsuccess = () => {
      const db = open.result;
      if (!db.objectStoreNames.contains(MEDIA_STORE)) {
        db.close();
        resolve(null);
        return;
      }
      const get = db.transaction(MEDIA_STORE).objectStore(MEDIA_STORE).get(path);
      get.onsuccess = () => resolve(get.result || null);
      get.onerror = () => resolve(null);
      get.transaction.oncomplete = () => db.close();
    };
  });
}
