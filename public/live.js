// Live updates for an open trip page: one EventSource on
// GET /api/trips/:tripId/live. Events say what changed (ids and versions,
// never content); the page fetches what it needs with the ETag reads it
// already has:
//   hello      {connectionId, resumed}  every (re)connect; resumed: false means
//              anything may have changed (make one conditional read of each)
//   trip       {version}     the trip's content has a new version
//   social     {}            comments or votes changed (no new version)
//   members    {}            someone joined or left, or a role changed
//   timeline   {seq}         new agent timeline rows up to seq
//   suggestion {pending}     a suggestion was made or settled
//   presence   [{userId, displayName, dayId}]  who has the trip open, one entry per member
//   reset      {}            the missed events are gone: refetch everything
//   gone       {reason}      "removed" | "deleted" | "account" (deleted) |
//              "signedOut" (this session ended; the account goes on) |
//              "expired" (this session ran out, by the calendar): the
//              stream has stopped for good and does not reconnect
//
// startLive(tripId, {onEvent(kind, data), onFallback(), onLive()}, options)
// reconnects with back-off and resumes from the last event id. When the
// stream fails again and again (a proxy that buffers it, a server that
// refuses it), it calls onFallback() once: the page goes back to its 12 s
// poll and says nothing. It keeps trying now and then; when the stream works
// again it calls onLive() and the page can stop polling.
// Options (tests shorten them): retryMs, maxRetryMs, maxFailures,
// helloTimeoutMs, fallbackRetryMs, presenceEveryMs.
//
// Presence is confirmed every presenceEveryMs while the page is connected,
// and again when it is shown after being hidden: the server drops a page
// from the list when it has not heard from it for 150 s (a phone that lost
// its connection without closing it), so its member is not shown on a day
// long after they left.

import { api } from "./api.js";

const KINDS = ["trip", "social", "members", "timeline", "suggestion", "presence", "reset", "gone"];
const DEFAULTS = {
  retryMs: 1000, // the first reconnect; doubles after each failure
  maxRetryMs: 30000,
  maxFailures: 4, // failed attempts in a row before falling back to polling
  helloTimeoutMs: 10000, // a stream that delivers nothing this long counts as failed
  fallbackRetryMs: 120000, // how often to try again while polling
  presenceEveryMs: 60000, // below the server's 150 s: a confirmation or two may be late or lost
};

export function startLive(tripId, handlers = {}, options = {}) {
  const opts = { ...DEFAULTS, ...options };
  const path = `/api/trips/${encodeURIComponent(tripId)}`;
  const onEvent = handlers.onEvent || (() => {});
  let source = null;
  let connectionId = null;
  let lastEventId = null;
  let failures = 0;
  let fellBack = false;
  let stopped = false;
  let retryTimer = null;
  let helloTimer = null;
  let presenceTimer = null;
  let dayId; // undefined until the page says which day it shows

  function call(fn, ...args) {
    try {
      if (fn) fn(...args);
    } catch (err) {
      // A failing page handler must not stop the stream.
      setTimeout(() => {
        throw err;
      });
    }
  }

  function remember(event) {
    if (event.lastEventId) lastEventId = event.lastEventId;
  }

  function read(event) {
    try {
      return JSON.parse(event.data);
    } catch {
      return null;
    }
  }

  function connect() {
    retryTimer = null;
    if (stopped) return;
    const query = lastEventId ? `?lastEventId=${encodeURIComponent(lastEventId)}` : "";
    source = new EventSource(`${path}/live${query}`);
    helloTimer = setTimeout(fail, opts.helloTimeoutMs);
    source.addEventListener("hello", (event) => {
      clearTimeout(helloTimer);
      remember(event);
      const data = read(event) || {};
      connectionId = data.connectionId || null;
      failures = 0;
      if (fellBack) {
        fellBack = false;
        call(handlers.onLive);
      }
      sendPresence(); // once the page has said which day it shows
      call(onEvent, "hello", data);
    });
    for (const kind of KINDS) {
      source.addEventListener(kind, (event) => {
        remember(event);
        if (kind === "gone") stop();
        call(onEvent, kind, read(event));
      });
    }
    // Our own reconnect replaces EventSource's: it backs off, and it also
    // covers answers EventSource gives up on (an error status).
    source.onerror = fail;
  }

  function disconnect() {
    clearTimeout(helloTimer);
    clearTimeout(presenceTimer);
    if (source) {
      source.onerror = null;
      source.close();
      source = null;
    }
    connectionId = null;
  }

  function fail() {
    disconnect();
    if (stopped) return;
    failures += 1;
    if (failures >= opts.maxFailures && !fellBack) {
      fellBack = true;
      call(handlers.onFallback);
    }
    const backoff = Math.min(opts.maxRetryMs, opts.retryMs * 2 ** (failures - 1));
    const delay = fellBack ? opts.fallbackRetryMs : backoff * (0.5 + Math.random() / 2);
    retryTimer = setTimeout(connect, delay);
  }

  function sendPresence() {
    clearTimeout(presenceTimer);
    presenceTimer = null;
    if (!connectionId || dayId === undefined) return; // sent after the next hello
    api(`${path}/presence`, { method: "PUT", body: { connectionId, dayId } }).catch(() => {
      // Not connected any more, or offline: the next hello sends it again.
    });
    presenceTimer = setTimeout(sendPresence, opts.presenceEveryMs);
  }

  // A phone's page is paused while hidden, so its confirmations stop and it
  // leaves the list; shown again, it says where it is at once.
  function onVisible() {
    if (document.visibilityState === "visible") sendPresence();
  }
  const watchesVisibility = typeof document !== "undefined";
  if (watchesVisibility) document.addEventListener("visibilitychange", onVisible);

  function stop() {
    stopped = true;
    clearTimeout(retryTimer);
    clearTimeout(presenceTimer);
    if (watchesVisibility) document.removeEventListener("visibilitychange", onVisible);
    disconnect();
  }

  connect();
  return {
    // The day this page shows (a day id, or null for none); others see it as presence.
    setPresence(newDayId) {
      dayId = newDayId == null ? null : newDayId;
      sendPresence();
    },
    stop,
    get live() {
      return connectionId !== null;
    },
    get fellBack() {
      return fellBack;
    },
  };
}
