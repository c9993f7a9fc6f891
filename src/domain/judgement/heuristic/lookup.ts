/**
 * SPIRALING detectors for attempts that are reworded, not repeated: research and web agents, and
 * agents that hand questions to sub-agents. Each counts only evidence turns (index ≥ `from`) as
 * the repeats it cites; earlier turns may only be the first attempt the repeats go back to.
 *
 * - rephrasedLookup: four or more requests (search queries, sub-agent instructions, the quoted
 *   queries of a code blob) whose content words overlap heavily (Jaccard ≥ 0.4 after stopwords,
 *   URLs and numbers are dropped), and at least half of the repeats learned nothing: each got an
 *   answer like one an earlier ask of the group got (Jaccard ≥ 0.5 of the results' content words)
 *   and under half of its words were new to the window. A series of similar requests whose results
 *   differ is research, even when the agent keeps saying it has not found the answer yet.
 * - unchangedStatus: the agent says four or more times, in nearly the same words (one sentence of
 *   each with Jaccard ≥ 0.5), that the same thing is still not found (not identified, unable to …), with at least three tool calls between
 *   the first and the last time, at least half of which read little new (under half of their
 *   result's content words new to the window): it is acting, and nothing it does changes what it
 *   knows. Calls in between that fail with errors that change (a test-fix loop) are progress,
 *   whatever it says; so are calls that each read something new (trying source after source).
 * - repeatedEmptySearch: four or more code searches (grep, rg, ag, ack, git grep, find -name, fd,
 *   or a search tool's pattern) for the same term (quotes, regex syntax and case aside) that all
 *   came back empty, and no search in the window found it: the fifth way of asking will not find it
 *   either.
 * - repeatedInvalidCall: at the end of a long window (ten turns or more) the last two tool calls
 *   are the same call, both rejected with the same error saying the call itself is invalid (unknown
 *   tool or command, invalid or missing argument, syntax error, not found): sending it again
 *   unchanged cannot work.
 */
import { commandSignature, commandText, errorSignature, looksFailed, outputSignature } from './normalize.js';
import { contentTokens, jaccard, novelty, requestText, statusSentences } from './similarity.js';
import { callsOf, jsonArgs, uniq, type Call, type Detector, type Finding } from './types.js';

const LOOKUP_SIMILAR = 0.4;
const LOOKUP_REPEAT = 4;
const STALE_RESULT = 0.5;
const SAME_ANSWER = 0.5;
const STATUS_SIMILAR = 0.5;
const STATUS_REPEAT = 4;
const STATUS_CALLS = 3;
const LONG_WINDOW = 10;

const spiral = (message: string, turns: number[], key?: string): Finding => ({
  kind: 'CORRECTION',
  pattern: 'SPIRALING',
  message,
  turns: uniq(turns),
  ...(key === undefined ? {} : { key }),
});
const clip = (s: string, n = 100) => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n)}…` : one;
};

/** Groups of indices whose items are linked by `similar`, largest first (single linkage). */
function clusters<T>(items: readonly T[], similar: (a: T, b: T) => boolean): number[][] {
  const parent = items.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  for (let i = 0; i < items.length; i++) for (let j = 0; j < i; j++) if (similar(items[i]!, items[j]!)) parent[find(i)] = find(j);
  const groups = new Map<number, number[]>();
  for (let i = 0; i < items.length; i++) groups.set(find(i), [...(groups.get(find(i)) ?? []), i]);
  return [...groups.values()].sort((a, b) => b.length - a.length);
}

export const rephrasedLookup: Detector = ({ turns, from }) => {
  const all = callsOf(turns);
  type Req = { turn: number; pos: number; text: string; tokens: Set<string> };
  const reqs: Req[] = [];
  all.forEach(({ turn, call }, pos) => {
    const text = requestText(call);
    if (!text) return;
    const tokens = contentTokens(text);
    if (tokens.size >= 3) reqs.push({ turn, pos, text, tokens });
  });
  if (reqs.length < LOOKUP_REPEAT) return null;
  let words: Array<Set<string>> | null = null; // the results' content words, read only when a group is big enough
  for (const group of clusters(reqs, (a, b) => jaccard(a.tokens, b.tokens) >= LOOKUP_SIMILAR)) {
    if (group.length < LOOKUP_REPEAT) break;
    const members = group.map((i) => reqs[i]!);
    const repeats = members.slice(1).filter((m) => m.turn >= from);
    if (repeats.length < LOOKUP_REPEAT - 2) continue;
    // Learned nothing: the answer is the same as one an earlier ask of the group got (Jaccard of
    // their content words ≥ 0.5), and it brought few words the window had not read before. What the
    // agent says after it does not count here: an orchestrator restates the unmet goal every round.
    const results = (words ??= all.map(({ call }) => contentTokens(call.result ?? '')));
    let fruitless = 0;
    for (const m of members.slice(1)) {
      const answer = results[m.pos]!;
      if (answer.size === 0) continue;
      const seen = new Set<string>();
      for (let p = 0; p < m.pos; p++) for (const t of results[p]!) seen.add(t);
      const sameAnswer = members.some((e) => e.pos < m.pos && jaccard(results[e.pos]!, answer) >= SAME_ANSWER);
      if (sameAnswer && novelty(answer, seen) < STALE_RESULT) fruitless++;
    }
    if (fruitless * 2 < members.length - 1) continue;
    const n = members.length;
    const worded = new Set(members.map((m) => m.text.replace(/\s+/g, ' ').trim().toLowerCase())).size > 1 ? ' in different words' : '';
    return spiral(
      `You have asked for the same lookup ${n} times${worded} ("${clip(members[0]!.text, 80)}" … "${clip(members[n - 1]!.text, 80)}") and learned nothing new. Change the approach: use a different source or tool, ask a narrower question, or say what is blocking you.`,
      members.filter((m) => m.turn >= from).map((m) => m.turn),
    );
  }
  return null;
};

export const unchangedStatus: Detector = ({ turns, from }) => {
  type Status = { turn: number; text: string; sentences: Array<Set<string>> };
  const statuses: Status[] = [];
  turns.forEach((t, i) => {
    const s = statusSentences(t.text);
    const sentences = s.map((x) => contentTokens(x)).filter((x) => x.size >= 3);
    if (sentences.length > 0) statuses.push({ turn: i, text: s[0]!, sentences });
  });
  if (statuses.length < STATUS_REPEAT) return null;
  // Two turns say the same thing when one of their "not found" sentences is nearly the same.
  const same = (a: Status, b: Status) => a.sentences.some((x) => b.sentences.some((y) => jaccard(x, y) >= STATUS_SIMILAR));
  for (const group of clusters(statuses, same)) {
    if (group.length < STATUS_REPEAT) break;
    const members = group.map((i) => statuses[i]!);
    const inEvidence = members.filter((m) => m.turn >= from);
    if (inEvidence.length < 2) continue;
    const first = members[0]!.turn;
    const last = members[members.length - 1]!.turn;
    const between = callsOf(turns).filter(({ turn }) => turn > first && turn <= last);
    const calls = between.length;
    if (calls < STATUS_CALLS) continue;
    // Failures whose errors change in between are someone fixing things one by one, whatever they say.
    const errors = new Set(
      between
        .filter(({ call }) => looksFailed(call))
        .map(({ call }) => errorSignature(call.result))
        .filter((e) => e !== null),
    );
    if (errors.size >= 2) continue;
    // And the calls in between read little that the window had not read before: trying sources
    // that each tell something new, while the goal is still unmet, is searching, not spiralling.
    const all = callsOf(turns);
    const seen = new Set<string>();
    let stale = 0;
    for (const { turn, call } of all) {
      const words = contentTokens(call.result ?? '');
      if (turn > first && turn <= last && words.size > 0 && novelty(words, seen) < STALE_RESULT) stale++;
      for (const w of words) seen.add(w);
    }
    if (stale * 2 < calls) continue;
    return spiral(
      `You have reported ${members.length} times that the same thing is still not found ("${clip(members[members.length - 1]!.text, 100)}"), with ${calls} tool calls in between that did not change it. Repeating the attempt will not find it: change the source or the method, or say that it cannot be found.`,
      inEvidence.map((m) => m.turn),
    );
  }
  return null;
};

/** An error that rejects the call itself, not a failure of the work it started. */
const INVALID =
  /\b(?:invalid|not (?:a )?valid|unknown (?:tool|command|function|action|argument|option|parameter)|unrecognized|unrecognised|no such (?:tool|command|function|file|option)|not found|does not exist|is not defined|syntax ?error|parse error|missing (?:required )?(?:argument|parameter|field|value)|unexpected (?:keyword )?argument|malformed|not (?:allowed|permitted|supported))\b/i;

export const repeatedInvalidCall: Detector = ({ turns, from }) => {
  if (turns.length < LONG_WINDOW) return null;
  const all = callsOf(turns);
  if (all.length < 2) return null;
  const a = all[all.length - 2]!;
  const b = all[all.length - 1]!;
  if (a.turn < from || b.turn < from) return null;
  if (!looksFailed(a.call) || !looksFailed(b.call)) return null;
  if (commandSignature(a.call) !== commandSignature(b.call)) return null;
  const errA = errorSignature(a.call.result) ?? outputSignature(a.call.result);
  const errB = errorSignature(b.call.result) ?? outputSignature(b.call.result);
  if (errA !== errB || !INVALID.test(b.call.result ?? '')) return null;
  return spiral(
    `You sent the same call twice in a row and it was rejected the same way both times (${clip(`${b.call.name} ${b.call.args ?? ''}`, 100)}: "${clip(errB, 100)}"). Sending it again unchanged cannot work: read the error and fix the call, or use another tool.`,
    [a.turn, b.turn],
    `${commandSignature(b.call)}\u0000${errB}`,
  );
};

const SEARCH_PROGRAM = /^(?:grep|egrep|fgrep|rg|ag|ack|git grep|find|fd|locate)$/;
const SEARCH_TOOL = /search|grep|find|glob|lookup/i;
const EMPTY_RESULT =
  /^\s*$|\bno (?:matches|results?|files?|occurrences?)(?: were)? found\b|\b(?:found )?0 (?:matches|results|files)\b|\bnothing (?:was )?found\b|\bdid not find\b|\bno such file\b/i;
const SEARCH_REPEAT = 4;

/** The term a code search looks for (`grep -rn 'parseWeek' src` → parseweek), or null if the call is not a search. */
export function searchTerm(call: Call): string | null {
  const v = jsonArgs(call.args ?? '');
  if (SEARCH_TOOL.test(call.name) && v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    for (const k of ['pattern', 'regex', 'query', 'name', 'search', 'term', 'q'])
      if (typeof o[k] === 'string' && (o[k] as string).trim()) return normTerm(o[k] as string);
    if (typeof o.command !== 'string') return null;
  }
  const cmd = commandText(call)
    .replace(/\s\d?>&\d|\s\d?>\s*\/dev\/null/g, ' ')
    .trim();
  if (/[|;&]|&&/.test(cmd.replace(/\\\|/g, ''))) return null; // a pipeline: what it found depends on the rest
  const words = cmd.match(/'[^']*'|"[^"]*"|\S+/g) ?? [];
  const prog = words[0] === 'git' ? `git ${words[1] ?? ''}` : (words[0] ?? '');
  if (!SEARCH_PROGRAM.test(prog)) return null;
  const rest = words.slice(prog.includes(' ') ? 2 : 1);
  if (prog === 'find' || prog === 'fd') {
    const i = rest.findIndex((w) => /^-i?(?:name|path|regex)$/.test(w));
    const term = i >= 0 ? rest[i + 1] : prog === 'fd' ? rest.find((w) => !w.startsWith('-')) : undefined;
    return term ? normTerm(term) : null;
  }
  const eIndex = rest.findIndex((w) => w === '-e' || w === '--regexp');
  const term = eIndex >= 0 ? rest[eIndex + 1] : rest.find((w) => !w.startsWith('-'));
  return term ? normTerm(term) : null;
}

/** A search term without quotes, globs, regex syntax or case: the name being looked for. */
function normTerm(t: string): string | null {
  const s = t
    .replace(/^['"]|['"]$/g, '')
    .replace(/\\[bswdBSWD]/g, ' ')
    .replace(/[^A-Za-z0-9_]+/g, ' ')
    .trim()
    .toLowerCase();
  return s.length >= 3 ? s : null;
}

export const repeatedEmptySearch: Detector = ({ turns, from }) => {
  const groups = new Map<string, Array<{ turn: number; call: Call }>>();
  const found = new Set<string>();
  for (const { turn, call } of callsOf(turns)) {
    if (call.result === undefined) continue; // an unreported result is not an empty one
    const term = searchTerm(call);
    if (!term) continue;
    if (!EMPTY_RESULT.test(call.result)) found.add(term);
    else if (turn >= from) groups.set(term, [...(groups.get(term) ?? []), { turn, call }]);
  }
  for (const [term, list] of groups) {
    if (list.length < SEARCH_REPEAT || found.has(term)) continue; // found somewhere in the window: the empty ones were narrower looks
    const ways = [...new Set(list.map(({ call }) => clip(commandText(call), 40)))].slice(0, 3).join('; ');
    return spiral(
      `You have searched for "${clip(term, 60)}" ${list.length} times in different ways (${ways}) and found nothing each time. It is not there under that name: search for what it does instead, or conclude that it does not exist and write it.`,
      list.map(({ turn }) => turn),
      term,
    );
  }
  return null;
};
