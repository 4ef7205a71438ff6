// The one AI panel ("AI help"; a sheet over the page on phones) with three
// sections: Chat (the group's conversation, where @agent asks the AI), This
// day (an AI review, ideas for food and sights, Optimize) and Preferences.
// Sections mount on first use and stay mounted, so a running chat or a
// draft survives switching. Whether the panel is open on a wide screen is
// kept per account on the server (GET/PUT /api/users/preferences/agent-panel),
// so it follows the member to another computer; this browser's last choice
// only paints the first frame. On phones the panel is a sheet and starts
// closed.

import { get, api as request } from "../api.js";
import { h, clear } from "../planner/ui.js";
import { mountAgent } from "./agent.js";
import { mountDayHelp } from "./dayhelp.js";
import { mountTripPreferences } from "./preferences.js";
import { icon } from "../planner/icons.js";

const SECTIONS = [
  ["chat", "Chat", mountAgent],
  ["day", "This day", mountDayHelp],
  ["preferences", "Preferences", mountTripPreferences],
];
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
  // Without AI the panel starts closed: most of it would say "off".
  const fallback = config.aiEnabled ? "chat" : "day";
  let open = isPhone() ? false : stored === null ? window.innerWidth >= 1100 && config.aiEnabled : stored === "1";
  let touched = false; // the member opened or closed it before the server's answer came

  // The account's choice, when it has made one, wins over this browser's.
  get(OPEN_URL).then((saved) => {
    if (touched || isPhone() || !saved || saved.updatedAt === null || saved.open === open) return;
    localStorage.setItem(OPEN_KEY, saved.open ? "1" : "0");
    if (saved.open) api.open(null, { save: false });
    else api.close({ save: false });
  }).catch(() => {}); // keep this browser's choice

  function remember(value) {
    touched = true;
    localStorage.setItem(OPEN_KEY, value ? "1" : "0");
    request(OPEN_URL, { method: "PUT", body: { open: value } }).catch(() => {}); // best effort: the panel still works
  }
  let active = localStorage.getItem(TAB_KEY) || fallback;
  if (!SECTIONS.some(([id]) => id === active)) active = fallback;
  const mounted = new Map(); // section id -> {el, view}

  const tablist = h("div", { class: "tabs", role: "tablist", "aria-label": "AI help sections" });
  const body = h("div", { class: "side-body" });
  const close = h("button", { type: "button", class: "icon-btn side-close", "aria-label": "Close AI help", onclick: () => api.close() }, icon("x"));
  side.append(
    h("div", { class: "side-head" }, h("h2", { class: "side-title" }, icon("sparkle", { size: 16 }), " AI help"), close),
    tablist,
    body,
  );

  const buttons = SECTIONS.map(([id, label]) => {
    const b = h("button", {
      type: "button", role: "tab", id: `tab-${id}`, "aria-controls": `tabpanel-${id}`, class: "tab", "data-tab": id,
      onclick: () => api.select(id),
    }, label);
    b.addEventListener("keydown", (e) => {
      const i = SECTIONS.findIndex(([t]) => t === id);
      let next = null;
      if (e.key === "ArrowRight") next = SECTIONS[(i + 1) % SECTIONS.length][0];
      if (e.key === "ArrowLeft") next = SECTIONS[(i - 1 + SECTIONS.length) % SECTIONS.length][0];
      if (e.key === "Home") next = SECTIONS[0][0];
      if (e.key === "End") next = SECTIONS[SECTIONS.length - 1][0];
      if (next) {
        e.preventDefault();
        api.select(next);
        document.getElementById(`tab-${next}`).focus();
      }
    });
    tablist.append(b);
    return b;
  });

  function show() {
    side.classList.toggle("open", open);
    side.setAttribute("aria-hidden", String(!open));
    side.inert = !open;
    buttons.forEach((b) => {
      const selected = b.dataset.tab === active;
      b.setAttribute("aria-selected", String(selected));
      b.tabIndex = selected ? 0 : -1;
    });
    if (!open) return;
    if (!mounted.has(active)) {
      const [, , mount] = SECTIONS.find(([id]) => id === active);
      const el = h("div", { class: "tabpanel", role: "tabpanel", id: `tabpanel-${active}`, "aria-labelledby": `tab-${active}` });
      body.append(el);
      mounted.set(active, { el, view: mount(el, store, api) || {} });
    }
    for (const [id, m] of mounted) m.el.hidden = id !== active;
    const view = mounted.get(active).view;
    if (view.shown) view.shown();
  }

  const api = {
    isOpen: () => open,
    active: () => active,
    onChange(fn) {
      listeners.add(fn);
    },
    open(section, { save = true } = {}) {
      if (section) active = section;
      const changed = !open;
      open = true;
      localStorage.setItem(TAB_KEY, active);
      if (save && changed && !isPhone()) remember(true);
      show();
      listeners.forEach((fn) => fn(open));
    },
    close({ save = true } = {}) {
      const changed = open;
      open = false;
      if (save && changed && !isPhone()) remember(false);
      show();
      listeners.forEach((fn) => fn(open));
    },
    // On phones the panel is a sheet over the page: showing something on the page closes it.
    closeIfSheet() {
      if (open && isPhone()) api.close();
    },
    toggle() {
      if (open) api.close();
      else api.open();
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
