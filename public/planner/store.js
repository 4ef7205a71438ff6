// The planner's state for one open trip: the TripDto, the selected day, the
// agent timeline, review findings and weather, plus the one way to change the
// trip (`op`). Screens subscribe with `on(fn)` and re-render from the state.

import { get, post } from "../api.js";
import { toast } from "./ui.js";

export function createStore(app, tripId) {
  const listeners = new Set();
  const base = `/api/trips/${encodeURIComponent(tripId)}`;

  const store = {
    app,
    tripId,
    base,
    trip: null,
    dayId: null,
    view: "plan", // plan | expenses | members
    reviews: new Map(), // dayId -> {version, data | error}
    weather: null, // {key, byDate: Map, error}
    agent: { loaded: false, messages: new Map(), suggestions: new Map(), latestSeq: 0, unavailable: false },
    destroyed: false,

    on(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },

    emit(reason) {
      for (const fn of [...listeners]) {
        try {
          fn(reason);
        } catch (err) {
          console.error(err); // one broken view must not stop the others
        }
      }
    },

    get canEdit() {
      return Boolean(store.trip && (store.trip.role === "owner" || store.trip.role === "editor"));
    },

    get isOwner() {
      return Boolean(store.trip && store.trip.role === "owner");
    },

    day(id = store.dayId) {
      return store.trip ? store.trip.days.find((d) => d.id === id) || null : null;
    },

    member(userId) {
      return (store.trip && store.trip.members.find((m) => m.userId === userId)) || null;
    },

    memberName(userId) {
      const m = store.member(userId);
      if (!m) return "A former member";
      return m.userId === app.session.me.id ? `${m.displayName || m.username} (you)` : m.displayName || m.username;
    },

    // Never replaces a newer trip with an older echo (a slow response or a
    // poll that crossed a write); equal versions are taken (votes, names).
    setTrip(trip) {
      if (!trip || !trip.id) return;
      if (store.trip && trip.version < store.trip.version) return;
      store.trip = trip;
      if (!store.day()) store.dayId = trip.days.length ? trip.days[0].id : null;
      store.emit("trip");
    },

    async refresh() {
      const trip = await get(base);
      store.setTrip(trip);
      return trip;
    },

    selectDay(dayId) {
      if (store.dayId === dayId) return;
      store.dayId = dayId;
      store.emit("day");
    },

    setView(view) {
      if (store.view === view) return;
      store.view = view;
      store.emit("view");
    },

    // The one write path: an op from the registry; the answer's trip is the
    // new truth. Errors reach the caller (who shows the server's message).
    async op(name, args = {}, { quiet = false } = {}) {
      const res = await post(`${base}/ops/${name}`, args);
      store.setTrip(res.trip);
      if (!quiet && res.summary) toast(res.summary, "success");
      return res;
    },

    // Rules-only review of a day; cached per trip version.
    async review(dayId, { force = false } = {}) {
      const version = store.trip ? store.trip.version : 0;
      const cached = store.reviews.get(dayId);
      if (!force && cached && cached.version === version) return cached;
      const entry = { version, data: null, error: null };
      try {
        entry.data = await get(`${base}/days/${encodeURIComponent(dayId)}/review`);
      } catch (err) {
        entry.error = err;
      }
      store.reviews.set(dayId, entry);
      return entry;
    },

    async loadWeather() {
      const t = store.trip;
      if (!t) return null;
      const key = `${t.startDate}|${t.days.length}|${t.destination ? `${t.destination.lat},${t.destination.lng}` : ""}`;
      if (store.weather && store.weather.key === key) return store.weather;
      store.weather = { key, byDate: new Map(), error: null, loading: true };
      try {
        const data = await get(`${base}/weather`);
        for (const d of weatherDays(data)) store.weather.byDate.set(d.date, d);
        store.weather.note = (data && data.note) || null; // e.g. "Set the trip's destination…"
      } catch (err) {
        store.weather.error = err;
      }
      store.weather.loading = false;
      store.emit("weather");
      return store.weather;
    },

    // Agent timeline: messages by id (sorted by seq when shown).
    mergeMessages(messages) {
      for (const m of messages || []) {
        store.agent.messages.set(m.id, m);
        if (typeof m.seq === "number" && m.seq > store.agent.latestSeq) store.agent.latestSeq = m.seq;
      }
    },

    // The server always sends the whole active list (pending, not dismissed
    // by me); anything missing was applied, expired or dismissed elsewhere.
    // Returns whether anything changed.
    setSuggestions(suggestions) {
      const list = suggestions || [];
      const before = [...store.agent.suggestions.values()].map((s) => `${s.id}:${s.status}`).join(",");
      const after = list.map((s) => `${s.id}:${s.status}`).join(",");
      store.agent.suggestions = new Map(list.map((s) => [s.id, s]));
      return before !== after;
    },

    sortedMessages() {
      return [...store.agent.messages.values()].sort((a, b) => (a.seq ?? Infinity) - (b.seq ?? Infinity));
    },
  };
  return store;
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
