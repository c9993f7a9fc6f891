/**
 * The verdict parser. An evaluator answers with free text; the verdict is the first line that
 * reads `OK`, `CORRECTION <msg>`, `THINK_DEEPER <msg>` or `ESCALATION <msg>`, optionally tagged
 * with a pattern (`CORRECTION SPIRALING: msg`, `CORRECTION [DRIFT] msg`, `SPIRALING CORRECTION msg`).
 * Tolerates code fences, bullets, bold markers, lower case and trailing noise. Anything else is
 * unparseable (null), which the supervisor counts as a skipped evaluation.
 */
import { PATTERNS, type Pattern, type Verdict, type VerdictKind } from './schemas.js';
import { truncate, MAX_WHISPER_TEXT } from './limits.js';

const KIND_RE = /^(OK|CORRECTION|THINK[_ ]DEEPER|ESCALATION)\b/i;
// `(?![A-Za-z0-9_])`: a pattern is a whole word ("Drifting away" is a message, not DRIFT + "ing away").
const PATTERN_RE = new RegExp(`^[\\[(]?(${PATTERNS.join('|')})(?![A-Za-z0-9_])[\\])]?\\s*[:\\-–—]?\\s*`, 'i');

function cleanLine(raw: string): string {
  return raw
    .trim()
    .replace(/^```\w*$/, '') // fence lines
    .replace(/^(?:[-*>•]|\d+[.)])\s+/, '') // bullets, quotes, numbering
    .replace(/^(?:verdict|answer|result)\s*[:\-]\s*/i, '')
    .replace(/^[*_`"']+/, '')
    .trim();
}

function normaliseKind(word: string): VerdictKind {
  const upper = word.toUpperCase().replace(' ', '_');
  return upper as VerdictKind;
}

function takePattern(rest: string): { pattern: Pattern | null; rest: string } {
  const m = PATTERN_RE.exec(rest);
  if (!m) return { pattern: null, rest };
  return { pattern: m[1]!.toUpperCase() as Pattern, rest: rest.slice(m[0].length) };
}

/**
 * Strip separators and stray markup (a bold closer, a wrapping backtick or quote) from the ends of
 * a message. A marker run is stray only when its character does not occur in the rest of the
 * message: "run `npm test`" and 'say "hi"' keep their closers, "msg**" loses its.
 */
function tidyMessage(msg: string): string {
  let m = msg.trim().replace(/^[:\-–—\s]+/, '');
  const lead = /^[*_`"']+/.exec(m)?.[0] ?? '';
  if (lead && ![...new Set(lead)].some((c) => m.slice(lead.length).includes(c))) m = m.slice(lead.length);
  const tail = /[*_`"']+$/.exec(m)?.[0] ?? '';
  if (tail && ![...new Set(tail)].some((c) => m.slice(0, m.length - tail.length).includes(c))) m = m.slice(0, m.length - tail.length);
  return truncate(m.replace(/^[:\-–—\s]+/, '').trim(), MAX_WHISPER_TEXT);
}

/** Parse one line; null when it is not a verdict line. */
export function parseVerdictLine(raw: string): Verdict | null {
  let line = cleanLine(raw);
  if (!line) return null;
  // A pattern may come first: "SPIRALING CORRECTION retry ...".
  let lead = takePattern(line);
  if (lead.pattern) line = lead.rest;
  const m = KIND_RE.exec(line);
  if (!m) return null;
  const kind = normaliseKind(m[1]!);
  // Upper case is the verdict form. A lower- or mixed-case kind word is prose ("Escalation is not
  // needed.", "Ok, let me look") unless the line still reads as a verdict: a bare "ok", or a kind
  // followed by a separator or a pattern tag ("correction: …", "correction spiraling: …").
  const shouted = m[1] === m[1]!.toUpperCase();
  let rest = line.slice(m[0].length).replace(/^[*_`]+/, '');
  if (kind === 'OK') {
    // "OK" alone, or "OK - looks fine" / "OK." — but not "Okay" or "OK-ish words" glued on.
    if (rest && !/^[\s.:,;!\-–—)]/.test(rest)) return null;
    if (!shouted && !/^[\s.!]*$/.test(rest)) return null;
    return { kind, pattern: null, message: tidyMessage(rest) };
  }
  const tagged = takePattern(rest.replace(/^\s*[:\-–—]?\s*/, ''));
  if (!shouted && !lead.pattern && !tagged.pattern && !/^\s*[:\-–—]/.test(rest)) return null;
  const pattern = lead.pattern ?? tagged.pattern;
  const message = tidyMessage(tagged.rest);
  if (!message) return null; // non-OK verdicts must say what is wrong
  return { kind, pattern, message };
}

/** The first verdict line of an evaluator's answer, or null if there is none. */
export function parseVerdict(text: string | null | undefined): Verdict | null {
  if (!text) return null;
  for (const line of text.split(/\r?\n/)) {
    const v = parseVerdictLine(line);
    if (v) return v;
  }
  return null;
}

/** Render a verdict back as the one-line wire form. */
export function formatVerdict(v: Verdict): string {
  if (v.kind === 'OK') return 'OK';
  return `${v.kind}${v.pattern ? ` ${v.pattern}:` : ''} ${v.message}`;
}
