// The card gallery (dev page): one example of every catalog component from
// cards-gallery.json, each in a chat-bubble-wide column. Presses are recorded
// in window.cardEvents and shown in the log line; nothing is sent anywhere.

import { renderSpec } from "./panels/cards.js";
import { h } from "./planner/ui.js";
import { useCurrencyExponents } from "./money.js";

window.cardEvents = [];
const log = document.getElementById("gallery-log");
const record = (event) => {
  window.cardEvents.push(event);
  log.textContent = event.kind === "followUp"
    ? `Would send to the agent: “${event.text}”`
    : `Would show ${event.stopId ? `stop ${event.stopId} on ` : ""}day ${event.dayId}`;
};
const handlers = {
  onFollowUp: (text) => record({ kind: "followUp", text }),
  onFocus: ({ dayId, stopId }) => record({ kind: "focus", dayId, stopId }),
};

// Amounts read as on the app's pages when the server is there (ISO 4217 decimals).
try {
  useCurrencyExponents((await (await fetch("/api/config")).json()).data.currencyExponents);
} catch {
  // Without the server: two decimals, right for the gallery's euros.
}
const res = await fetch("/cards-gallery.json");
const fixture = await res.json();
const grid = document.getElementById("gallery");
for (const card of fixture.cards) {
  grid.append(h("section", { class: "gallery-item", "aria-label": card.title },
    h("h2", { class: "gallery-item-title" }, card.title),
    h("div", { class: "bubble gallery-bubble" }, renderSpec(card.spec, handlers))));
}
document.body.dataset.ready = "true";
