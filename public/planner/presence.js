// Who else has the trip open: small avatars on the day rail, next to the day
// each member is looking at (the store's presence list never holds my own
// pages). Keyed by userId, so two members with the same name stay apart;
// each has a colour derived from the id.

import { h, initials, memberTone } from "./ui.js";

const SHOWN = 3; // more than this fold into "+N"

// The people on a day (null: those with the trip open but on no day), as a
// signature part for the rail's keyed rendering.
export function presenceKey(store, dayId) {
  return store.presentOn(dayId).map((p) => [p.userId, nameOf(store, p)]);
}

// The avatars for a day (or, with dayId null, for the trip), or null.
export function presenceAvatars(store, dayId) {
  const people = store.presentOn(dayId);
  if (!people.length) return null;
  const [one, many] = dayId === null ? ["has this trip open", "have this trip open"]
    : ["is looking at this day", "are looking at this day"];
  const shown = people.length > SHOWN ? people.slice(0, SHOWN - 1) : people;
  const rest = people.length - shown.length;
  return h("span", { class: "presence", "data-presence-day": dayId || "" },
    shown.map((p) => {
      const label = `${nameOf(store, p)} ${one}`;
      return h("span", {
        class: `avatar presence-avatar pc-${memberTone(p.userId)}`, role: "img", "aria-label": label, title: label,
        "data-user-id": p.userId,
      }, initials(nameOf(store, p)));
    }),
    rest ? h("span", {
      class: "avatar presence-avatar presence-more", role: "img", title: `${rest} more`,
      "aria-label": `${rest} more ${many}`,
    }, `+${rest}`) : null,
    dayId === null ? h("span", { class: "presence-caption", "aria-hidden": "true" }, "also on this trip") : null);
}

function nameOf(store, person) {
  const m = store.member(person.userId);
  return (m && (m.displayName || m.username)) || person.displayName || "Someone";
}

