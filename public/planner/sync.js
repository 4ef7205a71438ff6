// Keeps an open planner in step with the other members. Two reads do the
// work: the agent events (`…/agent/events?after=`: messages and suggestions)
// and a conditional GET of the trip (ETag: a 304 when nothing
// changed; it also catches votes and comments, which change the trip without
// a new version).
//
// What asks for them: the trip's live stream (live.js) while it works, each
// event naming what changed; the 12 s poll while it does not (the poll runs
// from the start until the stream's first hello, and again whenever live.js
// falls back). Requests made close together are coalesced: an op sends
// `trip` and `timeline` at once, and the page reads each thing once.
// A read that fails (offline, a restart) is tried again a little later.
//
// Offline (offline/connection.js) both stop: no stream, no poll, no reads;
// the page shows what this device kept. When the connection is back the
// stream opens again and both reads run once (the outbox sends the kept
// writes by itself).
//
// Tests may shorten the poll: ?poll=<ms> in the page URL or
// localStorage["wayline.pollMs"]. For tests (nothing is shown to the user),
// document.documentElement.dataset says `sync` "live", "poll", "offline"
// (no connection: the page says so itself) or "off" (stopped: no stream
// open, no poll), `reading` "true" while a read is scheduled or under way,
// and `timelineSeq` how far the page has the agent timeline.

import { get, getIfChanged } from "../api.js";
import { startLive } from "../live.js";
import { isOnline, onConnection } from "../offline/connection.js";

export const DEFAULT_POLL_MS = 12000;
const COALESCE_MS = 40; // events of one burst arrive within a few ms of each other
const RETRY_MS = 3000; // a failed read is tried again after this

export function pollInterval(config) {
  const fromQuery = Number(new URLSearchParams(location.search).get("poll"));
  const fromStorage = Number(localStorage.getItem("wayline.pollMs"));
  const configured = config && config.limits && Number(config.limits.agentPollSeconds) * 1000;
  const chosen = [fromQuery, fromStorage].find((v) => Number.isFinite(v) && v >= 200);
  return chosen || configured || DEFAULT_POLL_MS;
}

// `onGone(reason)`: the trip is not ours to see any more ("removed",
// "deleted", "account", or "missing" when a read answered 404).
export function startSync(store, { onGone = () => {} } = {}) {
  const config = store.app.session.config;
  const interval = pollInterval(config);
  const root = document.documentElement;
  const wanted = { trip: false, events: false, version: 0 }; // version: read the trip if ours is older
  let runTimer = null;
  let pollTimer = null;
  let running = false;
  let stopped = false;
  let tripEtag = null;
  root.dataset.pollMs = String(interval); // visible to tests

  // Read whether or not AI is on: the timeline also holds members' edits and
  // outside assistants' suggestions (the chat itself says when AI is off).
  async function loadHistory() {
    try {
      const data = await get(`${store.base}/agent/messages`);
      store.mergeMessages(data.messages);
      store.setSuggestions(data.suggestions);
      store.setAgentStatus({ loaded: true, error: null });
    } catch (err) {
      if (err.status === 404) store.setAgentStatus({ unavailable: true });
      else store.setAgentStatus({ error: err });
    }
    store.emit("agent");
  }

  async function readEvents() {
    if (store.agent.unavailable) return;
    if (!store.agent.loaded) {
      await loadHistory();
      return;
    }
    try {
      const events = await get(`${store.base}/agent/events?after=${store.agent.latestSeq}`);
      store.mergeMessages(events.messages);
      const suggestionsChanged = store.setSuggestions(events.suggestions);
      store.noteLatestSeq(events.latestSeq);
      if ((events.messages && events.messages.length) || suggestionsChanged) store.emit("agent");
    } catch (err) {
      if (err.status !== 404) throw err;
      store.setAgentStatus({ unavailable: true });
      store.emit("agent");
    }
  }

  async function readTrip() {
    let changed;
    try {
      changed = await getIfChanged(store.base, tripEtag);
    } catch (err) {
      if (err.status === 404) {
        gone("missing");
        return;
      }
      throw err;
    }
    if (changed) {
      // Even the first answer is taken: votes and comments may have changed
      // since the page loaded without a new version. Unchanged parts of the
      // page are left alone (keyed rendering), so this costs little.
      tripEtag = changed.etag;
      store.setTrip(changed.data);
    } else {
      store.confirmCurrent();
    }
  }

  function want(...kinds) {
    for (const kind of kinds) wanted[kind] = true;
    schedule(COALESCE_MS);
  }

  function schedule(delay) {
    if (stopped || running || runTimer || !isOnline()) return; // offline: asked again when the connection is back
    runTimer = setTimeout(run, delay);
    noteReading();
  }

  function noteReading() {
    root.dataset.reading = String(!stopped && (running || runTimer !== null));
    root.dataset.timelineSeq = String(store.agent.latestSeq);
  }

  async function run() {
    runTimer = null;
    if (stopped || store.destroyed) return noteReading();
    running = true;
    // A `trip` event may beat our own op's answer; by now that answer may be here.
    const now = { events: wanted.events, trip: wanted.trip || wanted.version > store.trip.version };
    wanted.trip = wanted.events = false;
    wanted.version = 0;
    let failed = false;
    for (const [kind, read] of [["events", readEvents], ["trip", readTrip]]) {
      if (!now[kind] || stopped) continue;
      try {
        await read();
      } catch {
        wanted[kind] = true; // tried again below
        failed = true;
      }
    }
    running = false;
    if (wanted.trip || wanted.events || wanted.version) schedule(failed ? RETRY_MS : COALESCE_MS);
    noteReading();
  }

  // -- the poll, while the stream is not working --------------------------------

  function poll() {
    pollTimer = setTimeout(poll, interval);
    want("events", "trip");
  }

  function startPolling() {
    root.dataset.sync = "poll";
    if (pollTimer === null && !stopped) pollTimer = setTimeout(poll, interval);
  }

  function stopPolling() {
    root.dataset.sync = "live";
    clearTimeout(pollTimer);
    pollTimer = null;
  }

  function onVisible() {
    if (document.visibilityState === "visible" && pollTimer !== null) want("events", "trip");
  }

  // -- the live stream ----------------------------------------------------------------

  function onEvent(kind, data) {
    const d = data || {};
    switch (kind) {
      case "hello":
        stopPolling();
        if (!d.resumed) want("events", "trip"); // anything may have changed while we were not connected
        break;
      case "trip":
        // Read unless we have that version by then (our own op's answer).
        wanted.version = Math.max(wanted.version, typeof d.version === "number" ? d.version : Infinity);
        want();
        break;
      case "social":
      case "members":
        want("trip");
        break;
      case "reset":
        want("events", "trip");
        break;
      case "timeline":
        if (!(d.seq <= store.agent.latestSeq)) want("events");
        break;
      case "suggestion":
        want("events");
        break;
      case "presence":
        store.setPresence(data);
        break;
      case "gone":
        gone(d.reason || "removed");
        break;
      default:
        break;
    }
  }

  function gone(reason) {
    if (stopped) return;
    stop();
    onGone(reason);
  }

  function stop() {
    stopped = true;
    clearTimeout(runTimer);
    clearTimeout(pollTimer);
    noteReading();
    if (live) live.stop();
    stopWatching();
    root.dataset.sync = "off";
    document.removeEventListener("visibilitychange", onVisible);
  }

  let live = null;
  let shownDayId; // the day this page shows, told to the stream each time it opens

  function connect() {
    live = startLive(store.tripId, {
      onEvent,
      onFallback: () => {
        store.setPresence([]); // nobody's presence is known while polling
        startPolling();
      },
      onLive: stopPolling,
    });
    if (shownDayId !== undefined) live.setPresence(shownDayId);
    startPolling(); // until the stream says hello
  }

  function disconnect() {
    if (live) live.stop();
    live = null;
    clearTimeout(pollTimer);
    pollTimer = null;
    clearTimeout(runTimer);
    runTimer = null;
    noteReading();
    store.setPresence([]);
    root.dataset.sync = "offline";
  }

  const stopWatching = onConnection((online) => {
    if (stopped) return;
    if (!online) {
      disconnect();
      return;
    }
    connect();
    want("events", "trip"); // anything may have changed meanwhile
  });

  document.addEventListener("visibilitychange", onVisible);
  if (isOnline()) connect();
  else root.dataset.sync = "offline";
  want("events"); // the history first (readEvents loads it)

  return {
    interval,
    // Read both now (after a chat turn: the server's copies replace the local ones).
    now: () => want("events", "trip"),
    // The day this page shows (null: none), for the other members' presence.
    showDay: (dayId) => {
      shownDayId = dayId;
      if (live) live.setPresence(dayId);
    },
    stop,
  };
}
