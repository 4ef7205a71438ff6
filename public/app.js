// The router: hash routes, the top bar, and who is signed in.
//   #/                 your trips        #/signin, #/signup   auth
//   #/trips/{id}?day=  the planner       #/invite/{token}     accept an invite
//   #/preferences      your private defaults
// A path-style invite link (/invite/{token}) is turned into the hash route.
// A link to a page that needs an account (a trip and its day, preferences)
// is kept through sign-in and sign-up and opened after them; so is an
// invite (its page first, then the trip).
// Offline (public/offline/): the page itself comes from the service worker's
// cache, and who is signed in, the config and the data come from what this
// device kept (kept.js), so a cold start with no connection opens the trips
// list and every kept trip. Signing out clears what this device kept.

import { post, onUnauthorized } from "./api.js";
import { useCurrencyExponents } from "./money.js";
import { keptGet, claimFor, forget } from "./offline/kept.js";
import { allWrites, flush, forgetWrites, ready as outboxReady } from "./offline/outbox.js";
import { isOnline, onConnection } from "./offline/connection.js";
import { h, append, clear, showError, errorBox, setMeals } from "./planner/ui.js";
import { mountAuth, NOTICE } from "./planner/auth.js";
import { accountMenu } from "./planner/account.js";
import { confirmDialog } from "./planner/ui.js";
import { mountTrips, acceptInvite } from "./planner/trips.js";

const PENDING_INVITE = "wayline.pendingInvite";
const RETURN_TO = "wayline.returnTo";
const KEPT_ROUTE = /^#\/(trips\/[^/?#]+(\?[^#]*)?|preferences)$/;
// A sign-out made offline: sent to the server when the page next reaches it.
const SIGN_OUT_PENDING = "wayline.signOutPending";

// The page a signed-out visitor asked for, to open once they are signed in.
function keepReturn(hash) {
  if (KEPT_ROUTE.test(hash)) sessionStorage.setItem(RETURN_TO, hash);
}

function takeReturn() {
  const hash = sessionStorage.getItem(RETURN_TO);
  sessionStorage.removeItem(RETURN_TO);
  return hash && KEPT_ROUTE.test(hash) ? hash : null;
}

const session = {
  config: { aiEnabled: false, placesProvider: null, googleMapsBrowserKey: null, limits: {} },
  me: null,
  isAdmin: false,
  // This page is ending the account's sessions itself (Sign out everywhere,
  // Delete account): the live "gone" its own request causes is not news, and
  // the page says what happened once the request is answered.
  endingHere: false,
};

let current = null; // {key, update(params)?, destroy()?}
let booted = false;

// Resolves once the new screen is up when it routes at once (replace, or the
// same address); otherwise the hashchange event routes.
export function navigate(hash, { replace = false } = {}) {
  const target = hash.startsWith("#") ? hash : `#${hash}`;
  if (replace) {
    history.replaceState(null, "", target);
    return route();
  }
  if (location.hash === target) return route();
  location.hash = target;
  return Promise.resolve();
}

function parseHash() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, query = ""] = raw.split("?");
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(query) };
}

// Who is signed in: the probe answers {user: null} when nobody is. This
// device's kept data belongs to that user (another account's is cleared).
async function loadMe() {
  const me = await keptGet("/api/auth/me");
  session.me = me.user || null;
  session.isAdmin = Boolean(me.user && me.isAdmin);
  if (session.me && (await claimFor(session.me.id))) forgetWrites();
  await outboxReady(); // the writes kept from an earlier visit are known before any page shows
}

// Signing out clears what this device kept, at once, even offline (the
// server hears of it when it can be reached). Unsent changes are named first.
async function signOut() {
  await outboxReady();
  const unsent = allWrites().filter((w) => w.state === "waiting").length;
  if (unsent && !(await confirmDialog("Sign out and lose unsent changes?",
    `${unsent === 1 ? "1 change made" : `${unsent} changes made`} without a connection ${unsent === 1 ? "has" : "have"} not been sent yet. `
    + "Signing out removes everything Wayline kept on this device, those changes too.", "Sign out"))) return;
  await forgetDevice();
  try {
    await post("/api/auth/signout", {});
  } catch (err) {
    if (err.status === 0) localStorage.setItem(SIGN_OUT_PENDING, "1");
    else showError(err);
  }
  signedOut();
}

// Everything this device kept for the account (trips, thumbnails, writes
// not sent). Every way of ending the account's sessions from here clears it:
// Sign out, Sign out everywhere, Delete account (planner/account.js).
async function forgetDevice() {
  forgetWrites();
  await forget();
}

// A sign-out made offline reaches the server first thing when it can: at
// the next start, or when the connection comes back to the page left open.
async function finishSignOut() {
  if (!localStorage.getItem(SIGN_OUT_PENDING)) return;
  forgetWrites();
  await forget();
  await post("/api/auth/signout", {});
  localStorage.removeItem(SIGN_OUT_PENDING);
}

// Nobody is signed in any more (signed out, everywhere, or the account is
// gone): to sign-in, with `notice` shown there. The notice waits in
// sessionStorage, so it is there whichever way the page reaches sign-in (a
// live "gone" event or a 401 may get there first).
function signedOut(notice) {
  session.me = null;
  session.endingHere = false;
  session.isAdmin = false;
  if (notice) sessionStorage.setItem(NOTICE, notice);
  renderNav();
  if (current && current.key.startsWith("auth:")) {
    if (current.destroy) current.destroy();
    current = null; // mount sign-in again, to show the notice
  }
  navigate("#/signin", { replace: true });
}

// The session ended by itself (it expired, or the server no longer knows it):
// to sign-in, saying so, and back to this page once signed in again.
const SESSION_ENDED = "Your session has ended. Sign in again to carry on where you were.";

function sessionEnded() {
  keepReturn(location.hash);
  signedOut(SESSION_ENDED);
}

function renderNav() {
  const nav = document.getElementById("topbar-nav");
  clear(nav);
  if (!session.me) return;
  append(nav, [
    h("a", { href: "#/", class: "nav-link" }, "Trips"),
    h("a", { href: "#/preferences", class: "nav-link" }, "Preferences"),
    session.isAdmin ? h("a", { href: "/admin.html", class: "nav-link", "data-testid": "admin-link" }, "Admin") : null,
    accountMenu(app),
  ]);
}

const app = {
  session,
  navigate,
  signOut,
  signedOut,
  sessionEnded,
  forgetDevice,
  topbarSlot: () => document.getElementById("topbar-slot"),
  // After joining a trip by invite: the link to that trip's day the visitor came with, if any.
  returnToTrip(tripId) {
    const hash = takeReturn();
    return hash && hash.split("?")[0] === `#/trips/${encodeURIComponent(tripId)}` ? hash : null;
  },
  async afterSignIn() {
    localStorage.removeItem(SIGN_OUT_PENDING); // signed in again: that sign-out is done
    await loadMe();
    renderNav();
    flush(); // writes kept while signed out of this session (an expired one) go now
    const pending = sessionStorage.getItem(PENDING_INVITE);
    if (pending) {
      sessionStorage.removeItem(PENDING_INVITE);
      navigate(`#/invite/${encodeURIComponent(pending)}`, { replace: true });
    } else {
      navigate(takeReturn() || "#/", { replace: true });
    }
  },
};

function swap(key, mount) {
  if (current && current.key === key) return current;
  if (current && current.destroy) current.destroy();
  current = null;
  // A dialog belongs to the screen that opened it: Back or a link leaves both.
  for (const open of document.querySelectorAll("dialog[open]")) open.close();
  const main = document.getElementById("main");
  clear(main);
  clear(app.topbarSlot());
  const toasts = document.getElementById("toasts");
  if (toasts) clear(toasts); // news about the last screen
  document.body.dataset.screen = key.split(":")[0];
  current = { key, ...(mount(main) || {}) };
  // Screen readers and keyboards start at the new screen, not the old link.
  if (booted) {
    const target = main.querySelector("[autofocus]") || main;
    target.focus({ preventScroll: true });
  }
  return current;
}

async function route() {
  if (location.pathname.startsWith("/invite/")) {
    const token = location.pathname.slice("/invite/".length);
    history.replaceState(null, "", `/#/invite/${token}`);
  }
  const { parts, params } = parseHash();
  const [first, second] = parts;
  try {
    if (first === "signin" || first === "signup") {
      if (session.me) return navigate("#/", { replace: true });
      swap(`auth:${first}`, (main) => mountAuth(main, app, first));
      return;
    }
    if (first === "invite" && second) {
      if (!session.me) {
        sessionStorage.setItem(PENDING_INVITE, second);
        swap("auth:invite", (main) => mountAuth(main, app, "signin", "Sign in or create an account to join the trip you were invited to."));
        return;
      }
      swap(`invite:${second}`, (main) => acceptInvite(main, app, second));
      return;
    }
    if (!session.me) {
      keepReturn(location.hash);
      return navigate("#/signin", { replace: true });
    }
    if (first === "trips" && second) {
      const { mountPlanner } = await import("./planner/page.js");
      const view = swap(`trip:${second}`, (main) => mountPlanner(main, app, second, params));
      if (view.update) view.update(params);
      return;
    }
    if (first === "preferences") {
      const { mountUserPreferencesPage } = await import("./panels/preferences.js");
      swap("preferences", (main) => mountUserPreferencesPage(main, app));
      return;
    }
    swap("trips", (main) => mountTrips(main, app));
  } catch (err) {
    const main = document.getElementById("main");
    clear(main);
    main.append(h("div", { class: "page narrow" }, errorBox(err)));
  }
}

async function boot() {
  onUnauthorized(() => {
    if (!location.hash.startsWith("#/signin") && !location.hash.startsWith("#/signup")) {
      sessionEnded(); // signed out meanwhile (another device, an expired session): come back here
    } else {
      session.me = null;
      renderNav();
    }
  });
  registerServiceWorker();
  // The page may stay open (at sign-in) until the connection is back: the server hears of it then.
  onConnection((online) => { if (online) finishSignOut().catch(() => {}); });
  try {
    if (isOnline()) await finishSignOut().catch(() => {});
    // Signed out on this device while offline: nobody is signed in here (the server hears of it later).
    const signedOutHere = Boolean(localStorage.getItem(SIGN_OUT_PENDING));
    const [config, meals] = await Promise.all([keptGet("/api/config"), keptGet("/api/meals"),
      signedOutHere ? null : loadMe()]);
    session.config = config;
    setMeals(meals.meals);
    useCurrencyExponents(config.currencyExponents);
  } catch (err) {
    const main = document.getElementById("main");
    clear(main);
    const why = err.status === 0
      ? new Error("You are offline, and Wayline has nothing kept on this device yet. Open it once with a connection to have your trips here offline.")
      : err;
    main.append(h("div", { class: "page narrow" }, errorBox(why)));
    return;
  }
  renderNav();
  window.addEventListener("hashchange", route);
  await route();
  booted = true;
  if (session.me) flush(); // writes kept from an earlier visit
}

// The service worker (public/sw.js) keeps the page itself for offline starts.
function registerServiceWorker() {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register("/sw.js").catch(() => {
    // Not allowed here (a private window, a blocked worker): Wayline works, only not offline.
  });
}

boot();
