// The open trip's state, declared in one place (`initialState`), read
// through the store's getters and changed only through its functions. Each
// change emits one reason, so a region re-renders only for what concerns it:
//   "trip"     the TripDto changed (an op's echo, a poll, a push)
//   "day"      another day or view was chosen
//   "review"   a day's review arrived
//   "weather"  the forecast arrived
//   "agent"    messages or suggestions changed
//   "ui"       a thread or a group of edits was opened or closed
//   "presence" who else has the trip open, and on which day, changed
//   "connection" the server became reachable or not (offline/connection.js)
// The writes this device keeps for the trip (waiting, refused) change what
// is shown, so they emit "trip" too.
// Drafts (what someone is typing) are kept here too, so no poll, push or
// re-render can lose them; typing does not emit (nothing needs redrawing).
//
// Offline: the trip, its day reviews and weather come from this device's
// copy (offline/kept.js) when the server cannot be reached; comments, votes
// and the ops the server lists in `offlineOps` go through the outbox
// (offline/outbox.js) and show at once (offline/project.js), every other op
// says it needs a connection. Every write's answer, sent now or later, is
// applied in one place: `applyWriteAnswer`.

import { post, ApiError } from "../api.js";
import { toast } from "./ui.js";
import { sig } from "./keyed.js";
import { patched } from "./patch.js";
import { readThrough, keep, keptEra, stillCurrent, keepThumbnails, storeGet, storePut } from "../offline/kept.js";
import { send, writesOf, onOutbox, dismiss } from "../offline/outbox.js";
import { isOnline, onConnection } from "../offline/connection.js";
import { projectTrip } from "../offline/project.js";
import { writeLabel } from "../offline/words.js";

export const NEEDS_CONNECTION = "This change needs a connection. Try again when you are back online.";
const KEPT_WORDS = "Saved on this device. It is sent when you are back online.";

function initialState() {
  return {
    trip: null, // what is shown: the server's trip with this device's waiting writes laid over it
    serverTrip: null, // the trip as the server last sent it (or as this device kept it)
    savedAt: null, // when the server's trip was last known to be current (ms)
    fromDevice: false, // the trip shown came from this device's copy, not the server
    writes: [], // this trip's writes kept on this device (outbox.js), oldest first
    dayId: null,
    pendingDayId: null, // from the address, until the trip has loaded
    view: "plan", // plan | expenses | members
    reviews: new Map(), // dayId -> {version, data, error}
    weather: null, // {key, byDate: Map, note, error, loading}
    agent: {
      loaded: false,
      unavailable: false,
      error: null,
      latestSeq: 0,
      readSeq: null, // how far I have read the chat (null: not known yet)
      messages: new Map(), // id -> message (sorted by seq when shown)
      suggestions: new Map(), // id -> suggestion
    },
    drafts: {
      comments: new Map(), // stopId -> a comment being written
      message: "", // the chat composer
      questions: new Map(), // dayId -> a question about the day being written
      tripDetails: null, // the People view's trip details form while it is edited
    },
    ui: {
      openThreads: new Set(), // stopIds whose comments are open
      openEdits: new Set(), // first message id of each expanded group of edits
      scroll: new Map(), // "plan:<dayId>" | "expenses" | "members" -> scroll offset
    },
    presence: [], // the other members with the trip open: [{userId, displayName, dayId}]
    sync: null,
    destroyed: false,
  };
}

export function createStore(app, tripId) {
  const listeners = new Set();
  const base = `/api/trips/${encodeURIComponent(tripId)}`;
  const state = initialState();
  const reviewsLoading = new Map(); // "dayId@version" -> the request on its way
  const madeIn = keptEra(); // what arrives after this device was cleared (signed out) is not kept
  let thumbnailsKept = false;

  // The picture shown: the server's trip and the writes still waiting.
  function reproject() {
    state.trip = projectTrip(state.serverTrip, state.writes);
  }

  function writesChanged() {
    state.writes = writesOf(tripId);
    reproject();
    if (!state.destroyed) emit("trip");
  }

  const stopWatching = [
    onOutbox((event) => {
      if (event.write && event.write.tripId !== tripId) return;
      if (event.type === "sent") store.applyWriteAnswer(event.answer, event.write);
      writesChanged();
    }),
    onConnection((online) => {
      if (state.destroyed) return;
      if (online) {
        // What could not be read offline is read again (the days shown ask for their reviews again).
        if (state.weather && state.weather.error) {
          state.weather = null;
          store.loadWeather();
        }
        for (const entry of state.reviews.values()) if (entry.error) entry.version = -1;
      }
      emit("connection");
    }),
  ];

  function emit(reason) {
    for (const fn of [...listeners]) {
      try {
        fn(reason);
      } catch (err) {
        console.error(err); // one broken region must not stop the others
      }
    }
  }

  const store = {
    app,
    tripId,
    base,

    get trip() { return state.trip; },
    get serverTrip() { return state.serverTrip; },
    get savedAt() { return state.savedAt; },
    get fromDevice() { return state.fromDevice; },
    get writes() { return state.writes; },
    get dayId() { return state.dayId; },
    get view() { return state.view; },
    get weather() { return state.weather; },
    get agent() { return state.agent; },
    get sync() { return state.sync; },
    get destroyed() { return state.destroyed; },

    on(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    emit,

    get canEdit() {
      return Boolean(state.trip && (state.trip.role === "owner" || state.trip.role === "editor"));
    },

    get isOwner() {
      return Boolean(state.trip && state.trip.role === "owner");
    },

    day(id = state.dayId) {
      return state.trip ? state.trip.days.find((d) => d.id === id) || null : null;
    },

    stop(id) {
      for (const d of (state.trip && state.trip.days) || []) {
        const s = d.stops.find((x) => x.id === id);
        if (s) return { day: d, stop: s };
      }
      return null;
    },

    member(userId) {
      return (state.trip && state.trip.members.find((m) => m.userId === userId)) || null;
    },

    memberName(userId) {
      const m = store.member(userId);
      if (!m) {
        // Someone who left or was removed still has their expenses and balance:
        // the server names them (formerMembers) so two of them read apart.
        const gone = state.trip && (state.trip.formerMembers || []).find((f) => f.userId === userId);
        return gone && gone.displayName ? `${gone.displayName} (former member)` : "A former member";
      }
      return m.userId === app.session.me.id ? `${m.displayName || m.username} (you)` : m.displayName || m.username;
    },

    // -- the trip -------------------------------------------------------------

    // Never replaces a newer trip with an older echo (a slow response or a
    // poll that crossed a write); equal versions are taken (votes, names).
    // A trip from the server is kept on this device for offline use
    // (`fromDevice`: it is this device's copy, kept as it is).
    setTrip(trip, { fromDevice = false, savedAt = Date.now() } = {}) {
      if (!trip || !trip.id) return;
      if (state.serverTrip && trip.version < state.serverTrip.version) return;
      state.serverTrip = trip;
      state.savedAt = savedAt;
      state.fromDevice = fromDevice;
      if (!fromDevice) {
        keep(base, trip, savedAt, madeIn);
        if (!thumbnailsKept) {
          thumbnailsKept = true;
          keepThumbnails(trip, madeIn);
        }
      }
      state.writes = writesOf(tripId);
      reproject();
      if (state.pendingDayId && store.day(state.pendingDayId)) state.dayId = state.pendingDayId;
      state.pendingDayId = null;
      if (!store.day()) state.dayId = trip.days.length ? trip.days[0].id : null;
      emit("trip");
    },

    // A conditional read answered 304: what is shown is current as of now.
    confirmCurrent() {
      state.savedAt = Date.now();
      state.fromDevice = false;
      stillCurrent(base, madeIn);
      emit("connection");
    },

    async refresh() {
      const { data, savedAt, fromDevice } = await readThrough(base);
      store.setTrip(data, { fromDevice, savedAt });
      return data;
    },

    // The one place where the answer to a write is applied, whether it was
    // sent at once or kept and sent later: a whole trip (`{trip}` with
    // ?full=1, an approval, a draft, or a trip) replaces the trip unless a
    // newer one is here; an op's `change` (what it changed since
    // `fromVersion`) is patched into the server's trip (planner/patch.js),
    // and read whole instead when this page is on another version; a comment
    // or a vote changes counts without a new version, so the trip is read again.
    applyWriteAnswer(answer, write = null) {
      const trip = answer && (answer.trip || (answer.id && answer.days ? answer : null));
      const change = answer && answer.change;
      if (trip) store.setTrip(trip);
      else if (change) {
        const next = patched(state.serverTrip, change);
        if (next) store.setTrip(next);
        else if (!state.serverTrip || change.version > state.serverTrip.version) store.refresh().catch(() => {});
      } else if (write && write.kind !== "op") store.refresh().catch(() => {});
    },

    // The one write path: an op from the registry. Ops the server lists in
    // `offlineOps` go through the outbox (kept and sent later when offline);
    // the others need a connection. Returns the server's answer, or
    // {queued: true}; refusals reach the caller (who shows the server's message).
    async op(name, args = {}, { quiet = false } = {}) {
      if ((app.session.config.offlineOps || []).includes(name)) {
        const res = await store.keepWrite({ kind: "op", op: name, method: "POST", path: `${base}/ops/${name}`, body: args,
          madeOnVersion: state.serverTrip ? state.serverTrip.version : null });
        if (res.queued) {
          if (!quiet) toast(KEPT_WORDS, "info", 5000);
          return res;
        }
        if (!quiet && res.answer.summary) toast(res.answer.summary, "success");
        return res.answer;
      }
      if (!isOnline()) throw new ApiError(0, "offline", NEEDS_CONNECTION);
      const res = await post(`${base}/ops/${name}`, args);
      store.applyWriteAnswer(res);
      if (!quiet && res.summary) toast(res.summary, "success");
      return res;
    },

    // A vote on a stop (0 takes it back), kept and sent later when offline.
    async vote(stopId, value) {
      return store.keepWrite({ kind: "vote", stopId, method: "PUT", path: `${base}/stops/${encodeURIComponent(stopId)}/vote`,
        body: { value } });
    },

    // A comment on a stop, kept and sent later when offline.
    async comment(stopId, body) {
      return store.keepWrite({ kind: "comment", stopId, method: "POST",
        path: `${base}/stops/${encodeURIComponent(stopId)}/comments`, body: { body } });
    },

    // Through the outbox, labelled in words for the list of waiting changes.
    // The trip's title goes with it: a refusal for a trip its author can no longer open names it.
    keepWrite(write) {
      return send({ ...write, tripId, tripTitle: state.trip ? state.trip.title : null, label: writeLabel(store, write) });
    },

    dismissWrite(key) {
      return dismiss(key);
    },

    // Several ops as one change (a review fix, a suggestion's patch): all or
    // nothing, one version, one line in the timeline saying what they did.
    // A fix is worked out by the server on the trip as it is now, so it is
    // never kept for later: offline it says it needs a connection; with
    // `baseVersion` (the version it was worked out on) the server refuses it
    // once the trip has moved on (409 stale).
    async edits(edits, { quiet = false, baseVersion } = {}) {
      if (!isOnline()) throw new ApiError(0, "offline", NEEDS_CONNECTION);
      const res = await post(`${base}/ops`, baseVersion === undefined ? { edits } : { edits, baseVersion });
      store.applyWriteAnswer(res);
      if (!quiet && res.summary) toast(res.summary, "success");
      return res;
    },

    // -- what is shown ----------------------------------------------------------

    // Shows `view` (and, for the plan, `dayId`); the address may name a day
    // before the trip has loaded.
    show(view, dayId = state.dayId) {
      const next = view || state.view;
      if (!state.trip && dayId) state.pendingDayId = dayId;
      const day = state.trip ? (store.day(dayId) ? dayId : state.dayId) : state.dayId;
      if (next === state.view && day === state.dayId) return;
      state.view = next;
      state.dayId = day;
      emit("day");
    },

    selectDay(dayId) {
      store.show("plan", dayId);
    },

    setView(view) {
      store.show(view);
    },

    // Where each view (and each day) was scrolled, to come back to it.
    saveScroll(key, top) {
      state.ui.scroll.set(key, top);
    },
    scrollOf(key) {
      return state.ui.scroll.get(key) || 0;
    },

    // -- drafts and open things ------------------------------------------------

    draft(kind, key) {
      const slot = state.drafts[kind];
      return slot instanceof Map ? slot.get(key) || "" : slot;
    },

    setDraft(kind, key, value) {
      const slot = state.drafts[kind];
      if (!(kind in state.drafts)) throw new Error(`No draft called ${kind}`);
      if (slot instanceof Map) {
        if (value) slot.set(key, value);
        else slot.delete(key);
      } else {
        state.drafts[kind] = value; // `key` unused: one draft of this kind
      }
    },

    isThreadOpen(stopId) {
      return state.ui.openThreads.has(stopId);
    },

    toggleThread(stopId) {
      if (!state.ui.openThreads.delete(stopId)) state.ui.openThreads.add(stopId);
      emit("ui");
    },

    areEditsOpen(firstId) {
      return state.ui.openEdits.has(firstId);
    },

    toggleEdits(firstId) {
      if (!state.ui.openEdits.delete(firstId)) state.ui.openEdits.add(firstId);
      emit("ui");
    },

    // -- review and weather -------------------------------------------------------

    // The latest review of a day (possibly of an older version while a fresh
    // one loads: findings do not blink away on every change).
    reviewOf(dayId) {
      return state.reviews.get(dayId) || null;
    },

    // Rules-only review of a day; cached per trip version; emits "review".
    review(dayId, { force = false } = {}) {
      const version = state.trip ? state.trip.version : 0;
      const cached = state.reviews.get(dayId);
      if (!force && cached && cached.version === version) return Promise.resolve(cached);
      const key = `${dayId}@${version}`;
      if (!force && reviewsLoading.has(key)) return reviewsLoading.get(key);
      const loading = (async () => {
        const entry = { version, data: null, error: null };
        try {
          entry.data = (await readThrough(`${base}/days/${encodeURIComponent(dayId)}/review`)).data;
        } catch (err) {
          entry.error = err;
        }
        const latest = state.reviews.get(dayId);
        if (!latest || latest.version <= version) state.reviews.set(dayId, entry); // a newer one may have won the race
        if (!state.destroyed) emit("review");
        return state.reviews.get(dayId);
      })();
      reviewsLoading.set(key, loading);
      loading.finally(() => reviewsLoading.delete(key));
      return loading;
    },

    // Every day's review, one after another, so that the trip opens offline
    // with all of them (each answer is kept). Once per trip version on this
    // device: the server is asked again only after a change.
    async keepReviews() {
      const trip = state.serverTrip;
      if (!trip || state.fromDevice) return;
      const mark = `reviews:${tripId}`;
      if ((await storeGet("meta", mark)) === trip.version) return;
      for (const day of trip.days) {
        if (state.destroyed || !isOnline() || state.serverTrip.version !== trip.version) return;
        const entry = await store.review(day.id);
        if (!entry || entry.error) return;
      }
      if (keptEra() === madeIn) await storePut("meta", mark, trip.version);
    },

    async loadWeather() {
      const t = state.trip;
      if (!t) return null;
      const key = `${t.startDate}|${t.days.length}|${t.destination ? `${t.destination.lat},${t.destination.lng}` : ""}`;
      if (state.weather && state.weather.key === key) return state.weather;
      const weather = { key, byDate: new Map(), note: null, error: null, loading: true };
      state.weather = weather;
      try {
        const data = (await readThrough(`${base}/weather`)).data;
        for (const d of weatherDays(data)) weather.byDate.set(d.date, d);
        weather.note = (data && data.note) || null; // e.g. "Set the trip's destination…"
      } catch (err) {
        weather.error = err;
      }
      weather.loading = false;
      // The server's review waits only briefly for the weather and goes on
      // without it; now that it is at hand, the days shown ask again (their
      // findings stay on screen meanwhile).
      if (weather.byDate.size) for (const entry of state.reviews.values()) entry.version = -1;
      if (!state.destroyed) emit("weather");
      return weather;
    },

    // -- the agent's timeline ------------------------------------------------------

    setAgentStatus(changes) {
      for (const key of ["loaded", "unavailable", "error"]) if (key in changes) state.agent[key] = changes[key];
    },

    mergeMessages(messages) {
      for (const m of messages || []) {
        state.agent.messages.set(m.id, m);
        if (typeof m.seq === "number" && m.seq > state.agent.latestSeq) state.agent.latestSeq = m.seq;
      }
    },

    noteLatestSeq(seq) {
      if (typeof seq === "number" && seq > state.agent.latestSeq) state.agent.latestSeq = seq;
    },

    // A message shown before the server has it (a streamed turn), or gone.
    putMessage(message) {
      state.agent.messages.set(message.id, message);
    },
    dropMessage(id) {
      state.agent.messages.delete(id);
    },

    // The server always sends the whole active list (pending, not dismissed
    // by me); anything missing was applied, expired or dismissed elsewhere.
    // Returns whether anything changed.
    setSuggestions(suggestions) {
      const list = suggestions || [];
      const before = [...state.agent.suggestions.values()].map((s) => `${s.id}:${s.status}`).join(",");
      const after = list.map((s) => `${s.id}:${s.status}`).join(",");
      state.agent.suggestions = new Map(list.map((s) => [s.id, s]));
      return before !== after;
    },

    markSuggestion(id, status) {
      const s = state.agent.suggestions.get(id);
      if (s) state.agent.suggestions.set(id, { ...s, status });
    },

    // How far I have read the chat: forward only (another device may answer late).
    setReadSeq(seq) {
      if (typeof seq !== "number" || (state.agent.readSeq !== null && seq <= state.agent.readSeq)) return false;
      state.agent.readSeq = seq;
      return true;
    },

    // Chat messages from the others (and the AI) after my read marker; null
    // while the marker is not known.
    unread() {
      const { readSeq } = state.agent;
      if (readSeq === null) return null;
      const me = app.session.me && app.session.me.id;
      let count = 0;
      for (const m of state.agent.messages.values()) {
        if (typeof m.seq === "number" && m.seq > readSeq && (m.role === "user" || m.role === "assistant")
          && m.source !== "stop_comment" && m.source !== "operation" && m.actorUserId !== me) count += 1;
      }
      return count;
    },

    sortedMessages() {
      return [...state.agent.messages.values()].sort((a, b) => (a.seq ?? Infinity) - (b.seq ?? Infinity));
    },

    // -- presence ------------------------------------------------------------------

    // The live stream's whole list; my own pages are left out (others only).
    setPresence(people) {
      const me = app.session.me && app.session.me.id;
      const others = (Array.isArray(people) ? people : []).filter((p) => p && p.userId && p.userId !== me);
      if (sig(others) === sig(state.presence)) return;
      state.presence = others;
      emit("presence");
    },

    // Who is looking at a day (null: at the trip, but at no day of it).
    // A day deleted under someone counts as no day.
    presentOn(dayId) {
      const onDay = (p) => Boolean(p.dayId && store.day(p.dayId));
      return state.presence.filter((p) => (dayId === null ? !onDay(p) : p.dayId === dayId));
    },

    // -- life cycle ------------------------------------------------------------------

    attachSync(sync) {
      state.sync = sync;
    },

    destroy() {
      state.destroyed = true;
      for (const stop of stopWatching) stop();
      if (state.sync) state.sync.stop();
      listeners.clear();
    },
  };
  return Object.freeze(store);
}

// The weather route's days, whatever envelope holds them.
function weatherDays(data) {
  if (!data) return [];
  if (Array.isArray(data)) return data.filter((d) => d && d.date);
  if (Array.isArray(data.days)) return data.days.filter((d) => d && d.date);
  if (typeof data === "object") {
    return Object.entries(data)
      .filter(([k, v]) => /^\d{4}-\d{2}-\d{2}$/.test(k) && v && typeof v === "object")
      .map(([date, v]) => ({ date, ...v }));
  }
  return [];
}
