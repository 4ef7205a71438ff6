// The group's chat: one shared timeline per trip. Who a message is for is
// decided while it is typed (addressing.js, the server's twin) and said under
// the composer: plain messages, and any that names a member or is only a
// reaction, go to the group (POST …/agent/messages, no AI); a message that
// mentions @agent, or continues the AI's own turn, is a chat turn streamed
// over the AI SDK UI message stream (POST …/agent/chat), unless the member
// presses "Group only". Write tools stop at an approval card; Approve/Deny
// continues the chat with the approval response, as useChat does. The log
// is reconciled by message id; runs of edits fold into one line; what is
// being typed is a draft in the store. A card's button does one of two
// things on a press: send its text to the AI as the member's next message,
// or show a day (and stop) of the trip. Each AI message can copy its debug
// info (ids only) to the clipboard.
//
// On a server without AI (config.aiEnabled false) the chat is the members'
// alone: every message is plain (the rule says "no_ai"), and nothing here
// offers or mentions the AI (no @agent hint, no "Group only", no approvals,
// follow-ups or debug info on replies kept from when the server had one).

import { isOnline } from "../offline/connection.js";
import { get, post, streamChunks } from "../api.js";
import { h, clear, errorBox, withBusy, attachUpload, toast, timeAgo } from "../planner/ui.js";
import { decide as decideAddressee, CONTINUATION_MINUTES } from "./addressing.js";
import { reconcile, sig } from "../planner/keyed.js";
import { applyChunk, newAssistantMessage, localId, forServer, isToolPart } from "./agentstream.js";
import { messageView, editsView, isEdit } from "./agentview.js";
import { showOnPlan } from "./common.js";
import { icon } from "../planner/icons.js";

const MAX_TEXT = 4000;
const CONTEXT_MESSAGES = 30; // earlier chat messages sent along, as useChat sends its whole list

export function mountAgent(el, store, panel) {
  const aiOn = store.app.session.config.aiEnabled;
  const me = store.app.session.me;
  const list = h("ol", { class: "agent-log", "aria-label": "Trip conversation", "aria-live": "polite" });
  const scroller = h("div", { class: "agent-scroll" }, list);
  const status = h("div", { class: "agent-status", "aria-live": "assertive" });
  const text = h("textarea", { name: "message", rows: 2, maxlength: MAX_TEXT, placeholder: aiOn ? "Message the group — start with @agent to ask the AI" : "Message the group", "aria-label": "Message", "aria-describedby": "composer-hint", "data-fkey": "message" });
  text.value = store.draft("message");
  const send = h("button", { "data-needs-server": true, type: "submit", class: "btn btn-primary" }, "Send");
  const attach = h("button", { "data-needs-server": true, type: "button", class: "icon-btn", "aria-label": "Attach a file to the message" }, icon("clip"));
  const fileInput = attachUpload(attach, {
    url: `${store.base}/media`,
    onUploaded(media, file) {
      files.push({ type: "file", mediaType: media.mediaType, url: media.url, filename: media.filename || file.name });
      renderAttached();
    },
  });
  const attached = h("div", { class: "attached" });
  // Before sending: who will read it. "Group only" keeps a continuation from the AI.
  const modeHint = h("p", { class: "hint composer-hint", id: "composer-hint", "aria-live": "polite" });
  const groupOnly = h("button", { "data-needs-server": true, type: "button", class: "chip-btn group-only", "aria-pressed": "false", hidden: true }, "Group only");
  let keepFromAi = false;
  let waitingAfter = null; // the seq of a message the application will answer (street view)
  groupOnly.addEventListener("click", () => {
    keepFromAi = !keepFromAi;
    updateHint();
    text.focus();
  });
  const form = h("form", { class: "composer agent-composer" }, attached, text,
    h("div", { class: "composer-to" }, modeHint, groupOnly),
    h("div", { class: "row between" }, h("span", { class: "row" }, attach, fileInput), send));
  el.append(h("div", { class: "panel-intro" }, h("p", { class: "muted" }, aiOn
    ? "Everyone on the trip sees this chat. Write @agent to ask the AI; it changes the plan only when someone approves."
    : "Everyone on the trip sees this chat, and the changes to the plan as they are made.")), scroller, status, form);

  const files = []; // file parts waiting to be sent
  let streamingId = null;
  let abort = null;
  // The current chat turn's UIMessages (user + assistant), for approval continuations.
  let turn = [];

  // Without AI, a reply kept from before offers nothing that needs it.
  const handlers = {
    get streamingId() {
      return streamingId;
    },
    ...(aiOn ? { decide, copyDebug } : {}),
    cards: aiOn ? { onFollowUp: followUp, onFocus: focus } : { onFocus: focus },
  };

  // A card's follow-up button: the text goes to the AI as this member's message.
  async function followUp(value) {
    if (streamingId) {
      toast("Wait for the AI to finish its answer", "info");
      return;
    }
    clear(status);
    try {
      await chatTurn(value, []);
    } catch (err) {
      status.append(errorBox(err));
    }
  }

  // A card's focus button: show that day of the trip (and that stop on it).
  function focus({ dayId, stopId }) {
    if (!store.day(dayId)) {
      toast("That day is no longer in the trip", "info");
      return;
    }
    showOnPlan(store, panel, dayId, stopId);
  }

  // "Copy debug info": the server's correlation ids for the message (never its text).
  async function copyDebug(msg) {
    try {
      const info = await get(`${store.base}/agent/messages/${encodeURIComponent(msg.id)}/debug`);
      await navigator.clipboard.writeText(JSON.stringify(info, null, 2));
      toast("Debug info copied", "success");
    } catch (err) {
      toast(err && err.name === "NotAllowedError" ? "The browser did not allow copying" : "Could not copy the debug info", "error");
    }
  }

  function visible() {
    return store.sortedMessages().filter((m) => m.source !== "stop_comment");
  }

  // What the log shows, in order: messages, and runs of edits folded into one entry.
  function entries() {
    const out = [];
    let run = [];
    const flush = () => {
      if (run.length === 1) out.push({ msg: run[0] });
      else if (run.length) out.push({ edits: run });
      run = [];
    };
    for (const m of visible()) {
      if (isEdit(m)) run.push(m);
      else {
        flush();
        out.push({ msg: m });
      }
    }
    flush();
    if (!out.length) out.push({ empty: store.agent.loaded });
    if (store.agent.error) out.unshift({ error: store.agent.error });
    return out;
  }

  function render() {
    const nearBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
    reconcile(list, entries(), {
      key: (e) => (e.msg ? `m:${e.msg.id}` : e.edits ? `e:${e.edits[0].id}` : e.error ? "error" : "empty"),
      signature: (e) => {
        if (e.msg) return sig(e.msg.parts, e.msg.actorName, e.msg.local, timeAgo(e.msg.createdAt), streamingId === e.msg.id, store.canEdit, store.trip && store.trip.members.length);
        if (e.edits) return sig(e.edits.map((m) => m.id), timeAgo(e.edits[e.edits.length - 1].createdAt), store.areEditsOpen(e.edits[0].id));
        return sig(e.error ? e.error.message : e.empty);
      },
      create: (e) => {
        if (e.msg) return messageView(store, e.msg, handlers);
        if (e.edits) return editsView(store, e.edits);
        if (e.error) return h("li", null, errorBox(e.error));
        const hello = aiOn ? "No messages yet. Say hello, or ask “@agent what should we do on day 1?”" : "No messages yet. Say hello to the group.";
        return h("li", { class: "muted empty-log" }, e.empty ? hello
          : isOnline() ? "Loading the conversation…" : "The conversation shows when you are back online.");
      },
    });
    updateHint();
    answerArrived();
    if (nearBottom || streamingId) scroller.scrollTop = scroller.scrollHeight;
  }

  // The AI's own turn goes on when the newest chat message is its reply, recent enough.
  function afterAgent() {
    const last = visible().filter((m) => !isEdit(m) && m.role !== "system").pop();
    // Neither a proactive note nor a connected assistant's proposal opens the AI's turn (addressing.py).
    if (!last || last.role !== "assistant" || last.source === "threshold" || last.source === "assistant") return false;
    return !last.createdAt || Date.now() - Date.parse(last.createdAt) <= CONTINUATION_MINUTES * 60000;
  }

  // {to: "agent" | "group", why, member, override}: what a send would do now.
  function addressee(value) {
    const d = decideAddressee(value, { afterAgent: afterAgent(), members: (store.trip && store.trip.members) || [], aiOn });
    const overridable = d.to !== "group" && d.why !== "mention";
    if (!overridable) keepFromAi = false;
    return { ...d, to: d.to === "group" || (overridable && keepFromAi) ? "group" : "agent", overridable };
  }

  function updateHint() {
    const d = addressee(text.value);
    const words = {
      mention: "Goes to the AI, which answers here.",
      continuation: "Goes to the AI: it follows the AI's reply.",
      unclear: "Goes to the AI: it follows the AI's reply.",
      member: `Goes to ${d.member} and the group: the AI won't answer.`,
      reaction: "Goes to the group: the AI won't answer.",
      plain: "Goes to the group. Start with @agent to ask the AI.",
      no_ai: "Goes to the group: everyone on the trip reads it.",
    };
    modeHint.textContent = d.overridable && keepFromAi ? "Goes to the group only: the AI won't answer." : words[d.why];
    form.dataset.to = d.to;
    groupOnly.hidden = !d.overridable;
    groupOnly.setAttribute("aria-pressed", String(keepFromAi));
  }
  text.addEventListener("input", () => {
    store.setDraft("message", null, text.value);
    updateHint();
  });
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });

  function renderAttached() {
    clear(attached);
    files.forEach((f, i) => attached.append(h("span", { class: "file-chip" }, icon("clip", { size: 13 }), f.filename,
      h("button", { type: "button", class: "icon-btn", "aria-label": `Remove ${f.filename}`, onclick: () => { files.splice(i, 1); renderAttached(); } }, icon("x", { size: 14 })))));
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = text.value.trim();
    if ((!value && !files.length) || streamingId) return;
    clear(status);
    const sending = files.splice(0);
    renderAttached();
    text.value = "";
    store.setDraft("message", null, "");
    const to = addressee(value);
    keepFromAi = false;
    try {
      if (to.to === "agent") await chatTurn(value, sending);
      else await plainMessage(value, sending, to.overridable);
    } catch (err) {
      status.append(errorBox(err));
      if (!text.value) {
        text.value = value;
        store.setDraft("message", null, value);
      }
      if (!files.length) {
        files.push(...sending);
        renderAttached();
      }
    }
    updateHint();
  });

  // `groupOnly`: the member kept a continuation from the AI.
  async function plainMessage(value, sending, groupOnlyChosen) {
    const body = {};
    if (value) body.text = value;
    if (sending.length) body.files = sending;
    if (groupOnlyChosen) body.groupOnly = true;
    const res = await withBusy(send, () => post(`${store.base}/agent/messages`, body), "Sending…");
    store.mergeMessages([res.message]);
    if (res.addressed) {
      // An answer by the application (street view): said until it is here.
      waitingAfter = res.message.seq;
      status.append(h("p", { class: "hint", "data-testid": "answer-coming" }, "The AI will answer shortly."));
    }
    store.emit("agent");
  }

  // The note above goes once an answer newer than the message is in the log.
  function answerArrived() {
    if (waitingAfter === null) return;
    if (visible().some((m) => m.role === "assistant" && typeof m.seq === "number" && m.seq > waitingAfter)) {
      waitingAfter = null;
      const note = status.querySelector("[data-testid=answer-coming]");
      if (note) note.remove();
    }
  }

  async function chatTurn(value, sending) {
    const parts = [];
    if (value) parts.push({ type: "text", text: value });
    parts.push(...sending);
    const user = { id: localId("msg"), role: "user", parts };
    const history = conversationBefore(null);
    store.putMessage({ ...user, actorUserId: me.id, actorName: me.displayName || me.username, source: /@agent/i.test(value) ? "mention" : "chat", createdAt: new Date().toISOString(), local: true });
    turn = [...history, user];
    store.emit("agent");
    const refused = await runStream({ messages: turn.map(forServer), trigger: "submit-message" }, null);
    if (refused) {
      // Refused before its stream began (the member's AI share is spent, a
      // message too long): the server kept nothing, so it was never sent.
      // It leaves the chat and goes back in the composer (the caller).
      store.dropMessage(user.id);
      turn = history;
      store.emit("agent");
      throw refused;
    }
  }

  // One streamed request. `continuing` is the assistant message to keep
  // appending to (an approval continuation), or null for a new one. Returns
  // the error when the server refused a new turn before its stream began
  // (nothing was stored; the caller says so), else null.
  async function runStream(body, continuing) {
    let msg = continuing || newAssistantMessage();
    const startedWith = msg.id;
    streamingId = msg.id;
    const shown = () => store.putMessage({ ...msg, source: "chat", createdAt: msg.createdAt || new Date().toISOString(), local: true });
    shown();
    store.emit("agent");
    send.disabled = true;
    abort = new AbortController();
    let failed = null;
    let refusalData = null;
    let refused = null;
    let received = false;
    try {
      // dayId: the day shown, which the agent reads in full on a trip too long to send whole.
      await streamChunks(`${store.base}/agent/chat`, { id: store.tripId, dayId: store.day()?.id ?? null, ...body, ...(continuing ? { messageId: continuing.id } : {}) }, {
        signal: abort.signal,
        onChunk(chunk) {
          received = true;
          const before = msg.id;
          const result = applyChunk(msg, chunk);
          if (msg.id !== before) {
            // The server named the message: show it under that id from now on.
            store.dropMessage(before);
            streamingId = msg.id;
          }
          if (result.error) failed = result.error;
          // A refused turn's data (when AI is back) comes just before its error, which carries text only.
          if (result.data && result.data.type === "data-refusal") refusalData = result.data.data;
          if (result.trip) store.applyWriteAnswer(result);
          shown();
          store.emit("agent");
        },
      });
    } catch (err) {
      if (!received && !continuing && err.status >= 400) refused = err;
      else if (err.name !== "AbortError") failed = err.message;
    } finally {
      streamingId = null;
      abort = null;
      send.disabled = false;
    }
    if (refused) {
      store.dropMessage(msg.id);
      return refused;
    }
    // A new turn that brought nothing (it failed before the AI said a word,
    // e.g. the day's AI limit): no empty reply is left to show, or to follow.
    const said = msg.parts.some((p) => p.type !== "step-start");
    if (!continuing && ((failed && !said) || (!msg.parts.length && startedWith === msg.id))) store.dropMessage(msg.id);
    else shown();
    turn = [...turn.filter((m) => m.id !== msg.id && m.id !== startedWith), msg];
    store.emit("agent");
    if (failed) {
      const refusal = refusalData ? { code: refusalData.code, details: refusalData } : {};
      status.append(errorBox(Object.assign(new Error(failed), refusal)));
    }
    // Other members' views learn of the turn through polling; ours polls now
    // so the server's copies (with seq numbers) replace the local ones.
    if (store.sync) store.sync.now();
  }

  // Approve or deny one tool call; when every approval in the message has an
  // answer, the chat continues with the full turn (like useChat's
  // lastAssistantMessageIsCompleteWithApprovalResponses).
  async function decide(msg, part, approved, button) {
    if (streamingId) return;
    const live = turn.find((m) => m.id === msg.id) || cloneMessage(msg);
    const target = live.parts.find((p) => isToolPart(p) && p.toolCallId === part.toolCallId);
    if (!target || !target.approval) return;
    target.state = "approval-responded";
    target.approval = { id: target.approval.id, approved, ...(approved ? {} : { reason: "Denied by a member" }) };
    if (!turn.includes(live)) turn = [...conversationBefore(live.id), live];
    store.putMessage({ ...(store.agent.messages.get(live.id) || {}), ...live });
    store.emit("agent");
    const waiting = live.parts.some((p) => isToolPart(p) && p.state === "approval-requested");
    if (waiting) {
      toast("Decision noted — answer the other requests to continue", "info");
      return;
    }
    try {
      await withBusy(button, () => runStream({ messages: turn.map(forServer), trigger: "submit-message" }, live));
    } catch (err) {
      status.append(errorBox(err));
    }
  }

  function cloneMessage(msg) {
    return { id: msg.id, role: msg.role, metadata: msg.metadata, createdAt: msg.createdAt, parts: JSON.parse(JSON.stringify(msg.parts || [])) };
  }

  // The chat so far (members' messages and agent replies, not operation
  // lines), as UIMessages: the server builds the model's context from them.
  // `beforeId`: stop at that message (an approval continuation); null: all.
  function conversationBefore(beforeId) {
    const out = [];
    for (const m of visible()) {
      if (beforeId && m.id === beforeId) break;
      if ((m.role !== "user" && m.role !== "assistant") || isEdit(m)) continue;
      out.push(forServer({ id: m.id, role: m.role, parts: (m.parts || []).filter((p) => p.type !== "step-start") }));
    }
    return out.slice(-CONTEXT_MESSAGES);
  }

  const off = store.on((reason) => {
    if (reason === "agent" || reason === "trip" || reason === "ui") render();
  });
  render();
  return {
    shown() {
      render();
      scroller.scrollTop = scroller.scrollHeight;
    },
    prefill(value) {
      text.value = value;
      store.setDraft("message", null, value);
      updateHint();
      text.focus();
      text.setSelectionRange(value.length, value.length);
    },
    destroy() {
      off();
      if (abort) abort.abort();
    },
  };
}
