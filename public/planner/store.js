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
// Drafts (what someone is typing) are kept here too, so no poll, push or
// re-render can lose them; typing does not emit (nothing needs redrawing).

import { get, post } from "../api.js";
import { toast } from "./ui.js";
import { sig } from "./keyed.js";

function initialState() {
  return {
    trip: null,
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
      if (!m) return "A former member";
      return m.userId === app.session.me.id ? `${m.displayName || m.username} (you)` : m.displayName || m.username;
    },

    // -- the trip -------------------------------------------------------------

    // Never replaces a newer trip with an older echo (a slow response or a
    // poll that crossed a write); equal versions are taken (votes, names).
    setTrip(trip) {
      if (!trip || !trip.id) return;
      if (state.trip && trip.version < state.trip.version) return;
      state.trip = trip;
      if (state.pendingDayId && store.day(state.pendingDayId)) state.dayId = state.pendingDayId;
      state.pendingDayId = null;
      if (!store.day()) state.dayId = trip.days.length ? trip.days[0].id : null;
      emit("trip");
    },

    async refresh() {
      const trip = await get(base);
      store.setTrip(trip);
      return trip;
    },

    // The one write path: an op from the registry; the answer's trip is the
    // new truth. Errors reach the caller (who shows the server's message).
    async op(name, args = {}, { quiet = false } = {}) {
      const res = await post(`${base}/ops/${name}`, args);
      store.setTrip(res.trip);
      if (!quiet && res.summary) toast(res.summary, "success");
      return res;
    },

    // Several ops as one change (a review fix, a suggestion's patch): all or
    // nothing, one version, one line in the timeline saying what they did.
    async edits(edits, { quiet = false } = {}) {
      const res = await post(`${base}/ops`, { edits });
      store.setTrip(res.trip);
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
          entry.data = await get(`${base}/days/${encodeURIComponent(dayId)}/review`);
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

    async loadWeather() {
      const t = state.trip;
      if (!t) return null;
      const key = `${t.startDate}|${t.days.length}|${t.destination ? `${t.destination.lat},${t.destination.lng}` : ""}`;
      if (state.weather && state.weather.key === key) return state.weather;
      const weather = { key, byDate: new Map(), note: null, error: null, loading: true };
      state.weather = weather;
      try {
        const data = await get(`${base}/weather`);
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
