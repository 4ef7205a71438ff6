// The account menu in the top bar (who is signed in): connected assistants
// (assistants.js), change the password,
// sign out, sign out everywhere, delete the account. Password checks answer
// next to their field; the last two end at sign-in, the deletion with a short
// notice that survives the redirect (app.signedOut).

import { post, del } from "../api.js";
import { h, openDialog, confirmDialog, handleSubmit, fieldWithError, plainLimit, showError, toast, initials, SKIP_SUBMIT } from "./ui.js";
import { icon } from "./icons.js";
import { openAssistants } from "./assistants.js";

export function accountMenu(app) {
  const me = app.session.me;
  const name = me.displayName || me.username;
  // Named by its own words ("Account: Alice"): on phones the name is only read out.
  const button = h("button", {
    type: "button", class: "account-btn", "aria-expanded": "false", "aria-controls": "account-menu",
    title: `Signed in as ${me.username}`,
  },
  h("span", { class: "avatar", "aria-hidden": "true" }, initials(name)),
  h("span", { class: "visually-hidden" }, "Account: "),
  h("span", { class: "nav-user-name" }, name),
  icon("chevronDown", { size: 14 }));
  const item = (label, action, extra = "", needsServer = true) => h("button", {
    type: "button", class: `account-item${extra}`, "data-needs-server": needsServer, onclick: () => { close(); action(); },
  }, label);
  const menu = h("div", { id: "account-menu", class: "account-menu", hidden: true },
    h("p", { class: "account-who" }, "Signed in as ", h("strong", null, me.username)),
    item("Connected assistants", () => openAssistants()),
    item("Change password", () => openChangePassword()),
    item("Sign out", () => app.signOut(), "", false), // offline too: it clears this device at once
    item("Sign out everywhere", () => signOutEverywhere(app)),
    item("Delete account", () => openDeleteAccount(app), " danger-text"));
  const wrap = h("div", { class: "account" }, button, menu);

  function open() {
    menu.hidden = false;
    button.setAttribute("aria-expanded", "true");
    document.addEventListener("pointerdown", outside, true);
    menu.querySelector("button").focus();
  }
  function close() {
    menu.hidden = true;
    button.setAttribute("aria-expanded", "false");
    document.removeEventListener("pointerdown", outside, true);
  }
  function outside(event) {
    if (!wrap.contains(event.target)) close();
  }
  button.addEventListener("click", () => (menu.hidden ? open() : close()));
  wrap.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !menu.hidden) {
      close();
      button.focus();
    }
  });
  return wrap;
}

function passwordInput(name, autocomplete) {
  return h("input", { type: "password", name, autocomplete, required: true, maxlength: 256 });
}

// A form in a dialog whose server errors that name a field show under it.
function passwordForm({ close, fields, submit, busyLabel, check, onSubmit, after }) {
  const errorSlot = h("div"); // its error box is an alert: no live region around it (read twice)
  const form = h("form", { class: "stack dialog-body", novalidate: true },
    fields.map((f) => (f.el ? f.el : f)), errorSlot,
    h("div", { class: "actions" }, h("button", { type: "button", class: "btn", onclick: close }, "Cancel"), submit));
  const byName = new Map(fields.filter((f) => f.control).map((f) => [f.control.name, f]));
  return handleSubmit(form, {
    button: submit,
    errorSlot,
    busyLabel,
    check: () => {
      for (const f of byName.values()) f.reset();
      const empty = [...byName.values()].find((f) => !f.control.value);
      if (empty) {
        empty.show("Type a password here.");
        return SKIP_SUBMIT;
      }
      return check();
    },
    onSubmit: async (body) => {
      try {
        return await onSubmit(body);
      } catch (err) {
        throw plainLimit(err);
      }
    },
    after,
    place: (err) => {
      const target = err.details && byName.get(err.details.field);
      if (!target) return false;
      target.show(err.message);
      return true;
    },
  });
}

function openChangePassword() {
  openDialog("Change your password", (close) => {
    const current = fieldWithError("Current password", passwordInput("currentPassword", "current-password"));
    const next = fieldWithError("New password", passwordInput("newPassword", "new-password"),
      "At least 8 characters. You stay signed in here; your other devices are signed out, and connected assistants and calendar links stop working.");
    return passwordForm({
      close,
      fields: [current, next],
      submit: h("button", { type: "submit", class: "btn btn-primary" }, "Change password"),
      busyLabel: "Changing…",
      check: () => ({ currentPassword: current.control.value, newPassword: next.control.value }),
      onSubmit: (body) => post("/api/auth/password", body),
      after: () => {
        close();
        toast("Password changed. Your other devices were signed out.", "success", 6000);
      },
    });
  });
}

async function signOutEverywhere(app) {
  const sure = await confirmDialog("Sign out everywhere?",
    "You will be signed out on every device and browser, this one included. Connected assistants and calendar links stop working.", "Sign out everywhere");
  if (!sure) return;
  app.session.endingHere = true;
  try {
    await post("/api/auth/signout", { everywhere: true });
  } catch (err) {
    app.session.endingHere = false;
    showError(err);
    return;
  }
  await app.forgetDevice(); // this device too: an offline start must not show the account's trips
  app.signedOut("You were signed out on every device.");
}

function openDeleteAccount(app) {
  openDialog("Delete your account", (close) => {
    const password = fieldWithError("Your password, to confirm", passwordInput("password", "current-password"));
    return passwordForm({
      close,
      fields: [
        h("p", null, "This deletes your account for good. It cannot be undone."),
        h("ul", { class: "consequences" },
          h("li", null, "Trips that only you belong to are deleted, with everything in them."),
          h("li", null, "You leave every trip you share. Where you are the owner, ownership passes to another member."),
          h("li", null, "Your comments stay, shown as from a deleted member.")),
        password,
      ],
      submit: h("button", { type: "submit", class: "btn btn-danger" }, "Delete my account"),
      busyLabel: "Deleting…",
      check: () => ({ password: password.control.value }),
      onSubmit: async (body) => {
        app.session.endingHere = true;
        try {
          return await del("/api/users/me", body);
        } catch (err) {
          app.session.endingHere = false;
          throw err;
        }
      },
      after: async (res) => {
        close();
        await app.forgetDevice(); // the account is gone: nothing of it stays on this device
        const gone = (res && res.tripsDeleted) || 0;
        app.signedOut(`Your account was deleted${gone ? `, with ${gone === 1 ? "the trip" : `the ${gone} trips`} only you belonged to` : ""}.`);
      },
    });
  });
}
