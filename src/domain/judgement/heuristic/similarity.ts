/**
 * Similarity of natural-language text, for spirals whose attempts are reworded rather than
 * repeated: the same search or sub-agent request in other words, the same "not found yet" status
 * written again, results that bring no new words.
 *
 * - `contentTokens`: the words of a text that carry meaning: lower case, without URLs, ids, hashes,
 *   numbers, punctuation and common English stopwords, each cut to a crude stem (plural and -ing /
 *   -ed endings off, then at most 6 letters), so "searching for releases" and "search the release"
 *   share their words.
 * - `jaccard`: |A ∩ B| / |A ∪ B| of two token sets.
 * - `requestText`: the natural-language request a tool call carries, if any: a query or task field of
 *   JSON arguments, the quoted strings of a code blob (`web_search(query="…")`), or arguments that
 *   are plain prose (a sub-agent instruction). Shell commands, file paths and ID lookups
 *   (`{"order_id": "#W123"}`) carry none: those are compared by `commandSignature` instead.
 * - `statusSentences`: the sentences of a text in which the agent says that something is still not
 *   found, not known or not possible ("has not yet been identified", "I could not find", "still
 *   unable to").
 */
import { jsonArgs, type Call } from './types.js';

const STOPWORDS = new Set(
  `a an the and or but if then else of to in on at by for with from into onto about as is are was were be been being do does did done
  have has had having it its this that these those there here which who whom whose what when where why how all any each every some such
  no not nor only own same so than too very can could should would will shall may might must i me my we our you your he she they them
  their his her us also just more most other again further once please let lets out up down over under via per within without through
  while am get got make made one ones use using used`
    .split(/\s+/)
    .filter(Boolean),
);

const URL_RE = /\b(?:https?|ftp|file):\/\/\S+|\bwww\.\S+|\b[\w.+-]+@[\w-]+\.[\w.]+/gi;
const ID_RE = /\b[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b|\b\w*\d\w*\b/gi;

/** A crude stem: enough for "search/searching/searched" and "release/releases" to meet. */
export function stem(word: string): string {
  let w = word;
  if (w.length > 5 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  if (w.length > 4 && w.endsWith('e')) w = w.slice(0, -1);
  return w.slice(0, 6);
}

export function contentTokens(text: string, max = 4_000): Set<string> {
  const s = text.slice(0, max).toLowerCase().replace(URL_RE, ' ').replace(ID_RE, ' ');
  const out = new Set<string>();
  for (const m of s.matchAll(/[a-z][a-z'’-]*[a-z]/g)) {
    const w = m[0].replace(/['’]s$/, '').replace(/['’-]/g, '');
    if (w.length < 3 || STOPWORDS.has(w)) continue;
    out.add(stem(w));
  }
  return out;
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let both = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const x of small) if (large.has(x)) both++;
  return both / (a.size + b.size - both);
}

/** Share of `tokens` not in `seen` (1 when `tokens` is empty: nothing to judge by). */
export function novelty(tokens: ReadonlySet<string>, seen: ReadonlySet<string>): number {
  if (tokens.size === 0) return 1;
  let fresh = 0;
  for (const t of tokens) if (!seen.has(t)) fresh++;
  return fresh / tokens.size;
}

/** JSON fields that hold a request in words rather than an identifier. */
const REQUEST_KEYS = [
  'query',
  'q',
  'question',
  'task',
  'request',
  'prompt',
  'instruction',
  'instructions',
  'search',
  'search_query',
  'search_term',
  'message',
  'goal',
  'description',
  'text',
  'input',
];

/** At least `n` words and mostly words: prose, not a command line, a path or code. */
function isProse(s: string, n = 4): boolean {
  const parts = s.replace(URL_RE, ' ').trim().split(/\s+/).filter(Boolean);
  if (parts.length < n) return false;
  const words = parts.filter((p) => /^[("'“‘]?[A-Za-z][A-Za-z'’-]*[)"'”’.,:;!?]*$/.test(p)).length;
  return words >= n && words / parts.length >= 0.6;
}

/** A string literal passed to a function whose name reads as a lookup, or as a request-like keyword argument. */
const LOOKUP_ARG =
  /(?:\b\w*(?:search|query|ask|agent|lookup|browse|find|question|google|bing|wiki)\w*\s*\(\s*(?:\w+\s*=\s*)?|\b(?:query|q|question|task|request|prompt|instruction|search_query)\s*=\s*)[rfbu]?("""|'''|"|')((?:(?!\1)[^\\]|\\.){8,2000}?)\1/gi;

const CODE = /[{};]|=\s*\S|\bdef |\bimport |\breturn\b|\(\s*\)|^\s*[$#>]/m;

/** The natural-language request of a call, or null when it carries none (see the file comment). */
export function requestText(call: Call): string | null {
  const raw = (call.args ?? '').slice(0, 4_000);
  if (!raw.trim()) return null;
  const v = jsonArgs(raw);
  if (typeof v === 'string') return isProse(v) ? v : null;
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const parts = REQUEST_KEYS.map((k) => o[k]).filter((x): x is string => typeof x === 'string' && isProse(x));
    return parts.length ? parts.join('\n') : null;
  }
  if (v !== undefined) return null;
  if (CODE.test(raw)) {
    // Code: the prose handed to a lookup (`web_search("…")`, `search_agent(task="…")`,
    // `inspect(question="…")`); other strings of the code (prints, paths) are not requests.
    const quoted: string[] = [];
    for (const m of raw.matchAll(LOOKUP_ARG)) if (isProse(m[2]!)) quoted.push(m[2]!);
    return quoted.length ? quoted.join('\n') : null;
  }
  return isProse(raw, 5) ? raw : null;
}

/** Still not found, not known or not possible: the agent's own word that a step learned nothing. */
export const NOT_FOUND =
  /\b(?:(?:has|have|had|was|were|is|are)(?:n't| not)(?: yet)?(?: been)? (?:able to|found|identified|located|obtained|determined|retrieved|confirmed|extracted|pinpointed|provided|accessed|transcribed|verified)|(?:not|never) (?:yet )?(?:been )?(?:found|identified|located|obtained|determined|retrieved|pinpointed|able to)|(?:unable|failed) to (?:find|locate|access|get|retrieve|obtain|identify|determine|extract|open|load|transcribe)|could(?:n't| not) (?:find|locate|access|get|retrieve|obtain|identify|determine|extract|open|load)|did(?:n't| not) (?:provide|yield|reveal|find|return|contain|show|give)|yet to (?:be )?(?:find|found|identif\w*|determin\w*|locat\w*|obtain\w*|retriev\w*)|no (?:relevant |specific |useful |new )?(?:results?|information|data|matches|entries) (?:was |were )?(?:found|returned|available)|still (?:need|unable|not|missing|no |cannot|can't|haven't|hasn't|lack))/i;

/** The sentences of `text` that say something is still not found (at most `max` characters read). */
export function statusSentences(text: string, max = 4_000): string[] {
  const out: string[] = [];
  for (const m of text.slice(0, max).matchAll(/[^.!?\n]+/g)) if (NOT_FOUND.test(m[0])) out.push(m[0].trim());
  return out;
}
