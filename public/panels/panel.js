// The side panel (a sheet over the page on phones) shows one of two things:
//   Chat     the group's conversation (where @agent asks the AI, when the
//            server has one; without AI it is the members' chat alone)
//   AI help  This day (an AI review, ideas for food and sights, Optimize)
//            and Preferences, as tabs
// The top bar (wide screens) and the bottom tabs (phones) each have a
// "Chat" and an "AI help" button. Sections mount on first use and stay
// mounted, so a running chat or a draft survives switching. Whether the
// panel is open on a wide screen is kept per account on the server
// (GET/PUT /api/users/preferences/agent-panel), so it follows the member to
// another computer; this browser's last choice only paints the first frame.
// On phones the panel is a sheet and starts closed.

import { get, api as request } from "../api.js";
import { h, clear } from "../planner/ui.js";
import { mountAgent } from "./agent.js";
import { mountDayHelp } from "./dayhelp.js";
import { mountTripPreferences } from "./preferences.js";
import { icon } from "../planner/icons.js";

export const MODES = {
  chat: { title: "Chat", icon: "comment", sections: [["chat", "Chat", mountAgent]] },
  help: { title: "AI help", icon: "sparkle", sections: [["day", "This day", mountDayHelp], ["preferences", "Preferences", mountTripPreferences]] },
};
const SECTIONS = Object.values(MODES).flatMap((m) => m.sections);
const modeOf = (section) => Object.keys(MODES).find((m) => MODES[m].sections.some(([id]) => id === section));
const OPEN_KEY = "wayline.panelOpen";
const TAB_KEY = "wayline.panelTab";
const OPEN_URL = "/api/users/preferences/agent-panel";

export function isPhone() {
  return window.matchMedia("(max-width: 760px)").matches;
}

export function mountPanel(side, store) {
  const listeners = new Set();
  const stored = localStorage.getItem(OPEN_KEY);
  const config = store.app.session.config;
  // Without AI the panel starts closed (AI help would say "off"; the Chat
  // button and its unread count are there); the chat is the first tab either way.
  const fallback = "chat";
  let open = isPhone() ? false : stored === null ? window.innerWidth >= 1100 && config.aiEnabled : stored === "1";
  let touched = false; // the member opened or closed it before the server's answer came

  // The account's choice, when it has made one, wins over this browser's.
  // data-account-choice="read" says it has been taken into account (tests).
  get(OPEN_URL).then((saved) => {
    if (touched || isPhone() || !saved || saved.updatedAt === null || saved.open === open) return;
    localStorage.setItem(OPEN_KEY, saved.open ? "1" : "0");
    if (saved.open) api.open(null, { save: false });
    else api.close({ save: false });
  }).catch(() => {}) // keep this browser's choice
    .finally(() => { side.dataset.accountChoice = "read"; });

  function remember(value) {
    touched = true;
    localStorage.setItem(OPEN_KEY, value ? "1" : "0");
    request(OPEN_URL, { method: "PUT", body: { open: value } }).catch(() => {}); // best effort: the panel still works
  }
  let active = localStorage.getItem(TAB_KEY) || fallback;
  if (!SECTIONS.some(([id]) => id === active)) active = fallback;
  let lastHelp = modeOf(active) === "help" ? active : "day"; // the AI help tab to come back to
  const mounted = new Map(); // section id -> {el, view}

  const title = h("h2", { class: "side-title" });
  const tablist = h("div", { class: "tabs", role: "tablist", "aria-label": "AI help sections" });
  const body = h("div", { class: "side-body" });
  const close = h("button", { type: "button", class: "icon-btn side-close", onclick: () => api.close() }, icon("x"));
  // Shown by the stylesheet while offline (html[data-connection="offline"]).
  const offline = h("p", { class: "side-offline" }, icon("offline", { size: 16 }),
    "Chat and AI help need a connection. What is here stays readable; sending waits until you are back online.");
  side.append(h("div", { class: "side-head" }, title, close), offline, tablist, body);

  const helpSections = MODES.help.sections;
  const buttons = helpSections.map(([id, label]) => {
    const b = h("button", {
      type: "button", role: "tab", id: `tab-${id}`, "aria-controls": `tabpanel-${id}`, class: "tab", "data-tab": id,
      onclick: () => api.select(id),
    }, label);
    b.addEventListener("keydown", (e) => {
      const i = helpSections.findIndex(([t]) => t === id);
      const n = helpSections.length;
      const next = { ArrowRight: (i + 1) % n, ArrowLeft: (i - 1 + n) % n, Home: 0, End: n - 1 }[e.key];
      if (next === undefined) return;
      e.preventDefault();
      api.select(helpSections[next][0]);
      document.getElementById(`tab-${helpSections[next][0]}`).focus();
    });
    tablist.append(b);
    return b;
  });

  function show() {
    const mode = modeOf(active);
    side.classList.toggle("open", open);
    side.dataset.mode = mode;
    side.setAttribute("aria-label", MODES[mode].title);
    side.inert = !open;
    clear(title).append(icon(MODES[mode].icon, { size: 16 }), ` ${MODES[mode].title}`);
    close.setAttribute("aria-label", `Close ${MODES[mode].title === "Chat" ? "the chat" : "AI help"}`);
    tablist.hidden = mode !== "help";
    buttons.forEach((b) => {
      const selected = b.dataset.tab === active;
      b.setAttribute("aria-selected", String(selected));
      b.tabIndex = selected ? 0 : -1;
    });
    if (!open) return;
    if (!mounted.has(active)) {
      const [, label, mount] = SECTIONS.find(([id]) => id === active);
      const el = mode === "help"
        ? h("div", { class: "tabpanel", role: "tabpanel", id: `tabpanel-${active}`, "aria-labelledby": `tab-${active}` })
        : h("div", { class: "tabpanel", role: "region", id: `tabpanel-${active}`, "aria-label": label });
      body.append(el);
      mounted.set(active, { el, view: mount(el, store, api) || {} });
    }
    for (const [id, m] of mounted) m.el.hidden = id !== active;
    const view = mounted.get(active).view;
    if (view.shown) view.shown();
  }

  // The keyboard goes back to the button that opens what just closed (the
  // top bar's toggle, or the phone's tab), whichever shows.
  function returnFocus(mode) {
    const controls = [...document.querySelectorAll('[aria-controls="side-panel"]')].filter((b) => b.getClientRects().length);
    const target = controls.find((b) => b.dataset.mode === mode || b.dataset.fkey === mode) || controls[0];
    if (target) target.focus();
  }

  // Escape closes the panel (on phones a sheet over the page) from anywhere in it.
  side.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && open && !e.defaultPrevented) {
      e.preventDefault();
      api.close();
    }
  });

  const api = {
    isOpen: () => open,
    active: () => active,
    mode: () => modeOf(active),
    // Open and showing `mode` ("chat" | "help").
    showing: (mode) => open && modeOf(active) === mode,
    onChange(fn) {
      listeners.add(fn);
    },
    open(section, { save = true } = {}) {
      if (section === "help") section = lastHelp;
      if (section) active = section;
      if (modeOf(active) === "help") lastHelp = active;
      const changed = !open;
      open = true;
      localStorage.setItem(TAB_KEY, active);
      if (save && changed && !isPhone()) remember(true);
      show();
      listeners.forEach((fn) => fn(open));
    },
    close({ save = true } = {}) {
      const changed = open;
      const mode = modeOf(active);
      const inside = side.contains(document.activeElement); // closing makes the panel inert: focus would fall to the body
      open = false;
      if (save && changed && !isPhone()) remember(false);
      show();
      listeners.forEach((fn) => fn(open));
      if (inside) returnFocus(mode);
    },
    // On phones the panel is a sheet over the page: showing something on the page closes it.
    closeIfSheet() {
      if (open && isPhone()) api.close();
    },
    // The Chat and AI help buttons: open that one, or close it when it is what shows.
    toggle(mode) {
      if (api.showing(mode)) api.close();
      else api.open(mode === "chat" ? "chat" : "help");
    },
    select(section) {
      api.open(section);
    },
    view(section) {
      return mounted.has(section) ? mounted.get(section).view : null;
    },
    destroy() {
      for (const m of mounted.values()) if (m.view.destroy) m.view.destroy();
      mounted.clear();
      clear(side);
    },
  };
  show();
  return api;
}
