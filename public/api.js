// Every request the page makes goes through here.
// Success bodies are `{data: ...}`: callers get `data`. Failures are
// `{error: {code, message}}`: callers get an ApiError whose message is the
// server's plain sentence, ready to show as is.
// State-changing requests always carry a JSON body (`{}` when there is
// nothing to send): the server refuses body-less or form posts as cross-site.
// Whether a request reached the server feeds offline/connection.js.

import { noteReached } from "./offline/connection.js";

export class ApiError extends Error {
  constructor(status, code, message, details = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details; // the whole error object (e.g. latestStart, field)
  }
}

const NETWORK_MESSAGE = "Could not reach Wayline. Check your connection and try again.";
let unauthorizedHandler = null;

// The router installs this so an expired session sends people to sign in.
export function onUnauthorized(handler) {
  unauthorizedHandler = handler;
}

async function readError(res) {
  let payload = null;
  try {
    payload = await res.json();
  } catch {
    payload = null;
  }
  const err = payload && payload.error;
  const fallback = res.status === 404 ? "Not found" : `The server answered ${res.status}. Please try again.`;
  return new ApiError(res.status, (err && err.code) || `http_${res.status}`, (err && err.message) || fallback, err || {});
}

// How many requests have no answer yet, as <html data-requests> (for tests:
// at "0" every answer the page was waiting for has come, a 401 has already
// sent it to sign in; bodies may still be being read).
let inFlight = 0;
function noteInFlight(change) {
  inFlight += change;
  document.documentElement.dataset.requests = String(inFlight);
}

async function send(path, init) {
  noteInFlight(1);
  try {
    return await sendNow(path, init);
  } finally {
    noteInFlight(-1);
  }
}

async function sendNow(path, init) {
  let res;
  try {
    res = await fetch(path, { credentials: "same-origin", ...init });
  } catch (e) {
    if (e && e.name === "AbortError") throw e;
    noteReached(false);
    throw new ApiError(0, "network", NETWORK_MESSAGE);
  }
  noteReached(true);
  if (!res.ok && res.status !== 304) {
    const error = await readError(res);
    if (res.status === 401 && unauthorizedHandler && !path.startsWith("/api/auth/")) unauthorizedHandler(error);
    throw error;
  }
  return res;
}

// `headers`: extra request headers (the offline queue's Idempotency-Key).
export async function api(path, { method = "GET", body, signal, headers = {} } = {}) {
  const init = { method, signal, headers: { Accept: "application/json", ...headers } };
  if (method !== "GET" && method !== "HEAD") {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body === undefined ? {} : body);
  }
  const res = await send(path, init);
  const text = await res.text();
  if (!text) return null;
  let payload;
  try {
    payload = JSON.parse(text);
  } catch {
    throw new ApiError(res.status, "bad_response", "The server sent an answer the page could not read.");
  }
  return payload && typeof payload === "object" && "data" in payload ? payload.data : payload;
}

export const get = (path, opts = {}) => api(path, { ...opts, method: "GET" });

// Conditional GET for polling: null when the server answers 304 (nothing
// changed since `etag`), else `{data, etag}`.
export async function getIfChanged(path, etag) {
  const headers = { Accept: "application/json" };
  if (etag) headers["If-None-Match"] = etag;
  const res = await send(path, { method: "GET", headers, cache: "no-store" });
  if (res.status === 304) return null;
  const payload = await res.json();
  return { data: payload.data, etag: res.headers.get("ETag") };
}
export const post = (path, body = {}, opts = {}) => api(path, { ...opts, method: "POST", body });
export const put = (path, body = {}, opts = {}) => api(path, { ...opts, method: "PUT", body });
export const patch = (path, body = {}, opts = {}) => api(path, { ...opts, method: "PATCH", body });
export const del = (path, body = {}, opts = {}) => api(path, { ...opts, method: "DELETE", body });

// Multipart upload (the browser sets the boundary header itself).
export async function upload(path, file, field = "file") {
  const form = new FormData();
  form.append(field, file, file.name);
  const res = await send(path, { method: "POST", body: form, headers: { Accept: "application/json" } });
  const payload = await res.json();
  return payload && "data" in payload ? payload.data : payload;
}

// The AI SDK UI message stream over SSE: `data: <json>\n\n` frames ending with
// `data: [DONE]`. Calls onChunk(chunk) for each parsed chunk, in order.
export async function streamChunks(path, body, { onChunk, signal } = {}) {
  const res = await send(path, {
    method: "POST",
    signal,
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body === undefined ? {} : body),
  });
  const type = res.headers.get("content-type") || "";
  if (!type.includes("text/event-stream")) {
    throw new ApiError(res.status, "bad_response", "The agent answered without a stream. Please try again.");
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    let value, done;
    try {
      ({ value, done } = await reader.read());
    } catch (err) {
      // The connection dropped mid-answer: the browser's own words ("network error") are not ours.
      if (err && err.name === "AbortError") throw err;
      throw new ApiError(0, "network", NETWORK_MESSAGE);
    }
    if (value) buffer += decoder.decode(value, { stream: true });
    if (done) buffer += decoder.decode();
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) !== -1) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      const data = frame
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n");
      if (!data) continue;
      if (data === "[DONE]") return;
      let chunk;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue; // a malformed frame is skipped, the rest of the turn still shows
      }
      onChunk(chunk);
    }
    if (done) return;
  }
}
