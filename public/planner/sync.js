// Keeps an open planner in step with the other members: every 12 s it asks
// for new agent events (messages and suggestions, when AI is on) and makes a
// conditional GET of the trip (ETag), which costs a 304 when nothing changed
// and also catches votes and comments, which change the trip without a new
// version.
// Tests may shorten the interval: ?poll=<ms> in the page URL or
// localStorage["wayline.pollMs"].

import { get, getIfChanged } from "../api.js";

export const DEFAULT_POLL_MS = 12000;

export function pollInterval(config) {
  const fromQuery = Number(new URLSearchParams(location.search).get("poll"));
  const fromStorage = Number(localStorage.getItem("wayline.pollMs"));
  const configured = config && config.limits && Number(config.limits.agentPollSeconds) * 1000;
  const chosen = [fromQuery, fromStorage].find((v) => Number.isFinite(v) && v >= 200);
  return chosen || configured || DEFAULT_POLL_MS;
}

export function startSync(store) {
  const config = store.app.session.config;
  const interval = pollInterval(config);
  let timer = null;
  let running = false;
  let stopped = false;
  let tripEtag = null;
  document.documentElement.dataset.pollMs = String(interval); // visible to tests

  async function loadHistory() {
    if (!config.aiEnabled) {
      store.setAgentStatus({ unavailable: true });
      return;
    }
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

  async function tick() {
    if (running || stopped || store.destroyed) return;
    running = true;
    try {
      if (!store.agent.unavailable && store.agent.loaded) {
        const events = await get(`${store.base}/agent/events?after=${store.agent.latestSeq}`);
        store.mergeMessages(events.messages);
        const suggestionsChanged = store.setSuggestions(events.suggestions);
        store.noteLatestSeq(events.latestSeq);
        if ((events.messages && events.messages.length) || suggestionsChanged) store.emit("agent");
      } else if (!store.agent.unavailable && !store.agent.loaded) {
        await loadHistory();
      }
      const changed = await getIfChanged(store.base, tripEtag);
      if (changed) {
        // Even the first answer is taken: votes and comments may have changed
        // since the page loaded without a new version. Unchanged parts of the
        // page are left alone (keyed rendering), so this costs little.
        tripEtag = changed.etag;
        store.setTrip(changed.data);
      }
    } catch (err) {
      if (err.status === 404 && !store.agent.unavailable) {
        store.setAgentStatus({ unavailable: true });
        store.emit("agent");
      }
      // Other failures (offline, a restart) are retried on the next tick.
    } finally {
      running = false;
      schedule();
    }
  }

  function schedule() {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(tick, interval);
  }

  function onVisible() {
    if (document.visibilityState === "visible") tick();
  }

  document.addEventListener("visibilitychange", onVisible);
  loadHistory().finally(schedule);

  return {
    interval,
    now: tick,
    stop() {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisible);
    },
  };
}
