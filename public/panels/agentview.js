// Drawing the group's chat: member bubbles, AI replies with text, reasoning
// (collapsed), cards (the server's data-spec parts, drawn by cards.js), a
// street-view answer's status, tool cards and approval cards, and the trip's
// edits as quiet lines (a run of them folds into one "12 edits" line that
// opens). Everything on screen is in words: tool names, field names and raw
// validation errors never show. Avatars are keyed by the author's user id,
// so two members with the same name stay apart.

import { linkTarget } from "../links.js";
import { h, renderMarkdown, timeAgo, initials, fmtMinutes, fmtDay, memberTone, MEALS } from "../planner/ui.js";
import { formatMoney } from "../money.js";
import { isToolPart, toolNameOf } from "./agentstream.js";
import { renderSpec, specOfPart } from "./cards.js";
import { icon } from "../planner/icons.js";

export const AI_NAME = "Wayline AI";

// Write tools (the trip's ops): what the AI asks to do.
const WRITE_LABELS = {
  insert_stop: "Add a stop", update_stop: "Change a stop", move_stop: "Move a stop", swap_stops: "Swap two stops",
  delete_stop: "Remove a stop",
  add_day: "Add a day", update_day: "Change a day", reorder_days: "Reorder the days", update_trip: "Change the trip",
  add_expense: "Record an expense", update_expense: "Change an expense", delete_expense: "Delete an expense",
};
// Read tools: what the AI did (done) or is doing.
const READ_LABELS = {
  placeSearch: ["Searched for places", "Searching for places…"],
  placeNearby: ["Looked for places nearby", "Looking for places nearby…"],
  placeDetail: ["Looked up a place", "Looking up a place…"],
  routes: ["Worked out the travel time", "Working out the travel time…"],
  checkWeather: ["Checked the weather", "Checking the weather…"],
  lodgingSearch: ["Searched for places to stay", "Searching for places to stay…"],
  readTripMedia: ["Read a file", "Reading a file…"],
};
const MODE_WORDS = { walk: "walking", transit: "public transport", drive: "driving", bicycle: "cycling" };

function camel(name) {
  return name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

function isWrite(name) {
  return Boolean(WRITE_LABELS[camel(name)]);
}

function toolLabel(name, done = true) {
  const read = READ_LABELS[name];
  if (read) return done ? read[0] : read[1];
  return WRITE_LABELS[camel(name)] || "Used a tool";
}

const quote = (text) => `“${text}”`;

// A sentence for a write the AI asks to make, from its arguments.
export function describeWrite(store, name, input = {}) {
  const op = camel(name);
  const a = input || {};
  const dayName = (id) => {
    const d = store.day(id);
    return d ? `day ${d.position + 1}` : "a day";
  };
  const stopName = (id) => {
    const found = store.stop(id);
    return found ? quote(found.stop.name) : "a stop";
  };
  switch (op) {
    case "insert_stop":
      return `Add ${quote(a.name)} to ${dayName(a.dayId)}${a.setTime ? ` at ${a.setTime}` : ""}${a.durationMin ? ` for ${fmtMinutes(a.durationMin)}` : ""}`;
    case "update_stop":
      return stopChange(stopName(a.stopId), a);
    case "move_stop": {
      const target = store.day(a.toDayId);
      const others = target ? target.stops.filter((s) => s.id !== a.stopId) : [];
      const after = Number(a.position) > 0 ? others[Number(a.position) - 1] : null;
      return `Move ${stopName(a.stopId)} to ${after ? `${dayName(a.toDayId)}, after ${quote(after.name)}` : `the start of ${dayName(a.toDayId)}`}`;
    }
    case "swap_stops": {
      // Each takes the other's day and place in it (a rainy day's park for a dry day's museum).
      const dayOf = (id) => { const found = store.stop(id); return found ? dayName(found.day.id) : "a day"; };
      return `Swap ${stopName(a.stopId)} (${dayOf(a.stopId)}) with ${stopName(a.otherStopId)} (${dayOf(a.otherStopId)})`;
    }
    case "delete_stop":
      return `Remove ${stopName(a.stopId)}`;
    case "update_day": {
      const bits = [];
      if (a.title) bits.push(`call it ${quote(a.title)}`);
      if (a.startTime) bits.push(`start it at ${a.startTime}`);
      else if ("startTime" in a) bits.push("clear its start time");
      if ("note" in a) bits.push("change its note");
      return `Change ${dayName(a.dayId)}${bits.length ? `: ${bits.join(", ")}` : ""}`;
    }
    case "reorder_days":
      return "Put the days in a new order";
    case "add_day":
      return `Add a day${a.title ? ` called ${quote(a.title)}` : ""}`;
    case "update_trip":
      return a.startDate ? `Move the trip to start on ${fmtDay(a.startDate)}` : a.title ? `Rename the trip to ${quote(a.title)}` : "Change the trip's details";
    case "add_expense":
      return `Record ${quote(a.title)}${a.currency && a.amountMinor ? ` (${formatMoney(a.amountMinor, a.currency)})` : ""}`;
    case "update_expense":
      return "Change an expense";
    case "delete_expense":
      return "Delete an expense";
    default:
      return toolLabel(name);
  }
}

function stopChange(who, a) {
  const bits = [];
  if (a.name) bits.push(`rename it ${quote(a.name)}`);
  if (a.setTime) bits.push(`set it to ${a.setTime}`);
  else if ("setTime" in a) bits.push("clear its fixed time");
  if (a.durationMin) bits.push(`make it ${fmtMinutes(a.durationMin)} long`);
  if (a.meal) bits.push(`mark it as ${(MEALS.find(([v]) => v === a.meal) || [null, a.meal])[1].toLowerCase()}`);
  else if ("meal" in a) bits.push("mark it as not a meal");
  if (["lat", "lng", "address", "placeId"].some((k) => k in a)) bits.push("change its location");
  if ("note" in a) bits.push("change its note");
  if (a.kind) bits.push("change its kind");
  return bits.length ? `Change ${who}: ${bits.join(", ")}` : `Change ${who}`;
}

// What a read tool looked at, in words (not its JSON input).
function readDetail(name, input) {
  const a = input || {};
  if ((name === "placeSearch" || name === "lodgingSearch") && a.query) return quote(a.query);
  if (name === "checkWeather" && a.startDate) return `${fmtDay(a.startDate)}${a.days > 1 ? `, ${a.days} days` : ""}`;
  if (name === "routes" && a.mode) return MODE_WORDS[a.mode] || a.mode;
  if (name === "readTripMedia" && a.url) return decodeURIComponent(String(a.url).split("/").pop());
  return null;
}

// A tool's error in plain words: the server's sentence when it is one, a
// summary when it looks like a raw validation message.
const RAW_ERROR = /Invalid arguments|Field required|Input should|validation error|\b[a-z]+[A-Z][A-Za-z]*\b/;
export function toolErrorText(name, text) {
  if (text && !RAW_ERROR.test(text)) return text;
  return isWrite(name)
    ? "This change did not fit the trip, so nothing was changed."
    : `${toolLabel(name, false).replace(/…$/, "")} did not work: the request was incomplete.`;
}

const STATE_TEXT = {
  "input-streaming": "Preparing…", "input-available": "Running…", "approval-requested": "Needs your approval",
  "approval-responded": "Decision sent…", "output-available": "Done", "output-error": "Did not work", "output-denied": "Denied",
};

function toolCard(store, msg, part, handlers) {
  const name = toolNameOf(part);
  const write = isWrite(name);
  const state = part.state || "input-available";
  const done = state === "output-available" || state === "output-error";
  const detail = write ? null : readDetail(name, part.input);
  const card = h("div", { class: `tool-card state-${state}${write ? " write" : ""}`, "data-tool-call-id": part.toolCallId, "data-tool": name },
    h("div", { class: "tool-head" },
      h("span", { class: "tool-icon" }, icon(write ? "edit" : "search", { size: 14 })),
      h("span", { class: "tool-kind" }, write ? "Change to the trip" : "Looked up"),
      h("span", { class: `tool-state s-${state}` }, STATE_TEXT[state] || "")),
    h("p", { class: "tool-title" }, write ? describeWrite(store, name, part.input) : toolLabel(name, done || state === "output-denied"),
      detail ? h("span", { class: "muted tool-detail" }, ` · ${detail}`) : null));
  if (state === "approval-requested" && part.approval) {
    const canDecide = store.canEdit && handlers && handlers.decide;
    if (canDecide) {
      const approve = h("button", { "data-needs-server": true, type: "button", class: "btn btn-primary btn-sm", "data-testid": "approve-tool", "data-fkey": `approve:${part.toolCallId}` }, "Approve");
      const deny = h("button", { "data-needs-server": true, type: "button", class: "btn btn-sm", "data-testid": "deny-tool", "data-fkey": `deny:${part.toolCallId}` }, "Deny");
      approve.addEventListener("click", () => handlers.decide(msg, part, true, approve));
      deny.addEventListener("click", () => handlers.decide(msg, part, false, deny));
      card.append(h("div", { class: "row" }, approve, deny));
    } else {
      card.append(h("p", { class: "hint" }, store.canEdit ? "Waiting for a decision." : "An editor of the trip can approve this."));
    }
  }
  if (state === "approval-responded" && part.approval) {
    card.append(h("p", { class: "hint" }, part.approval.approved ? "Approved — applying…" : "Denied."));
  }
  if (state === "output-available" && part.output && typeof part.output === "object" && part.output.summary) {
    card.append(h("p", { class: "tool-out" }, part.output.summary));
  }
  if (state === "output-error") card.append(h("p", { class: "tool-err" }, toolErrorText(name, part.errorText)));
  return card;
}

// A failed street-view answer: the server's fixed sentence, shown as a status
// (the message's text says the same, so it is not repeated).
function statusView(data) {
  const message = data && typeof data.message === "string" ? data.message : null;
  if (!message) return null;
  const tone = data.tone === "error" ? "error" : "warning";
  return h("p", { class: `agent-status-note tone-${tone}`, role: "status" }, icon("alert", { size: 15 }), h("span", null, message));
}

function partsView(store, msg, handlers) {
  const out = [];
  const cards = handlers && handlers.cards ? handlers.cards : {};
  const hasStatus = (msg.parts || []).some((p) => p.type === "data-agent-status");
  for (const part of msg.parts || []) {
    if (part.type === "text" && part.text) {
      if (!hasStatus) out.push(renderMarkdown(part.text, store.tripId));
    } else if (part.type === "data-spec") {
      const card = renderSpec(specOfPart(part), cards);
      if (card) out.push(card);
    } else if (part.type === "data-agent-status") {
      out.push(statusView(part.data));
    } else if (part.type === "reasoning" && part.text) {
      // Summaries in a row (one per reasoning step) fold into one closed block.
      const last = out[out.length - 1];
      if (last && last.classList && last.classList.contains("reasoning")) last.append(h("p", null, part.text));
      else out.push(h("details", { class: "reasoning" }, h("summary", null, "How it thought about it"), h("p", null, part.text)));
    } else if (part.type === "file") {
      const label = part.filename || String(part.url).split("/").pop();
      const target = linkTarget(part.url, store.tripId);
      out.push(target === "upload" && part.mediaType && part.mediaType.startsWith("image/")
        ? h("a", { href: part.url, target: "_blank", rel: "noopener" }, h("img", { src: part.url, alt: label, class: "msg-img" }))
        : target ? h("a", { href: part.url, target: "_blank", rel: "noopener noreferrer", class: "file-chip" }, icon("clip", { size: 13 }), label)
          : h("span", { class: "file-chip" }, icon("clip", { size: 13 }), label));
    } else if (part.type === "source-url") {
      out.push(h("a", { href: part.url, target: "_blank", rel: "noopener noreferrer", class: "source-chip" }, part.title || part.url));
    } else if (isToolPart(part)) out.push(toolCard(store, msg, part, handlers));
  }
  return out;
}

function textOf(msg) {
  return (msg.parts || []).filter((p) => p.type === "text").map((p) => p.text).join(" ");
}

// An edit to the trip (an op event) rather than something someone said.
export function isEdit(msg) {
  return msg.source === "operation" || (msg.role === "system" && msg.source !== "threshold");
}

function when(msg) {
  return msg.createdAt ? h("time", { datetime: msg.createdAt, class: "muted" }, timeAgo(msg.createdAt)) : null;
}

// "Bob set “Castelo” to 10:30": the op's summary as a sentence after the name.
function editText(msg) {
  const text = textOf(msg) || "Changed the trip";
  if (!msg.actorName) return text;
  return [h("strong", null, `${msg.actorName} `), /^[A-Z][a-z]/.test(text) ? text[0].toLowerCase() + text.slice(1) : text];
}

function editLine(msg, { withTime = true } = {}) {
  return [h("span", { class: "op-dot", "aria-hidden": "true" }), h("span", null, editText(msg)), withTime ? [" ", when(msg)] : null];
}

// Who wrote a member message, by user id: the member's current name (with
// their username when another member has the same name), else the name the
// message was written under (a former member).
export function authorName(store, userId, fallback) {
  const member = userId ? store.member(userId) : null;
  if (!member) return fallback || "A former member";
  const name = member.displayName || member.username;
  const twin = store.trip.members.some((m) => m.userId !== userId && (m.displayName || m.username) === name);
  return twin ? `${name} (@${member.username})` : name;
}

export function messageView(store, msg, handlers) {
  const me = store.app.session.me;
  if (isEdit(msg)) {
    return h("li", { class: "msg op-event", "data-message-id": msg.id }, editLine(msg));
  }
  if (msg.role === "user") {
    const mine = msg.actorUserId === me.id;
    const name = mine ? "You" : authorName(store, msg.actorUserId, msg.actorName);
    return h("li", { class: `msg from-member${mine ? " mine" : ""}`, "data-message-id": msg.id, "data-actor-id": msg.actorUserId || null },
      mine ? null : h("span", { class: `avatar sm tone-${memberTone(msg.actorUserId)}`, "aria-hidden": "true", "data-actor-id": msg.actorUserId || null }, initials(name)),
      h("div", { class: "bubble" }, h("p", { class: "msg-meta" }, h("strong", null, name), " ", when(msg)), partsView(store, msg, handlers)));
  }
  const quiet = msg.source === "threshold" && !(msg.parts || []).some(isToolPart) && msg.role !== "assistant";
  const streaming = handlers && handlers.streamingId === msg.id;
  const debug = !streaming && !msg.local && handlers && handlers.copyDebug
    ? h("button", { type: "button", class: "icon-btn msg-debug", "aria-label": "Copy debug info", title: "Copy debug info", "data-fkey": `debug:${msg.id}`, onclick: () => handlers.copyDebug(msg) }, icon("copy", { size: 13 }))
    : null;
  // A member's connected assistant speaks under its own name ("Claude via Alice").
  const outside = msg.source === "assistant";
  return h("li", { class: `msg from-agent${quiet ? " quiet" : ""}${msg.source === "threshold" ? " observation" : ""}${outside ? " from-assistant" : ""}`, "data-message-id": msg.id, "aria-busy": streaming ? "true" : null },
    h("span", { class: "avatar sm agent", "aria-hidden": "true" }, icon("sparkle", { size: 14 })),
    h("div", { class: "bubble" },
      h("p", { class: "msg-meta" }, h("strong", null, outside ? msg.actorName : AI_NAME), " ",
        msg.source === "threshold" ? h("span", { class: "badge" }, "noticed") : outside ? h("span", { class: "badge" }, "proposes") : null, " ", when(msg), outside ? null : debug),
      partsView(store, msg, handlers),
      streaming && !(msg.parts || []).some((p) => p.type === "text" && p.text) ? h("p", { class: "typing" }, h("span", { class: "spinner", "aria-hidden": "true" }), " Thinking…") : null));
}

// A run of edits as one quiet line, "12 edits by Alice and Bob", that opens
// to show each of them.
export function editsView(store, run) {
  const first = run[0].id;
  const open = store.areEditsOpen(first);
  const names = [...new Set(run.map((m) => m.actorName).filter(Boolean))];
  const who = names.length ? ` by ${names.length > 2 ? `${names.slice(0, 2).join(", ")} and others` : names.join(" and ")}` : "";
  const last = run[run.length - 1];
  return h("li", { class: `msg op-group${open ? " open" : ""}`, "data-first-id": first },
    h("button", { type: "button", class: "op-toggle", "aria-expanded": String(open), "data-fkey": "toggle", onclick: () => store.toggleEdits(first) },
      h("span", { class: "op-dot", "aria-hidden": "true" }),
      h("span", { class: "op-text" }, `${run.length} edits${who} `, when(last)), icon(open ? "chevronUp" : "chevronDown", { size: 14 })),
    open ? h("ol", { class: "op-list" }, run.map((m) => h("li", { class: "op-event", "data-message-id": m.id }, editLine(m, { withTime: false })))) : null);
}
