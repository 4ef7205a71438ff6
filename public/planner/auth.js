// Sign in and create an account. A notice left in sessionStorage (NOTICE:
// "Your account was deleted.") is shown once, above the form.

import { post } from "../api.js";
import { onConnection } from "../offline/connection.js";
import { h, field, handleSubmit, plainLimit } from "./ui.js";

export const NOTICE = "wayline.notice";

// The username typed so far, carried between sign-in and sign-up: someone who
// typed it at sign-in and then chose "Create an account" (or the other way
// round) does not type it again. Forgotten once they are in.
let typedUsername = "";

// A blank field is said in words before anything is sent (the server's
// refusal names the field as the API does: "username: must not be empty").
function blank(message, field) {
  const err = new Error(message);
  err.details = { field };
  return err;
}

export function mountAuth(main, app, mode, notice) {
  const left = sessionStorage.getItem(NOTICE);
  sessionStorage.removeItem(NOTICE);
  const signUp = mode === "signup";
  const errorSlot = h("div", { class: "form-error" }); // its error box is an alert: no live region around it (read twice)
  const username = h("input", {
    name: "username", autocomplete: "username", required: true, autocapitalize: "none", spellcheck: "false",
    minlength: 3, maxlength: 32, autofocus: true, value: typedUsername,
  });
  username.addEventListener("input", () => { typedUsername = username.value; });
  const password = h("input", {
    name: "password", type: "password", required: true, minlength: signUp ? 8 : 1,
    autocomplete: signUp ? "new-password" : "current-password",
  });
  const displayName = h("input", { name: "displayName", autocomplete: "name", maxlength: 64 });
  const submit = h("button", { type: "submit", class: "btn btn-primary btn-block" }, signUp ? "Create account" : "Sign in");

  const form = h(
    "form",
    { class: "stack", novalidate: true },
    field("Username", username, signUp ? "3–32 characters: a–z, 0–9, _ . -" : null),
    signUp ? field("Display name (optional)", displayName, "What other members of your trips see.") : null,
    field("Password", password, signUp ? "At least 8 characters." : null),
    errorSlot,
    submit,
  );
  // "Could not reach Wayline" is stale once the connection is back: it goes.
  let unreachable = false;
  const stopListening = onConnection((online) => {
    if (online && unreachable) {
      unreachable = false;
      errorSlot.replaceChildren();
    }
  });
  handleSubmit(form, {
    button: submit,
    errorSlot,
    busyLabel: signUp ? "Creating…" : "Signing in…",
    check: () => {
      if (!username.value.trim()) throw blank(signUp ? "Choose a username." : "Enter your username.", "username");
      if (!password.value) throw blank(signUp ? "Choose a password." : "Enter your password.", "password");
      const body = { username: username.value.trim().toLowerCase(), password: password.value };
      if (signUp && displayName.value.trim()) body.displayName = displayName.value.trim();
      return body;
    },
    onSubmit: (body) => post(signUp ? "/api/auth/signup" : "/api/auth/signin", body).catch((err) => { throw plainLimit(err); }),
    after: () => {
      typedUsername = "";
      return app.afterSignIn();
    },
    onError: (err) => {
      unreachable = err.code === "network";
      const target = err.details && err.details.field === "password" ? password : username;
      target.focus();
    },
  });

  main.append(
    h(
      "div",
      { class: "auth-page" },
      h(
        "section",
        { class: "auth-hero" },
        h("p", { class: "hero-title" }, "Plan trips together."),
        h("p", null, "Days, stops and travel times in one shared timeline — with AI help that never takes the plan out of your hands."),
        h("ul", { class: "hero-points" },
          h("li", null, "Computed times and travel legs"),
          h("li", null, "Shared expenses and who owes whom"),
          h("li", null, "AI help the whole group can ask, right in the chat")),
      ),
      h(
        "section",
        { class: "card auth-card" },
        h("h1", null, signUp ? "Create your account" : "Welcome back"),
        // Phones do not show the hero beside the form: say what Wayline is here.
        h("p", { class: "auth-lede" }, h("strong", null, "Wayline plans trips with your group: "),
          "one shared day-by-day timeline with travel times, split expenses, and AI help that never changes the plan without you."),
        left ? h("p", { class: "notice", role: "status", "data-testid": "notice" }, left) : null,
        notice ? h("p", { class: "notice" }, notice) : null,
        form,
        h(
          "p",
          { class: "muted center" },
          signUp ? "Already have an account? " : "New to Wayline? ",
          h("a", { href: signUp ? "#/signin" : "#/signup" }, signUp ? "Sign in" : "Create an account"),
        ),
      ),
    ),
  );
  return { destroy: stopListening };
}
