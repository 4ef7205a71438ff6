"""Who a chat message is for: the group, or the trip agent.

One rule, decided before any model call. The page runs its twin
(`public/panels/addressing.js`) while the member types, so the composer says
before sending what will happen; both run the shared vectors in
`spec/fixtures/addressing_vectors.json`.

`decide(text, after_agent=..., members=..., ai_on=...)` answers a
`Decision(to, why, member)`, checked in this order:

0. No AI on this server (`ai_on` false): the group (`no_ai`), whatever the
   words: there is no agent to answer, so nothing is for it (not even an
   `@agent` mention or a street-view request). No model call.
1. `@agent` at the very start: the agent (`mention`).
2. A message that names a member (starts with a member's name, with or
   without `@` and after an optional "hey"/"thanks"; ends with ", Bob?";
   or `@bob` anywhere): the group (`member`), even when `@agent` comes later
   ("Bob, @agent says Noma closes at 23:00" is for Bob). No model call.
3. `@agent` anywhere else: the agent (`mention`).
4. Not right after the agent's own message (`after_agent` false): the group
   (`plain`). Plain messages are the group's; no model call.
5. Right after the agent's message (its turn goes on), as the seed says:
   a short confirmation ("ok", "确认", "👍") or a choice ("option 2", "the
   second one"): the agent (`continuation`).
6. Only emoji or punctuation, or only a reaction ("thanks", "lol"): the
   group (`reaction`). No model call.
7. A question: the agent (`continuation`).
8. Anything else right after the agent's message: `ask` (`unclear`): the
   server asks the model (`is_addressed`); the page sends it to the agent as
   a chat turn, and offers "group only" before sending.

`after_agent` is for the caller to tell: the newest chat message (not an
edit line, not a stop comment) is the agent's, written at most
`CONTINUATION_MINUTES` ago.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

CONTINUATION_MINUTES = 30
MAX_QUESTION = 320

To = Literal["agent", "group", "ask"]
Why = Literal["no_ai", "mention", "member", "plain", "continuation", "reaction", "unclear"]

AGENT = "@agent"
GREETING = re.compile(r"^(?:hey|hi|hello|yo|dear|ok|okay|so|and|thanks|thank you|hej|ciao)(?:[\s,!:]+)",
                      re.IGNORECASE)
VOCATIVE_END = re.compile(r"[\s?？!！.。…]*$")
TRAILING = re.compile(r"[\s.!。！~～]+$")
EMOJI_EXTRAS = re.compile("[\U0001F3FB-\U0001F3FF\uFE0F]")
CONFIRMATIONS = frozenset({
    "确认", "确定", "好", "好的", "好啊", "可以", "行", "是", "是的", "对", "没问题", "同意", "就这样",
    "不", "不用", "不要", "算了",
    "yes", "y", "yep", "yeah", "yup", "ok", "okay", "k", "sure", "confirm", "confirmed", "go ahead",
    "do it", "sounds good", "please do", "agreed", "perfect", "great", "no", "nope", "no thanks", "not now",
    "👍", "👌",
})
REACTIONS = frozenset({
    "thanks", "thank you", "thx", "ty", "tysm", "cheers", "lol", "lmao", "haha", "hahaha", "hehe", "nice", "cool",
    "wow", "yay", "oh", "ah", "hmm", "谢谢", "多谢", "哈哈", "哈哈哈",
})
CHOICE = re.compile(
    r"^(?:(?:option|choice|plan|number|no\.?|#)\s*\d+"
    r"|(?:the\s+)?(?:first|second|third|fourth|fifth|last|other)(?:\s+(?:one|option|choice|plan))?"
    r"|(?:选项?|方案)\s*\d+"
    r"|第\s*[一二三四五六七八九十\d]+\s*(?:个|种|项|条|天|套)?(?:方案|选项)?)"
    r"(?:\s*(?:please|pls|吧|啦|了))?$", re.IGNORECASE)
QUESTION_WORDS = re.compile(r"^(?:what|which|why|how|when|where|who|can|could|should|would|is|are|do|does|will)\b",
                            re.IGNORECASE)


@dataclass(frozen=True)
class Decision:
    to: To
    why: Why
    member: str | None = None      # the member the message names (as the trip knows them)

    def to_json(self) -> dict:
        return {"to": self.to, "why": self.why, "member": self.member}


def member_names(members: list[dict]) -> list[tuple[str, str]]:
    """(lowercased name, how to show it) for each way a member is called: the
    display name, its first word, the username. Longest first, so "Ana Rita"
    wins over "Ana"."""
    seen: dict[str, str] = {}
    for m in members:
        display = " ".join(str(m.get("displayName") or "").split())
        username = str(m.get("username") or "").strip()
        shown = display or username
        for name in (display, display.split(" ")[0] if display else "", username):
            key = name.lower()
            if len(key) >= 2 and key != "agent" and key not in seen:
                seen[key] = shown
    return sorted(seen.items(), key=lambda kv: (-len(kv[0]), kv[0]))


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _bounded(text: str, start: int, end: int) -> bool:
    """text[start:end] stands alone: no word character (or @) touches it."""
    before_ok = start == 0 or not (_word(text[start - 1]) or text[start - 1] == "@")
    return before_ok and (end == len(text) or not _word(text[end]))


def _mentions_agent(low: str) -> bool:
    at = low.find(AGENT)
    while at != -1:
        if _bounded(low, at, at + len(AGENT)):
            return True
        at = low.find(AGENT, at + 1)
    return False


def _name_at(low: str, at: int, names: list[tuple[str, str]]) -> str | None:
    for key, shown in names:
        if low.startswith(key, at) and (at + len(key) == len(low) or not _word(low[at + len(key)])):
            return shown
    return None


def _named_member(low: str, names: list[tuple[str, str]]) -> str | None:
    if not names:
        return None
    # Starts with a name: "Bob, …", "bob what…", "@bob …", "hey Bob, …".
    greeting = GREETING.match(low)
    at = greeting.end() if greeting else 0
    at += low.startswith("@", at)
    if (shown := _name_at(low, at, names)) is not None:
        return shown
    # Ends with one, after a comma: "…, Bob?".
    end = VOCATIVE_END.search(low)
    body = low[:end.start()] if end is not None else low
    comma = max(body.rfind(","), body.rfind("，"))
    if comma != -1:
        last = body[comma + 1:].strip().removeprefix("@")
        for key, shown in names:
            if last == key:
                return shown
    # "@bob" anywhere.
    at = low.find("@")
    while at != -1:
        if (at == 0 or not _word(low[at - 1])) and (shown := _name_at(low, at + 1, names)) is not None:
            return shown
        at = low.find("@", at + 1)
    return None


def mentions_agent(text: str) -> bool:
    """`@agent` anywhere (a stop comment's mention, a message's source)."""
    return _mentions_agent((text or "").lower())


def after_agent(previous: Any, now: datetime) -> bool:
    """Whether the newest chat message (`previous`: a row with role, source,
    created_at, or None) is the agent's own reply, recent enough for its
    turn to go on. A proactive note (`threshold`) opens no turn, nor does a
    member's connected assistant's proposal (`assistant`, over MCP)."""
    if previous is None or previous["role"] != "assistant" or previous["source"] in ("threshold", "assistant"):
        return False
    written = datetime.fromisoformat(previous["created_at"].replace("Z", "+00:00"))
    return now - written <= timedelta(minutes=CONTINUATION_MINUTES)


def _plain(text: str) -> str:
    return TRAILING.sub("", EMOJI_EXTRAS.sub("", text)).strip()


def decide(text: str, *, after_agent: bool, members: list[dict], ai_on: bool) -> Decision:
    if not ai_on:
        return Decision("group", "no_ai")
    low = " ".join((text or "").split()).lower()
    names = member_names(members)
    if low.startswith(AGENT) and _bounded(low, 0, len(AGENT)):
        return Decision("agent", "mention")
    if (member := _named_member(low, names)) is not None:
        return Decision("group", "member", member)
    if _mentions_agent(low):
        return Decision("agent", "mention")
    if not after_agent:
        return Decision("group", "plain")
    plain = _plain(low)
    if plain in CONFIRMATIONS or CHOICE.match(plain):
        return Decision("agent", "continuation")
    if low and (plain in REACTIONS or not any(_word(c) for c in plain)):
        return Decision("group", "reaction")
    question = plain.endswith(("?", "？", "吗", "呢")) or bool(QUESTION_WORDS.match(plain))
    if question and len(plain) <= MAX_QUESTION:
        return Decision("agent", "continuation")
    return Decision("ask", "unclear")
