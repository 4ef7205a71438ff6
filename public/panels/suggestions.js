// The AI's suggestions tray, above the view in the page's own flow (never
// over the plan): one compact bar with the count ("2 suggestions from the
// AI") that opens the list. Each card says which day and stop it is about
// (a press shows them), what would change, and offers Approve (applies the
// patch through the server), Discuss (opens the chat with a note about it)
// and Deny (hides it for you only). The list is the server's active list
// (sync.js), so a suggestion approved, denied or expired elsewhere leaves
// every open page with the next live event. A member's connected assistant
// (MCP) files suggestions too: its cards say who ("From Claude via Alice"),
// what the change would do and the review's verdict, and have no Discuss (the
// agent cannot speak for another assistant's proposal).

import { post } from "../api.js";
import { h, withBusy, toast, fmtDay, focusPastRegion } from "../planner/ui.js";
import { reconcile, sig } from "../planner/keyed.js";
import { describeWrite } from "./agentview.js";
import { icon } from "../planner/icons.js";
import { showOnPlan } from "./common.js";

const SEVERITY_WORDS = { high: "important", medium: "worth a look", low: "minor" };
const AI = "the AI";

// Who the suggestions are from: "the AI", "Claude via Alice", "the AI and Claude via Alice".
function fromWords(items) {
  const names = [...new Set(items.map((s) => s.proposedAs || AI))];
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}` : names[0];
}

// What a suggestion is about: {day, stop, label} ("Day 2 · Sat 15 Dec · Oceanário").
export function suggestionPlace(store, s) {
  // A patch of several edits (a computed fix) is about the stop its first edit names.
  const first = s.patch && s.patch.edits && s.patch.edits.length ? s.patch.edits[0].args : null;
  const a = (s.patch && (s.patch.args || first)) || {};
  const found = a.stopId ? store.stop(a.stopId) : null;
  const day = found ? found.day : store.day(a.dayId || a.toDayId || "") || null;
  const stop = found ? found.stop : null;
  if (!day) return { day: null, stop: null, label: s.patch && s.patch.op === "update_expense" ? "Expenses" : "The trip" };
  const parts = [`Day ${day.position + 1}`, day.date ? fmtDay(day.date) : null, stop ? stop.name : null];
  return { day, stop, label: parts.filter(Boolean).join(" · ") };
}

export function mountSuggestionTray(host, store, panel) {
  const hidden = new Set(); // decided here; the next read confirms
  let open = false;
  let shownIds = new Set();
  const label = h("span", { class: "tray-count" });
  const bar = h("button", { type: "button", class: "tray-bar", "aria-expanded": "false", "aria-controls": "tray-list", "data-testid": "tray-bar" },
    icon("sparkle", { size: 16 }), label, h("span", { class: "tray-chevron", "aria-hidden": "true" }, icon("chevronDown", { size: 16 })));
  const list = h("ol", { class: "tray-list plain", id: "tray-list", hidden: true });
  const news = h("p", { class: "visually-hidden", "aria-live": "polite" });
  const tray = h("section", { class: "tray", "aria-label": "Suggestions for the plan", hidden: true }, bar, list, news);
  host.append(tray);
  bar.addEventListener("click", () => {
    open = !open;
    render();
  });

  function active() {
    const now = Date.now();
    return [...store.agent.suggestions.values()].filter((s) => s.status === "pending" && !hidden.has(s.id)
      && (!s.expiresAt || new Date(s.expiresAt).getTime() > now));
  }

  // What the patch does: a computed fix says it in its label (it may be
  // several edits, applied as one change); one edit of the agent's own is
  // described from its op.
  function patchText(s) {
    if (!s.patch) return null;
    if (s.patch.label) return s.patch.label;
    return s.patch.op ? describeWrite(store, s.patch.op, s.patch.args) : null;
  }

  function render() {
    const items = active();
    const arrived = items.filter((s) => !shownIds.has(s.id));
    shownIds = new Set(items.map((s) => s.id));
    tray.hidden = items.length === 0;
    if (!items.length) open = false;
    label.textContent = `${items.length} ${items.length === 1 ? "suggestion" : "suggestions"} from ${fromWords(items)}`;
    bar.setAttribute("aria-expanded", String(open));
    bar.classList.toggle("open", open);
    list.hidden = !open;
    if (arrived.length) {
      const last = arrived[arrived.length - 1];
      const who = last.proposedAs || AI;
      news.textContent = `${who[0].toUpperCase()}${who.slice(1)} suggests a change for ${suggestionPlace(store, last).label}.`;
      bar.classList.remove("fresh");
      void bar.offsetWidth; // restart the highlight
      bar.classList.add("fresh");
    }
    // A card that leaves while the keyboard is in it (decided here or
    // elsewhere) hands focus on rather than dropping it on the page's body.
    const focused = list.contains(document.activeElement) ? document.activeElement.closest(".sugg-card") : null;
    const at = focused ? [...list.children].indexOf(focused) : -1;
    // Keyed by id: a poll leaves a card (its focus, its message) alone.
    reconcile(list, items, {
      key: (s) => s.id,
      signature: (s) => sig(s, store.canEdit, suggestionPlace(store, s).label, patchText(s)),
      create: card,
    });
    if (focused && !focused.isConnected) focusAfter(at);
  }

  // Where focus goes once the card it was in has left: the card now in its
  // place (or the last one), else, with the tray gone, the view's heading
  // below it, so Tab goes on from where the member was.
  function focusAfter(at) {
    const cards = [...list.children];
    const next = cards[Math.min(Math.max(at, 0), cards.length - 1)];
    const button = next && !list.hidden ? next.querySelector("button:not([disabled])") : null;
    if (button) return button.focus();
    if (!tray.hidden) return bar.focus();
    return focusPastRegion(host);
  }

  // A decision taken here: focus follows even when the card already left
  // with the answer's own re-render (the button was disabled while busy).
  function decided(li) {
    const at = [...list.children].indexOf(li);
    return () => {
      if (li.isConnected) return;
      const lost = !document.activeElement || document.activeElement === document.body || li.contains(document.activeElement);
      if (lost) focusAfter(at);
    };
  }

  function card(s) {
    const out = h("p", { class: "tool-err", "aria-live": "assertive" });
    const place = suggestionPlace(store, s);
    // Each card has the same three words: a reader going from button to
    // button hears which suggestion each one is for.
    const about = () => h("span", { class: "visually-hidden" }, ` the suggestion for ${place.label}`);
    const approve = h("button", { "data-needs-server": true, type: "button", class: "btn btn-primary btn-sm", "data-testid": "suggestion-approve" }, "Approve", about());
    const discuss = h("button", { "data-needs-server": true, type: "button", class: "btn btn-sm" }, "Discuss", about());
    const deny = h("button", { "data-needs-server": true, type: "button", class: "btn btn-sm btn-ghost" }, "Deny", about());
    const url = (what) => `${store.base}/agent/suggestions/${encodeURIComponent(s.id)}/${what}`;
    let li = null;

    approve.addEventListener("click", () => withBusy(approve, async () => {
      const refocus = decided(li);
      try {
        const trip = await post(url("approve"), { id: s.id, approved: true });
        store.applyWriteAnswer(trip);
        store.markSuggestion(s.id, "applied");
        toast(`Applied the suggestion from ${s.proposedAs || AI} for ${place.label}`, "success");
        render();
        refocus();
      } catch (err) {
        out.textContent = err.message;
        // trip_changing: it still applies and stays pending (the message says to try again).
        if (err.status === 409 && err.code !== "trip_changing") {
          store.markSuggestion(s.id, err.code === "expired" || err.code === "resolved" ? err.code : "stale");
          setTimeout(render, 4000);
        }
      }
    }, "Applying…"));
    deny.addEventListener("click", () => withBusy(deny, async () => {
      const refocus = decided(li);
      try {
        await post(url("approve"), { id: s.id, approved: false });
        hidden.add(s.id);
        render();
        refocus();
      } catch (err) {
        out.textContent = err.message;
      }
    }));
    discuss.addEventListener("click", () => {
      panel.open("chat");
      const view = panel.view("chat");
      if (view && view.prefill) view.prefill(`@agent About your suggestion for ${place.label} (“${s.suggestionText || s.reason}”): `);
    });
    // The day (and stop) it is about, shown on the itinerary with a press.
    const where = place.day
      ? h("button", { type: "button", class: "sugg-where", onclick: () => showOnPlan(store, panel, place.day.id, place.stop && place.stop.id) }, icon("pin", { size: 14 }), place.label)
      : h("span", { class: "sugg-where" }, place.label);
    const patch = patchText(s);
    if (s.proposedAs) {
      // What it would do (the server's summary is of the change once made), then the review's verdict.
      li = h("li", { class: "sugg-card from-assistant", "data-suggestion-id": s.id },
        h("p", { class: "sugg-head" }, where),
        h("p", { class: "sugg-from" }, icon("sparkle", { size: 14 }), `From ${s.proposedAs}`),
        h("p", { class: "sugg-text" }, patch || s.suggestionText),
        s.reason ? h("p", { class: "muted" }, s.reason) : null,
        h("div", { class: "row wrap" }, store.canEdit ? approve : null, deny),
        out);
      return li;
    }
    li = h("li", { class: `sugg-card sev-${s.severity || "low"}`, "data-suggestion-id": s.id },
      h("p", { class: "sugg-head" }, where, h("span", { class: `badge sev-${s.severity}` }, SEVERITY_WORDS[s.severity] || "note")),
      s.suggestionText ? h("p", { class: "sugg-text" }, s.suggestionText) : null,
      s.reason ? h("p", { class: "muted" }, s.reason) : null,
      patch ? h("p", { class: "sugg-patch" }, patch) : null,
      h("div", { class: "row wrap" }, store.canEdit ? approve : null, discuss, deny),
      out);
    return li;
  }

  const off = store.on((reason) => {
    if (reason === "agent" || reason === "trip") render();
  });
  render();
  return {
    destroy() {
      off();
      tray.remove();
    },
  };
}
