// Who a chat message is for: the group, or the trip agent. The twin of
// app/agent/addressing.py (the rule and its order are described there); both
// run spec/fixtures/addressing_vectors.json. The composer runs it while the
// member types, so it says before sending what the server will do.
//
// decide(text, {afterAgent, members, aiOn}) -> {to: "agent"|"group"|"ask", why, member}

export const CONTINUATION_MINUTES = 30;
const MAX_QUESTION = 320;
const AGENT = "@agent";
const GREETING = /^(?:hey|hi|hello|yo|dear|ok|okay|so|and|thanks|thank you|hej|ciao)(?:[\s,!:]+)/i;
const VOCATIVE_END = /[\s?？!！.。…]*$/u;
const TRAILING = /[\s.!。！~～]+$/u;
const EMOJI_EXTRAS = /[\u{1F3FB}-\u{1F3FF}\uFE0F]/gu;
const CONFIRMATIONS = new Set([
  "确认", "确定", "好", "好的", "好啊", "可以", "行", "是", "是的", "对", "没问题", "同意", "就这样",
  "不", "不用", "不要", "算了",
  "yes", "y", "yep", "yeah", "yup", "ok", "okay", "k", "sure", "confirm", "confirmed", "go ahead",
  "do it", "sounds good", "please do", "agreed", "perfect", "great", "no", "nope", "no thanks", "not now",
  "👍", "👌",
]);
const REACTIONS = new Set([
  "thanks", "thank you", "thx", "ty", "tysm", "cheers", "lol", "lmao", "haha", "hahaha", "hehe", "nice", "cool",
  "wow", "yay", "oh", "ah", "hmm", "谢谢", "多谢", "哈哈", "哈哈哈",
]);
const CHOICE = new RegExp(
  "^(?:(?:option|choice|plan|number|no\\.?|#)\\s*\\d+"
  + "|(?:the\\s+)?(?:first|second|third|fourth|fifth|last|other)(?:\\s+(?:one|option|choice|plan))?"
  + "|(?:选项?|方案)\\s*\\d+"
  + "|第\\s*[一二三四五六七八九十\\d]+\\s*(?:个|种|项|条|天|套)?(?:方案|选项)?)"
  + "(?:\\s*(?:please|pls|吧|啦|了))?$", "i");
const QUESTION_WORDS = /^(?:what|which|why|how|when|where|who|can|could|should|would|is|are|do|does|will)\b/i;
const WORD = /[\p{L}\p{N}_]/u;

// [lowercased name, how to show it] for each way a member is called: the
// display name, its first word, the username. Longest first.
export function memberNames(members) {
  const seen = new Map();
  for (const m of members || []) {
    const display = String(m.displayName || "").split(/\s+/).filter(Boolean).join(" ");
    const username = String(m.username || "").trim();
    const shown = display || username;
    for (const name of [display, display ? display.split(" ")[0] : "", username]) {
      const key = name.toLowerCase();
      if ([...key].length >= 2 && key !== "agent" && !seen.has(key)) seen.set(key, shown);
    }
  }
  return [...seen.entries()].sort((a, b) => b[0].length - a[0].length || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

const isWord = (c) => c !== undefined && WORD.test(c);

function bounded(text, start, end) {
  const before = text[start - 1];
  return (start === 0 || !(isWord(before) || before === "@")) && (end === text.length || !isWord(text[end]));
}

function mentionsAgent(low) {
  for (let at = low.indexOf(AGENT); at !== -1; at = low.indexOf(AGENT, at + 1)) {
    if (bounded(low, at, at + AGENT.length)) return true;
  }
  return false;
}

function nameAt(low, at, names) {
  for (const [key, shown] of names) {
    if (low.startsWith(key, at) && (at + key.length === low.length || !isWord(low[at + key.length]))) return shown;
  }
  return null;
}

function namedMember(low, names) {
  if (!names.length) return null;
  // Starts with a name: "Bob, …", "bob what…", "@bob …", "hey Bob, …".
  const greeting = low.match(GREETING);
  let at = greeting ? greeting[0].length : 0;
  if (low.startsWith("@", at)) at += 1;
  const first = nameAt(low, at, names);
  if (first !== null) return first;
  // Ends with one, after a comma: "…, Bob?".
  const body = low.slice(0, low.search(VOCATIVE_END));
  const comma = Math.max(body.lastIndexOf(","), body.lastIndexOf("，"));
  if (comma !== -1) {
    let last = body.slice(comma + 1).trim();
    if (last.startsWith("@")) last = last.slice(1);
    for (const [key, shown] of names) if (last === key) return shown;
  }
  // "@bob" anywhere.
  for (let i = low.indexOf("@"); i !== -1; i = low.indexOf("@", i + 1)) {
    if (i === 0 || !isWord(low[i - 1])) {
      const shown = nameAt(low, i + 1, names);
      if (shown !== null) return shown;
    }
  }
  return null;
}

function plainOf(low) {
  return low.replace(EMOJI_EXTRAS, "").replace(TRAILING, "").trim();
}

export function decide(text, { afterAgent, members, aiOn }) {
  const out = (to, why, member = null) => ({ to, why, member });
  if (!aiOn) return out("group", "no_ai");
  const low = String(text || "").split(/\s+/).filter(Boolean).join(" ").toLowerCase();
  const names = memberNames(members);
  if (low.startsWith(AGENT) && bounded(low, 0, AGENT.length)) return out("agent", "mention");
  const member = namedMember(low, names);
  if (member !== null) return out("group", "member", member);
  if (mentionsAgent(low)) return out("agent", "mention");
  if (!afterAgent) return out("group", "plain");
  const plain = plainOf(low);
  if (CONFIRMATIONS.has(plain) || CHOICE.test(plain)) return out("agent", "continuation");
  if (low && (REACTIONS.has(plain) || ![...plain].some(isWord))) return out("group", "reaction");
  const question = /[?？吗呢]$/u.test(plain) || QUESTION_WORDS.test(plain);
  if (question && plain.length <= MAX_QUESTION) return out("agent", "continuation");
  return out("ask", "unclear");
}
