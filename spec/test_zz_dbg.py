import pytest
from browser.harness import chromium, live, offline, open_page, ui_create_trip, ui_signup, open_chat
from browser.scripts import quiet_responder
from standins.openai_standin import ai_settings
pytestmark = pytest.mark.browser
def test_dbg(settings, openai_standin):
    openai_standin.responder = quiet_responder
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        page = open_page(browser, server)
        page.on("console", lambda m: print("CONSOLE", m.type, m.text))
        ui_signup(page, "alice", "Alice")
        ui_create_trip(page, "Belém day", start="2026-12-20", end="2026-12-20")
        panel = open_chat(page)
        panel.get_by_label("Message", exact=True).fill("@agent add")
        print("HINT", repr(panel.locator(".composer-hint").inner_text()), page.errors)
        print(page.evaluate("() => document.querySelector('.composer-to').outerHTML"))
        print("DECIDE", page.evaluate("async () => { const m = await import('/panels/addressing.js'); return JSON.stringify(m.decide('@agent add', {afterAgent:false, members:[]})); }"))
        print("FORM", page.evaluate("() => document.querySelector('.agent-composer').dataset.to"))
        print("COUNT", page.evaluate("() => document.querySelectorAll('.agent-composer').length"), page.evaluate("() => [...document.querySelectorAll('.composer-hint')].map(e => e.textContent)"))
        page.evaluate("() => { const t = document.querySelector('textarea[name=message]'); t.value = 'hello'; t.dispatchEvent(new Event('input')); }")
        print("AFTER", page.evaluate("() => [document.querySelector('.composer-hint').textContent, document.querySelector('.agent-composer').dataset.to, document.querySelector('.group-only').hidden]"))
        print("ERR", page.errors)
