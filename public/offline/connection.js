// Whether Wayline can be reached. The browser's online flag says when the
// device has no network at all; requests say the rest (a request that could
// not reach the server means offline until one does, or until a probe of
// /healthz answers). <html data-connection="online|offline"> shows it to
// styles and tests.
//
// Controls that need the server carry `data-needs-server` (any element: a
// button, a link, a field). While offline they are disabled and say why
// ("Needs a connection", read out through aria-describedby); they come back
// when the connection does. Controls drawn while offline are caught as they
// are added, so a region that re-renders offline needs no extra code.

const PROBE_MIN_MS = 3000;
const PROBE_MAX_MS = 60000;
const REASON_ID = "needs-connection-reason";

let online = navigator.onLine !== false;
let probeTimer = null;
let probeDelay = PROBE_MIN_MS;
const listeners = new Set();

export function isOnline() {
  return online;
}

// fn(online) on every change; returns the unsubscribe.
export function onConnection(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

// What a request found: reached (any answer, even an error status) or not.
export function noteReached(reached) {
  if (reached) {
    set(true);
    return;
  }
  set(false);
  if (navigator.onLine !== false) probeSoon(); // the device has a network: find out when Wayline answers again
}

function set(next) {
  clearTimeout(probeTimer);
  probeTimer = null;
  if (next) probeDelay = PROBE_MIN_MS;
  if (next === online) return;
  online = next;
  document.documentElement.dataset.connection = online ? "online" : "offline";
  guardAll();
  for (const fn of [...listeners]) {
    try {
      fn(online);
    } catch (err) {
      console.error(err);
    }
  }
}

function probeSoon() {
  if (probeTimer) return;
  probeTimer = setTimeout(async () => {
    probeTimer = null;
    try {
      const res = await fetch("/healthz", { cache: "no-store" });
      if (res.ok) {
        set(true);
        return;
      }
    } catch {
      // still unreachable
    }
    probeDelay = Math.min(PROBE_MAX_MS, probeDelay * 2);
    if (!online && navigator.onLine !== false) probeSoon();
  }, probeDelay);
}

// -- controls that need the server ---------------------------------------------

function reasonElement() {
  let el = document.getElementById(REASON_ID);
  if (!el) {
    el = document.createElement("span");
    el.id = REASON_ID;
    el.className = "visually-hidden";
    el.textContent = "Needs a connection.";
    document.body.append(el);
  }
  return el;
}

function guard(el) {
  if (online) {
    const was = el.dataset.offlineDisabled;
    if (was === undefined) return;
    delete el.dataset.offlineDisabled;
    if ("disabled" in el) el.disabled = was === "was"; // as it was before (e.g. the first day's "earlier")
    el.removeAttribute("aria-disabled");
    const described = (el.getAttribute("aria-describedby") || "").split(" ").filter((id) => id && id !== REASON_ID);
    if (described.length) el.setAttribute("aria-describedby", described.join(" "));
    else el.removeAttribute("aria-describedby");
    if (el.title === "Needs a connection") el.removeAttribute("title");
    return;
  }
  if (el.dataset.offlineDisabled !== undefined) return;
  el.dataset.offlineDisabled = "disabled" in el && el.disabled ? "was" : "";
  if ("disabled" in el) el.disabled = true;
  else el.setAttribute("aria-disabled", "true"); // a link: the click is stopped below
  reasonElement();
  const described = (el.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
  el.setAttribute("aria-describedby", [...described, REASON_ID].join(" "));
  if (!el.title) el.title = "Needs a connection";
}

function guardAll(root = document) {
  for (const el of root.querySelectorAll("[data-needs-server]")) guard(el);
}

function watchControls() {
  document.documentElement.dataset.connection = online ? "online" : "offline";
  new MutationObserver((records) => {
    if (online) return;
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType !== 1) continue;
        if (node.matches("[data-needs-server]")) guard(node);
        guardAll(node);
      }
    }
  }).observe(document.body, { childList: true, subtree: true });
  // A link that needs the server does nothing while offline.
  document.addEventListener("click", (event) => {
    const el = event.target.closest && event.target.closest("[data-needs-server][aria-disabled='true']");
    if (el) event.preventDefault();
  }, true);
  guardAll();
}

window.addEventListener("online", () => set(true));
window.addEventListener("offline", () => set(false));
if (document.body) watchControls();
else document.addEventListener("DOMContentLoaded", watchControls, { once: true });
