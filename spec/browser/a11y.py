"""Accessibility checks in the browser tests: axe-core (the npm package in
spec/js, installed by scripts/test with `npm ci`) run inside the page.

The pages' Content-Security-Policy refuses inline scripts, so axe is not
added as a <script> tag: its source is evaluated through the DevTools
protocol (page.evaluate), which the policy does not govern. Every rule axe
runs by default is on (none is turned off); a test asserts no critical and
no serious violation."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parent.parent / "js" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("critical", "serious")


@cache
def _axe_source() -> str:
    if not AXE.is_file():
        pytest.fail(f"axe-core is missing at {AXE}: run `npm ci --prefix spec/js` (scripts/test does).", pytrace=False)
    return AXE.read_text(encoding="utf-8")


def violations(page, *, impacts: tuple[str, ...] = BLOCKING) -> list[dict]:
    """axe's violations of the page as it is now, of the given impacts:
    [{id, impact, help, nodes: [selector and summary, …]}]."""
    if not page.evaluate("() => Boolean(window.axe)"):
        page.evaluate(_axe_source() + "\n;0")
    found = page.evaluate("""async (impacts) => {
        const result = await window.axe.run(document, { resultTypes: ["violations"] });
        return result.violations.filter((v) => impacts.includes(v.impact)).map((v) => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 6).map((n) => `${n.target.join(" ")}: ${n.failureSummary.replace(/\\s+/g, " ")}`),
        }));
    }""", list(impacts))
    return found


def assert_accessible(page, view: str) -> None:
    found = violations(page)
    assert not found, f"axe found critical/serious problems on {view}:\n" + "\n".join(
        f"- {v['impact']} {v['id']} ({v['help']}):\n    " + "\n    ".join(v["nodes"]) for v in found)


LIVE = "[role=alert], [role=status], [role=log], [role=marquee], [role=timer], [aria-live]:not([aria-live=off])"


_NESTED = """(live) => {
    const short = (el) => el.outerHTML.slice(0, el.outerHTML.indexOf('>') + 1);
    const nested = (root) => [root, ...root.querySelectorAll(live)].filter((el) => el.matches(live)).flatMap((el) => {
        const outer = el.parentElement && el.parentElement.closest(live);
        return outer ? [`${short(outer)} > ${short(el)}`] : [];
    });
    return nested;
}"""


def nested_live_regions(page) -> list[str]:
    """Live regions inside another live region (a toast that is an alert in
    a status host, an error box in an assertive slot): a screen reader may
    read their words twice, once for each. axe has no rule for it. Each as
    "outer > inner" in short HTML: those on the page now, and those seen
    since `watch_live_regions(page)` (a progress line that came and went)."""
    return page.evaluate(f"""(live) => {{
        const nested = ({_NESTED})(live);
        return [...new Set([...nested(document.documentElement), ...(window.__nestedLive || [])])];
    }}""", LIVE)


def watch_live_regions(page) -> None:
    """From now on (in this document), every live region put inside another
    is remembered for `nested_live_regions`, however briefly it was there."""
    page.evaluate(f"""(live) => {{
        const nested = ({_NESTED})(live);
        const seen = window.__nestedLive = window.__nestedLive || [];
        new MutationObserver((records) => {{
            for (const r of records) {{
                const roots = r.type === 'attributes' ? [r.target] : [...r.addedNodes];
                for (const el of roots) {{
                    if (el.nodeType !== 1) continue;
                    for (const n of nested(el)) if (!seen.includes(n)) seen.push(n);
                }}
            }}
        }}).observe(document.documentElement, {{ subtree: true, childList: true, attributes: true,
                                                 attributeFilter: ['role', 'aria-live'] }});
    }}""", LIVE)


def small_targets(page, within: str, least: int = 44) -> list[str]:
    """Visible buttons, links and form controls under `within` that a finger
    gets less than `least` CSS px of, either way (WCAG 2.5.5's 44 px), each
    as "name: width x height"."""
    return page.evaluate("""([within, least]) => {
        const TARGETS = 'button, a[href], input:not([type=hidden]), select, textarea, summary';
        return [...document.querySelectorAll(within)].flatMap((root) =>
        [root, ...root.querySelectorAll('*')].filter((el) => el.matches(TARGETS)))
        .filter((el) => el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden')
        .map((el) => [el, el.getBoundingClientRect()])
        .filter(([, r]) => r.width < least - 0.5 || r.height < least - 0.5)
        .map(([el, r]) => `${(el.getAttribute('aria-label') || el.textContent).trim().slice(0, 60)}: `
             + `${Math.round(r.width)} x ${Math.round(r.height)}`);
    }""", [within, least])


def live_roles_around(locator) -> list[str | None]:
    """The live regions an element is in, itself first, as their roles
    (None for a bare aria-live): ["alert"] is an alert read once."""
    return locator.evaluate("""(el, live) => {
        const roles = [];
        for (let at = el; at; at = at.parentElement) if (at.matches(live)) roles.push(at.getAttribute('role'));
        return roles;
    }""", LIVE)


def watch_announcements(page, within: str = "body") -> None:
    """From now on, remember the words added inside a live region under
    `within` (a selector) that was already on the page: what a screen reader
    reads out, for `announced`. A region put in place whole, already filled,
    is not read: its words are not counted."""
    page.evaluate("""([live, within]) => {
        const heard = window.__announced = [];
        new MutationObserver((records) => {
            for (const r of records) {
                const region = r.target.closest && r.target.closest(live);
                if (!region || !region.closest(within)) continue;
                for (const n of r.addedNodes) if (n.textContent.trim()) heard.push(n.textContent.trim());
            }
        }).observe(document.documentElement, { subtree: true, childList: true });
    }""", [LIVE, within])


def announced(page) -> list[str]:
    """The words added to live regions since `watch_announcements(page)`."""
    return page.evaluate("() => window.__announced || []")
