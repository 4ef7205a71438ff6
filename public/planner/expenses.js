// Expenses: the list, adding and editing (equal split or shares), and the
// balances per currency with who owes whom.

import { h, field, select, openDialog, dialogForm, confirmDialog, showError } from "./ui.js";
import { formatAmount, formatMoney, toMinor, fromMinor, exampleAmount, overLimit, maxAmount } from "../money.js";
import { patch, sig } from "./keyed.js";
import { CURRENCIES } from "./trips.js";
import { icon } from "./icons.js";

// Built once; redrawn only when the expenses, balances or members changed
// (nothing here is typed into: forms open in dialogs).
export function createExpensesView(root, store) {
  const page = h("div", { class: "section-page" });
  root.append(page);
  return {
    render() {
      const t = store.trip;
      patch(page, sig(t.expenses, t.expenseSummary, t.members, t.days.map((d) => [d.id, d.position, d.stops.map((x) => [x.id, x.name])]),
        store.canEdit, t.currency), () => expensesPage(store));
    },
  };
}

function expensesPage(store) {
  const trip = store.trip;
  const page = [];
  page.push(
    h("header", { class: "section-head" },
      h("div", null, h("h2", null, "Expenses"), h("p", { class: "muted" }, "Shared costs, split between members. Amounts stay in the currency they were paid in.")),
      store.canEdit ? h("button", { type: "button", class: "btn btn-primary", "data-fkey": "add", onclick: () => openExpense(store) }, icon("plus"), "Add expense") : null),
  );

  page.push(balances(store));
  if (trip.expenses.some((e) => e.pending)) {
    page.push(h("p", { class: "muted", "data-testid": "expenses-waiting" }, "Expenses waiting to be sent join the balances once they are sent."));
  }

  if (!trip.expenses.length) {
    page.push(h("div", { class: "empty card" }, h("p", null, "No expenses yet."), h("p", { class: "muted" }, "Record who paid for what; Wayline works out who owes whom.")));
    return page;
  }
  const list = h("ul", { class: "expense-list card", "aria-label": "Expenses" });
  for (const e of trip.expenses) {
    const stop = e.stopId ? trip.days.flatMap((d) => d.stops).find((s) => s.id === e.stopId) : null;
    const day = e.dayId ? trip.days.find((d) => d.id === e.dayId) : null;
    list.append(h("li", { class: "expense", "data-expense-id": e.id },
      h("div", { class: "expense-main" },
        h("strong", null, e.title),
        e.pending ? h("span", { class: "pending-badge" }, "Waiting to send") : null,
        h("span", { class: "muted" }, [`Paid by ${store.memberName(e.paidBy)}`, splitText(store, e.split), day ? `Day ${day.position + 1}` : null, stop ? stop.name : null].filter(Boolean).join(" · "))),
      h("span", { class: "expense-amount" }, formatMoney(e.amountMinor, e.currency)),
      store.canEdit && !e.id.startsWith("pending:") ? h("span", { class: "row" },
        h("button", { type: "button", class: "icon-btn", "data-fkey": `edit:${e.id}`, "aria-label": `Edit ${e.title}`, onclick: () => openExpense(store, e) }, icon("edit", { size: 16 })),
        h("button", { type: "button", class: "icon-btn", "data-fkey": `delete:${e.id}`, "aria-label": `Delete ${e.title}`, "data-needs-server": true, onclick: () => removeExpense(store, e) }, icon("trash", { size: 16 }))) : null));
  }
  page.push(list);
  return page;
}

function splitText(store, split) {
  if (!split) return "split equally";
  if (split.kind === "shares") {
    return `shares: ${Object.entries(split.shares).map(([id, n]) => `${store.memberName(id)} ${n}`).join(", ")}`;
  }
  const n = (split.members || []).length;
  return n === store.trip.members.length ? "split equally by everyone" : `split equally by ${n}`;
}

function balances(store) {
  const summary = (store.trip.expenseSummary && store.trip.expenseSummary.byCurrency) || {};
  const currencies = Object.keys(summary);
  const box = h("section", { class: "balances", "aria-label": "Balances" });
  if (!currencies.length) return box;
  for (const cur of currencies) {
    const s = summary[cur];
    const rows = (s.members || []).map((m) => h("tr", null,
      h("th", { scope: "row" }, store.memberName(m.userId)),
      // The code is in the card's heading: the cells keep to the numbers, so a phone shows all four columns.
      h("td", null, formatAmount(m.paidMinor, cur)),
      h("td", null, formatAmount(m.owesMinor, cur)),
      h("td", { class: m.netMinor > 0 ? "pos" : m.netMinor < 0 ? "neg" : "" }, `${m.netMinor > 0 ? "+" : ""}${formatAmount(m.netMinor, cur)}`)));
    const settlements = s.settlements || [];
    box.append(h("div", { class: "card balance-card" },
      h("div", { class: "balance-head" }, h("h3", null, `${cur} balances`), h("span", { class: "muted" }, `Total ${formatMoney(s.totalMinor, cur)}`)),
      // A table too wide for the screen scrolls inside its card, never the page, and says so.
      scrollingTable(h("table", { class: "balance-table" },
        h("thead", null, h("tr", null, h("th", { scope: "col" }, "Member"), h("th", { scope: "col" }, "Paid"), h("th", { scope: "col" }, "Share"), h("th", { scope: "col" }, "Balance"))),
        h("tbody", null, rows)), `${cur} balances table`),
      h("h4", null, "Who owes whom"),
      settlements.length
        ? h("ul", { class: "settlements" }, settlements.map((p) => h("li", null,
          h("strong", null, store.memberName(p.from)), " pays ", h("strong", null, store.memberName(p.to)), " ", h("span", { class: "money" }, formatMoney(p.amountMinor, cur)))))
        : h("p", { class: "muted" }, "Everyone is settled up.")));
  }
  return box;
}

// The table in a box that scrolls sideways when it must; then a line under it
// says so (and the box's right edge fades), so no column looks cut off.
function scrollingTable(table, label) {
  const box = h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": label }, table);
  const hint = h("p", { class: "hint scroll-hint", hidden: true }, "Scroll sideways for every column.");
  const wrap = h("div", { class: "table-wrap" }, box, hint);
  const check = () => {
    const overflows = box.scrollWidth > box.clientWidth + 1;
    wrap.classList.toggle("overflows", overflows);
    hint.hidden = !overflows;
  };
  new ResizeObserver(check).observe(box);
  return wrap;
}

async function removeExpense(store, e) {
  if (!(await confirmDialog(`Delete “${e.title}”?`, "Balances are recalculated for everyone."))) return;
  try {
    await store.op("delete_expense", { expenseId: e.id });
  } catch (err) {
    showError(err);
  }
}

function openExpense(store, existing = null) {
  const trip = store.trip;
  const me = store.app.session.me;
  const e = existing || {};
  const currencyList = [...new Set([trip.currency, ...CURRENCIES])];
  const title = h("input", { name: "title", required: true, maxlength: 120, value: e.title || "", placeholder: "Dinner at Time Out Market", autofocus: true });
  const currency = select("currency", currencyList.map((c) => [c, c]), e.currency || trip.currency);
  const amount = h("input", { name: "amount", inputmode: "decimal", required: true, value: e.amountMinor ? fromMinor(e.amountMinor, e.currency) : "", placeholder: fromMinor(0, currency.value) });
  currency.addEventListener("change", () => { amount.placeholder = fromMinor(0, currency.value); });
  const paidBy = select("paidBy", trip.members.map((m) => [m.userId, store.memberName(m.userId)]), e.paidBy || me.id);
  const splitKind = select("splitKind", [["equal", "Equally"], ["shares", "By shares"]], (e.split && e.split.kind) || "equal");
  const dayLink = select("dayId", [["", "No day"], ...trip.days.map((d) => [d.id, `Day ${d.position + 1}${d.title ? ` · ${d.title}` : ""}`])], e.dayId || "");
  const chosen = new Set(e.split && e.split.kind === "equal" ? e.split.members : trip.members.map((m) => m.userId));
  const shares = (e.split && e.split.kind === "shares" && e.split.shares) || {};
  const memberRows = trip.members.map((m) => {
    const check = h("input", { type: "checkbox", name: "member", value: m.userId, checked: chosen.has(m.userId) });
    const share = h("input", { type: "number", min: 0, step: 1, value: shares[m.userId] ?? 1, class: "share-input", "aria-label": `Shares for ${store.memberName(m.userId)}` });
    return { m, check, share, row: h("li", { class: "split-row" }, h("label", null, check, ` ${store.memberName(m.userId)}`), share) };
  });
  const splitBox = h("fieldset", { class: "split" }, h("legend", null, "Split between"), h("ul", { class: "plain" }, memberRows.map((r) => r.row)));
  const syncSplit = () => memberRows.forEach((r) => { r.share.hidden = splitKind.value !== "shares"; r.check.parentElement.parentElement.classList.toggle("shares", splitKind.value === "shares"); });
  splitKind.addEventListener("change", syncSplit);
  syncSplit();

  openDialog(existing ? "Edit expense" : "Add expense", (close) => dialogForm({
    close,
    novalidate: true,
    fields: [
      field("What for", title),
      h("div", { class: "grid-2" }, field("Amount", amount), field("Currency", currency)),
      h("div", { class: "grid-2" }, field("Paid by", paidBy), field("Split", splitKind)),
      splitBox,
      field("Day (optional)", dayLink),
    ],
    submitLabel: existing ? "Save" : "Add expense",
    busyLabel: existing ? "Saving…" : "Adding…",
    check: readExpense,
    onSubmit: (args) => {
      if (existing) return store.op("update_expense", { expenseId: e.id, ...args });
      if (!args.dayId) delete args.dayId;
      return store.op("add_expense", args);
    },
  }));

  function readExpense() {
    const amountMinor = toMinor(amount.value, currency.value);
    if (!title.value.trim()) throw new Error("Say what the expense was for.");
    if (overLimit(amount.value, currency.value)) throw new Error(`One expense can be at most ${maxAmount(currency.value)}.`);
    if (!amountMinor) throw new Error(`Enter an amount greater than zero in ${currency.value}, like ${exampleAmount(currency.value)}.`);
    let split;
    if (splitKind.value === "shares") {
      const map = {};
      for (const r of memberRows) {
        const n = Number(r.share.value);
        if (!Number.isInteger(n) || n < 0) throw new Error("Shares are whole numbers, 0 or more.");
        if (n > 0) map[r.m.userId] = n;
      }
      if (!Object.keys(map).length) throw new Error("Give at least one member a share.");
      split = { kind: "shares", shares: map };
    } else {
      const members = memberRows.filter((r) => r.check.checked).map((r) => r.m.userId);
      if (!members.length) throw new Error("Choose at least one member to split with.");
      split = { kind: "equal", members };
    }
    return { title: title.value.trim(), amountMinor, currency: currency.value, paidBy: paidBy.value, split, dayId: dayLink.value || null };
  }
}
