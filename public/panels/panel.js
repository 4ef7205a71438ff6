// The right panel (a bottom sheet on phones) with four tabs: Copilot,
// Assistant, Agent and Preferences. Tabs mount on first use and stay mounted
// so a running chat or draft survives switching tabs.

import { h, clear } from "../planner/ui.js";
import { mountCopilot } from "./copilot.js";
import { mountAssistant } from "./assistant.js";
import { mountAgent } from "./agent.js";
import { mountTripPreferences } from "./preferences.js";
import { icon } from "../planner/icons.js";

const TABS = [
  ["agent", "Agent", mountAgent],
  ["assistant", "Assistant", mountAssistant],
  ["copilot", "Copilot", mountCopilot],
  ["preferences", "Preferences", mountTripPreferences],
];
const OPEN_KEY = "wayline.panelOpen";
const TAB_KEY = "wayline.panelTab";

export function isPhone() {
  return window.matchMedia("(max-width: 760px)").matches;
}

export function mountPanel(side, store) {
  const listeners = new Set();
  const stored = localStorage.getItem(OPEN_KEY);
  const config = store.app.session.config;
  // Without AI the panel starts closed: its tools would mostly say "off".
  const fallback = config.aiEnabled ? "agent" : config.placesEnabled ? "assistant" : "preferences";
  let open = isPhone() ? false : stored === null ? window.innerWidth >= 1100 && config.aiEnabled : stored === "1";
  let active = localStorage.getItem(TAB_KEY) || fallback;
  if (!TABS.some(([id]) => id === active)) active = fallback;
  const mounted = new Map(); // tab id -> {el, view}

  const tablist = h("div", { class: "tabs", role: "tablist", "aria-label": "Assistant tools" });
  const body = h("div", { class: "side-body" });
  const close = h("button", { type: "button", class: "icon-btn side-close", "aria-label": "Close the panel", onclick: () => api.close() }, icon("x"));
  side.append(h("div", { class: "sheet-handle", "aria-hidden": "true" }), h("div", { class: "side-head" }, tablist, close), body);

  const buttons = TABS.map(([id, label]) => {
    const b = h("button", {
      type: "button", role: "tab", id: `tab-${id}`, "aria-controls": `tabpanel-${id}`, class: "tab", "data-tab": id,
      onclick: () => api.select(id),
    }, label);
    b.addEventListener("keydown", (e) => {
      const i = TABS.findIndex(([t]) => t === id);
      let next = null;
      if (e.key === "ArrowRight") next = TABS[(i + 1) % TABS.length][0];
      if (e.key === "ArrowLeft") next = TABS[(i - 1 + TABS.length) % TABS.length][0];
      if (e.key === "Home") next = TABS[0][0];
      if (e.key === "End") next = TABS[TABS.length - 1][0];
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
      const [, , mount] = TABS.find(([id]) => id === active);
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
    open(tab) {
      if (tab) active = tab;
      open = true;
      localStorage.setItem(TAB_KEY, active);
      if (!isPhone()) localStorage.setItem(OPEN_KEY, "1");
      show();
      listeners.forEach((fn) => fn(open));
    },
    close() {
      open = false;
      if (!isPhone()) localStorage.setItem(OPEN_KEY, "0");
      show();
      listeners.forEach((fn) => fn(open));
    },
    toggle() {
      if (open) api.close();
      else api.open();
    },
    select(tab) {
      api.open(tab);
    },
    view(tab) {
      return mounted.has(tab) ? mounted.get(tab).view : null;
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
