// A kept write in words, for its author ("Move “Belém” to Day 2"), made
// when the write is made (names as they were then) and kept with it.

import { fmtMinutes, errorText } from "../planner/ui.js";
import { formatMoney } from "../money.js";

function stopName(store, stopId) {
  const found = store.stop(stopId);
  return found ? `“${found.stop.name}”` : "a stop";
}

function dayLabel(store, dayId) {
  const day = store.day(dayId);
  return day ? `Day ${day.position + 1}` : "a day";
}

function quote(text, max = 60) {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return `“${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}”`;
}

const OPS = {
  move_stop: (s, a) => `Move ${stopName(s, a.stopId)} to ${dayLabel(s, a.toDayId)}`,
  insert_stop: (s, a) => `Add ${quote(a.name)} to ${dayLabel(s, a.dayId)}`,
  update_stop: (s, a) => {
    const name = stopName(s, a.stopId);
    if (a.setTime) return `Set ${name} to ${a.setTime}`;
    if ("setTime" in a) return `Let ${name}'s time be worked out`;
    if (a.durationMin && Object.keys(a).length === 2) return `Make ${name} ${fmtMinutes(a.durationMin)}`;
    return `Change ${name}`;
  },
  update_day: (s, a) => {
    const day = dayLabel(s, a.dayId);
    if (a.startTime) return `Start ${day} at ${a.startTime}`;
    if (a.title) return `Call ${day} ${quote(a.title)}`;
    return `Change ${day}`;
  },
  add_expense: (s, a) => `Add the expense ${quote(a.title)} (${formatMoney(a.amountMinor, a.currency)})`,
  update_expense: (s, a) => {
    const expense = ((s.trip && s.trip.expenses) || []).find((e) => e.id === a.expenseId);
    return expense ? `Change the expense ${quote(expense.title)}` : "Change an expense";
  },
};

export function writeLabel(store, write) {
  if (write.kind === "vote") {
    const name = stopName(store, write.stopId);
    if (write.body.value > 0) return `Vote for ${name}`;
    if (write.body.value < 0) return `Vote against ${name}`;
    return `Take back your vote on ${name}`;
  }
  if (write.kind === "comment") return `Comment on ${stopName(store, write.stopId)}: ${quote(write.body.body, 40)}`;
  const words = OPS[write.op];
  return words ? words(store, write.body) : "A change to the trip";
}

// Why the server refused a kept write, in words for its author: the page's
// usual words for an error (a stop, day or expense gone is said as gone, not
// by the id the API names it with), and a trip that is no longer theirs
// (removed from it, or deleted: the trip's own 404) said as such.
export function refusalText(write) {
  const error = write && write.error;
  if (!error) return "The server did not take this change.";
  if (error.code === "idempotency_unknown") {
    // The server stopped while it had this change in hand (its own sentence names the HTTP header).
    return "The server restarted while this change was being sent, so it may or may not have been made. "
      + "Check the plan, and make it again if it is not there.";
  }
  if (error.status === 404 && error.code === "not_found") {
    const trip = write.tripTitle ? `“${write.tripTitle}”` : "this trip";
    return `You are no longer a member of ${trip}, or it was deleted, so this change was not made.`;
  }
  return errorText(error);
}
