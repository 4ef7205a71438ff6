// People and settings: members and roles, invite links (owners), and the
// trip's details (title, dates, destination, time zone, currency).

import { get, post, patch, del } from "../api.js";
import { h, clear, field, select, errorBox, withBusy, handleSubmit, SKIP_SUBMIT, confirmDialog, showError, toast, initials, fmtDate, copyField } from "./ui.js";
import { patch as patchRegion, reconcile, sig } from "./keyed.js";
import { CURRENCIES, ZONE_HELP, knownZone } from "./trips.js";
import { exportButtons } from "./exports.js";

const ROLE_HELP = {
  owner: "Owner: everything, including invites and roles",
  editor: "Editor: changes the plan and expenses",
  viewer: "Viewer: sees the plan, comments and votes",
};

// A trip has one owner but may have many editors and viewers.
const ROLE_NOUN = { owner: "the owner", editor: "an editor", viewer: "a viewer" };

// Built once: the head is patched, members reconciled by id, the invite box
// kept (an invite link just created stays on screen) and the trip details
// form kept, its fields following the trip until someone edits them.
export function createMembersView(root, store) {
  const me = store.app.session.me;
  const head = h("header", { class: "section-head" });
  const list = h("ul", { class: "member-list card", "aria-label": "Members" });
  const invites = inviteBox(store);
  const settings = settingsBox(store);
  // The calendar and GPX are on the rail too; phones have no rail head, so they are here as well.
  const take = h("section", { class: "card take-along" }, h("h3", null, "Take the plan with you"),
    h("p", { class: "muted" }, "Your calendar, or a map app on your phone."), exportButtons(store));
  root.append(h("div", { class: "section-page" }, head, h("h3", null, "Members"), list, invites, take, settings.el));
  return {
    render() {
      const trip = store.trip;
      patchRegion(head, sig(trip.role), () => h("div", null, h("h2", null, "People and settings"),
        h("p", { class: "muted" }, `You are ${ROLE_NOUN[trip.role] || trip.role} of this trip.`)));
      reconcile(list, trip.members, {
        key: (m) => m.userId,
        signature: (m) => sig(m, store.isOwner),
        create: (m) => h("li", { class: "member", "data-user-id": m.userId },
          h("span", { class: "avatar", "aria-hidden": "true" }, initials(m.displayName || m.username)),
          h("span", { class: "member-name" }, h("strong", null, store.memberName(m.userId)), h("span", { class: "muted" }, `@${m.username}`)),
          store.isOwner && m.userId !== me.id ? memberControls(store, m) : h("span", { class: `pill role-${m.role}` }, m.role)),
      });
      invites.hidden = !store.isOwner;
      settings.sync();
    },
  };
}

function memberControls(store, m) {
  const role = select("role", [["editor", "Editor"], ["viewer", "Viewer"], ["owner", "Owner"]], m.role);
  role.setAttribute("aria-label", `Role of ${store.memberName(m.userId)}`);
  role.dataset.needsServer = "";
  role.addEventListener("change", async () => {
    try {
      await patch(`${store.base}/members/${encodeURIComponent(m.userId)}`, { role: role.value });
      toast(`${store.memberName(m.userId)} is now ${role.value === "editor" ? "an editor" : `a ${role.value}`}`, "success");
      await store.refresh();
    } catch (err) {
      role.value = m.role;
      showError(err);
    }
  });
  const remove = h("button", { type: "button", class: "btn btn-sm btn-ghost danger-text", "data-needs-server": true }, "Remove");
  remove.addEventListener("click", async () => {
    if (!(await confirmDialog(`Remove ${store.memberName(m.userId)}?`, "They lose access to this trip, and the invite links made until now no longer let them back in. Their past expenses stay.", "Remove"))) return;
    try {
      await del(`${store.base}/members/${encodeURIComponent(m.userId)}`, {});
      await store.refresh();
    } catch (err) {
      showError(err);
    }
  });
  return h("span", { class: "row" }, role, remove);
}

function inviteBox(store) {
  const role = select("inviteRole", [["editor", ROLE_HELP.editor], ["viewer", ROLE_HELP.viewer]], "editor");
  const out = h("div", { class: "invite-out", "aria-live": "polite" });
  const create = h("button", { type: "button", class: "btn btn-primary", "data-needs-server": true }, "Create invite link");
  create.addEventListener("click", () => withBusy(create, async () => {
    clear(out);
    try {
      const invite = await post(`${store.base}/invites`, { role: role.value });
      const url = inviteUrl(invite);
      const { row, input } = copyField(url, { label: "Invite link", copied: "Invite link copied",
        attrs: { class: "invite-url", "data-testid": "invite-url" } });
      out.append(row,
        h("p", { class: "hint" }, `Anyone with this link can join as ${invite.role}${invite.expiresAt ? ` until ${fmtDate(invite.expiresAt.slice(0, 10))}` : ""}.`));
      input.focus();
      input.select();
      loadOpen();
    } catch (err) {
      out.append(errorBox(err));
    }
  }, "Creating…"));
  const open = h("ul", { class: "invite-list", "aria-label": "Open invite links" });
  const loadOpen = async () => {
    try {
      const { invites } = await get(`${store.base}/invites`);
      clear(open);
      for (const inv of invites || []) {
        const kind = inv.role === "editor" ? "Editor link" : "Viewer link";
        const revoke = h("button", { type: "button", class: "btn btn-sm btn-ghost danger-text", "data-needs-server": true, "aria-label": `Revoke the ${kind.toLowerCase()} made ${fmtDate(inv.createdAt.slice(0, 10))}` }, "Revoke");
        revoke.addEventListener("click", () => withBusy(revoke, async () => {
          try {
            await del(`${store.base}/invites/${encodeURIComponent(inv.id)}`, {});
            toast("The link no longer works", "success");
            await loadOpen();
          } catch (err) {
            showError(err);
          }
        }));
        const names = inv.joined.map((j) => j.displayName);
        const used = names.length ? `Joined through it: ${names.join(", ")}` : "Nobody has used it yet.";
        open.append(h("li", { class: "invite-link" },
          h("span", null, h("strong", null, kind), ` · made ${fmtDate(inv.createdAt.slice(0, 10))} · expires ${fmtDate(inv.expiresAt.slice(0, 10))}`,
            h("br"), h("span", { class: "muted" }, used)),
          revoke));
      }
      if (invites && invites.length) open.prepend(h("li", { class: "muted invite-list-head" }, "Open links (each link is shown only once, when it is made; revoke one to stop it working):"));
    } catch {
      // listing is a convenience; creating links still works
    }
  };
  if (store.isOwner) loadOpen();
  return h("section", { class: "card invite-box" }, h("h3", null, "Invite people"),
    h("p", { class: "muted" }, "Share a link; whoever opens it joins with the role you choose."),
    field("Role for the link", role), create, out, open);
}

// The server's url, made absolute and pointing at the page's hash route.
export function inviteUrl(invite) {
  const fromServer = invite.url || "";
  const token = invite.token;
  if (fromServer.includes("#/invite/")) return new URL(fromServer, location.origin).toString();
  return `${location.origin}/#/invite/${encodeURIComponent(token)}`;
}

// The trip details form. What someone types is a draft in the store; until
// there is one, the fields follow the trip as other members change it.
function settingsBox(store) {
  const title = h("input", { name: "title", maxlength: 120 });
  const start = h("input", { name: "startDate", type: "date" });
  const destName = h("input", { name: "destName", maxlength: 120 });
  const coords = h("input", { name: "coords", placeholder: "38.7223, -9.1393" });
  const tz = h("input", { name: "timezone", maxlength: 64 });
  const currency = h("select", { name: "currency" });
  const fields = { title, start, destName, coords, tz, currency };
  const errorSlot = h("div"); // its error box is an alert: no live region around it (read twice)
  const save = h("button", { type: "submit", class: "btn btn-primary", "data-needs-server": true }, "Save trip details");
  const actions = h("div", { class: "actions" }, save);
  const danger = deleteTripButton(store);
  const form = h("form", { class: "card stack settings-box" },
    h("h3", null, "Trip details"),
    field("Trip name", title),
    h("div", { class: "grid-2" }, field("First day", start, "Moving it moves every day with it."), field("Currency", currency)),
    h("div", { class: "grid-2" }, field("Destination", destName), field("Coordinates", coords)),
    field("Time zone", tz, "Stop times are local to this zone."),
    errorSlot, actions, danger);
  // The draft holds only the fields this person touched: the others keep
  // following the trip, so saving never sends back another member's change.
  const keyOf = new Map(Object.entries(fields).map(([k, el]) => [el, k]));
  form.addEventListener("input", (event) => {
    const key = keyOf.get(event.target);
    if (key) store.setDraft("tripDetails", null, { ...(store.draft("tripDetails") || {}), [key]: event.target.value });
  });

  function fromTrip(trip) {
    return {
      title: trip.title, start: trip.startDate, destName: trip.destination ? trip.destination.name : "",
      coords: trip.destination ? `${trip.destination.lat}, ${trip.destination.lng}` : "", tz: trip.timezone, currency: trip.currency,
    };
  }

  function sync() {
    const trip = store.trip;
    const values = { ...fromTrip(trip), ...(store.draft("tripDetails") || {}) };
    const choices = [...new Set([trip.currency, values.currency, ...CURRENCIES])];
    if (currency.options.length !== choices.length) {
      clear(currency).append(...choices.map((c) => h("option", { value: c }, c)));
    }
    for (const [k, el] of Object.entries(fields)) if (el.value !== values[k]) el.value = values[k];
    for (const el of Object.values(fields)) el.disabled = !store.canEdit;
    actions.hidden = !store.canEdit;
    danger.hidden = !store.isOwner;
  }

  const readArgs = () => {
    const trip = store.trip;
    const touched = store.draft("tripDetails") || {};
    const args = {};
    if ("title" in touched && !title.value.trim()) throw new Error("Give the trip a name.");
    if ("title" in touched && title.value.trim() !== trip.title) args.title = title.value.trim();
    if ("start" in touched && start.value && start.value !== trip.startDate) args.startDate = start.value;
    if ("tz" in touched && !knownZone(tz.value.trim())) throw new Error(ZONE_HELP);
    if ("tz" in touched && tz.value.trim() !== trip.timezone) args.timezone = tz.value.trim();
    if ("currency" in touched && currency.value !== trip.currency) args.currency = currency.value;
    const m = coords.value.match(/^\s*(-?\d+(?:\.\d+)?)\s*[, ]\s*(-?\d+(?:\.\d+)?)\s*$/);
    const destinationEdited = "destName" in touched || "coords" in touched;
    if (destinationEdited && destName.value.trim() && m) {
      const d = { name: destName.value.trim(), lat: Number(m[1]), lng: Number(m[2]) };
      const old = trip.destination;
      if (!old || old.name !== d.name || old.lat !== d.lat || old.lng !== d.lng) args.destination = d;
    } else if (destinationEdited && destName.value.trim()
      && (!trip.destination || destName.value.trim() !== trip.destination.name)) {
      throw new Error("Give the destination's coordinates as “latitude, longitude”.");
    }
    if (!Object.keys(args).length) {
      store.setDraft("tripDetails", null, null);
      toast("Nothing changed", "info");
      return SKIP_SUBMIT;
    }
    return args;
  };
  handleSubmit(form, {
    button: save,
    errorSlot,
    busyLabel: "Saving…",
    check: readArgs,
    onSubmit: (args) => store.op("update_trip", args),
    after: () => {
      store.setDraft("tripDetails", null, null);
      sync();
    },
  });
  return { el: form, sync };
}

function deleteTripButton(store) {
  const b = h("button", { type: "button", class: "btn btn-ghost danger-text", "data-needs-server": true }, "Delete this trip");
  b.addEventListener("click", async () => {
    if (!(await confirmDialog("Delete the whole trip?", "Every day, stop, expense and message is deleted for all members. This cannot be undone.", "Delete trip"))) return;
    try {
      await del(store.base, {});
      store.app.navigate("#/");
    } catch (err) {
      showError(err);
    }
  });
  return h("div", { class: "danger-zone" }, b);
}
