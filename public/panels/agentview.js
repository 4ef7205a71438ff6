// Drawing the agent timeline: member bubbles, agent replies with text,
// reasoning, tool cards and approval cards, and one-line operation events.

import { h, renderMarkdown, timeAgo, initials, fmtMinutes } from "../planner/ui.js";
import { isToolPart, toolNameOf } from "./agentstream.js";
import { icon } from "../planner/icons.js";

const TOOL_LABELS = {
  insert_stop: "Add a stop", update_stop: "Change a stop", move_stop: "Move a stop", delete_stop: "Remove a stop",
  add_day: "Add a day", update_day: "Change a day", reorder_days: "Reorder days", update_trip: "Change the trip",
  add_expense: "Record an expense", update_expense: "Change an expense", delete_expense: "Delete an expense",
};

function camel(name) {
  return name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

export function toolLabel(name) {
  return TOOL_LABELS[camel(name)] || name.replace(/[_-]/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2");
}

// A sentence for a write the agent asks to make, from its arguments.
export function describeWrite(store, name, input = {}) {
  const op = camel(name);
  const a = input || {};
  const dayName = (id) => {
    const d = store.day(id);
    return d ? `day ${d.position + 1}` : "a day";
  };
  const stopName = (id) => {
    for (const d of (store.trip && store.trip.days) || []) {
      const s = d.stops.find((x) => x.id === id);
      if (s) return `“${s.name}”`;
    }
    return "a stop";
  };
  switch (op) {
    case "insert_stop":
      return `Add “${a.name}” to ${dayName(a.dayId)}${a.setTime ? ` at ${a.setTime}` : ""}${a.durationMin ? ` for ${fmtMinutes(a.durationMin)}` : ""}`;
    case "update_stop": {
      const fields = Object.keys(a).filter((k) => k !== "stopId");
      return `Change ${stopName(a.stopId)}: ${fields.map((k) => `${k} → ${a[k] === null ? "cleared" : a[k]}`).join(", ")}`;
    }
    case "move_stop":
      return `Move ${stopName(a.stopId)} to ${dayName(a.toDayId)}, position ${Number(a.position) + 1}`;
    case "delete_stop":
      return `Remove ${stopName(a.stopId)}`;
    case "update_day":
      return `Change ${dayName(a.dayId)}${a.title ? `: title “${a.title}”` : ""}${a.startTime ? `, start ${a.startTime}` : ""}`;
    case "add_expense":
      return `Record “${a.title}” (${a.amountMinor} minor units ${a.currency || ""})`;
    default:
      return `${toolLabel(name)}`;
  }
}

const STATE_TEXT = {
  "input-streaming": "Preparing…", "input-available": "Running…", "approval-requested": "Needs your approval",
  "approval-responded": "Decision sent…", "output-available": "Done", "output-error": "Failed", "output-denied": "Denied",
};

function toolCard(store, msg, part, handlers) {
  const name = toolNameOf(part);
  const write = Boolean(store.writeTools && store.writeTools.has(camel(name))) || Boolean(TOOL_LABELS[camel(name)]);
  const state = part.state || "input-available";
  const card = h("div", { class: `tool-card state-${state}${write ? " write" : ""}`, "data-tool-call-id": part.toolCallId, "data-tool": name },
    h("div", { class: "tool-head" },
      h("span", { class: "tool-icon" }, icon(write ? "edit" : "search", { size: 14 })),
      h("span", { class: "tool-kind" }, write ? "Change to the trip" : "Looked up"),
      h("span", { class: `tool-state s-${state}` }, STATE_TEXT[state] || state)),
    h("p", { class: "tool-title" }, write ? describeWrite(store, name, part.input) : toolLabel(name)));
  if (part.input !== undefined && !write) {
    card.append(h("details", { class: "tool-io" }, h("summary", null, "Details"), h("pre", null, JSON.stringify(part.input, null, 2))));
  }
  if (state === "approval-requested" && part.approval) {
    const canDecide = store.canEdit && handlers && handlers.decide;
    if (canDecide) {
      const approve = h("button", { type: "button", class: "btn btn-primary btn-sm", "data-testid": "approve-tool" }, "Approve");
      const deny = h("button", { type: "button", class: "btn btn-sm", "data-testid": "deny-tool" }, "Deny");
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
  if (state === "output-error") card.append(h("p", { class: "tool-err" }, part.errorText || "The tool failed."));
  return card;
}

function partsView(store, msg, handlers) {
  const out = [];
  for (const part of msg.parts || []) {
    if (part.type === "text" && part.text) out.push(renderMarkdown(part.text));
    else if (part.type === "reasoning" && part.text) {
      out.push(h("details", { class: "reasoning" }, h("summary", null, "Reasoning"), h("p", null, part.text)));
    } else if (part.type === "file") {
      const label = part.filename || part.url.split("/").pop();
      out.push(part.mediaType && part.mediaType.startsWith("image/") && part.url.startsWith("/api/uploads/")
        ? h("a", { href: part.url, target: "_blank", rel: "noopener" }, h("img", { src: part.url, alt: label, class: "msg-img" }))
        : h("a", { href: part.url, target: "_blank", rel: "noopener noreferrer", class: "file-chip" }, icon("clip", { size: 13 }), label));
    } else if (part.type === "source-url") {
      out.push(h("a", { href: part.url, target: "_blank", rel: "noopener noreferrer", class: "source-chip" }, part.title || part.url));
    } else if (isToolPart(part)) out.push(toolCard(store, msg, part, handlers));
  }
  return out;
}

function textOf(msg) {
  return (msg.parts || []).filter((p) => p.type === "text").map((p) => p.text).join(" ");
}

export function messageView(store, msg, handlers) {
  const me = store.app.session.me;
  const when = msg.createdAt ? h("time", { datetime: msg.createdAt, class: "muted" }, timeAgo(msg.createdAt)) : null;
  if (msg.source === "operation" || (msg.role === "system" && msg.source !== "threshold")) {
    return h("li", { class: "msg op-event", "data-message-id": msg.id },
      h("span", { class: "op-dot", "aria-hidden": "true" }), h("span", null, msg.actorName ? h("strong", null, `${msg.actorName} `) : null, textOf(msg) || "Changed the trip"), " ", when);
  }
  if (msg.role === "user") {
    const mine = msg.actorUserId === me.id;
    const name = mine ? "You" : msg.actorName || store.memberName(msg.actorUserId);
    return h("li", { class: `msg from-member${mine ? " mine" : ""}`, "data-message-id": msg.id },
      mine ? null : h("span", { class: "avatar sm", "aria-hidden": "true" }, initials(name)),
      h("div", { class: "bubble" }, h("p", { class: "msg-meta" }, h("strong", null, name), " ", when), partsView(store, msg, handlers)));
  }
  const quiet = msg.source === "threshold" && !(msg.parts || []).some(isToolPart) && msg.role !== "assistant";
  const streaming = handlers && handlers.streamingId === msg.id;
  return h("li", { class: `msg from-agent${quiet ? " quiet" : ""}${msg.source === "threshold" ? " observation" : ""}`, "data-message-id": msg.id, "aria-busy": streaming ? "true" : null },
    h("span", { class: "avatar sm agent" }, icon("sparkle", { size: 14 })),
    h("div", { class: "bubble" },
      h("p", { class: "msg-meta" }, h("strong", null, "Trip agent"), " ", msg.source === "threshold" ? h("span", { class: "badge" }, "noticed") : null, " ", when),
      partsView(store, msg, handlers),
      streaming && !(msg.parts || []).some((p) => p.type === "text" && p.text) ? h("p", { class: "typing" }, h("span", { class: "spinner", "aria-hidden": "true" }), " Thinking…") : null));
}
