/**
 * SPIRALING from the agent's own words: admittedLoop. The agent says plainly, in two or more
 * turns of the window, that it is going round in circles: "we are stuck in a loop", "we have been
 * repeatedly scrolling the same page without success", "I keep getting the same error and it is
 * not working". An orchestrator that keeps a progress ledger writes this about itself; so does a
 * coding agent that notices it is retrying the same fix.
 *
 * One sentence admits a loop when it says so outright ("in a loop", "round in circles"), or when
 * it says the agent repeats something (repeatedly, again and again, keep getting, repetitive …)
 * and, in the same sentence, that this gets nowhere (without success, without finding, no
 * progress, stuck, not working, to no avail …). It does not count when it is:
 * - negated: "we are not in a loop", "this hasn't been repeated without progress";
 * - hedged: "we may be approaching a loop", "there is a risk of repeating", "signs of a loop",
 *   "to avoid / break the loop" (a plan, not an admission);
 * - qualified: "…repeated attempts, but a new service is now in progress".
 * Nor does a test-fix loop whose errors change (two or more different errors among the failing
 * calls from just before the first admission to the last): that is progress, whatever the agent
 * says about it. Only the agent's own text is read, never tool results (a web page may well say "loop"). The
 * turns must be evidence turns; one admission alone is not enough (a passing remark), and a plan
 * such as "let me repeat the test" is no admission: it says nothing about getting nowhere.
 */
import { errorSignature, looksFailed } from './normalize.js';
import { callsOf, uniq, type Detector, type Finding } from './types.js';

const ADMIT_TURNS = 2;

const LOOP =
  /\b(?:stuck|caught|trapped|are|am|is|been|be) in (?:a|an endless|an infinite|the same) (?:\w+ )?loop\b|\b(?:going|go|goes|run|running|went) (?:round|around) in circles\b/i;
const REPEAT =
  /\b(?:repeat(?:ing|ed|edly)|again and again|over and over|keep (?:getting|hitting|trying|running into|doing|coming back)|kept (?:getting|hitting|trying|running into)|repetitive|the same \w+(?: \w+)? (?:again|repeatedly|each time|every time))\b/i;
const FUTILE =
  /\b(?:without (?:success|progress|any progress|results?|finding|getting|making|achieving|completing|pinpointing|obtaining|locating|extracting)|no (?:progress|success|new information)|not (?:making|yielding|getting|providing|finding|leading)|(?:isn't|is not|are not|aren't|doesn't|does not) (?:work|working|help|helping)|unsuccessful(?:ly)?|in vain|to no avail|stuck|stalled)\b/i;
const NEGATED = /\b(?:not|no|never|nor|without)\b|n't\b/i;
const HEDGED = /\b(?:may|might|could|would|potential(?:ly)?|risk|approaching|seems?|appears?|signs?|suggest(?:s|ing)?|possibl[ey]|avoid|prevent|break|if)\b/i;
const QUALIFIED = /\b(?:but|however|although|though|yet)\b/i;

/** Whether one sentence of the agent's text admits, plainly, that it is looping (see the file comment). */
export function admitsLoop(sentence: string): boolean {
  let m = LOOP.exec(sentence);
  if (!m) {
    m = REPEAT.exec(sentence);
    if (!m || !FUTILE.test(sentence)) return false;
  }
  if (NEGATED.test(sentence.slice(Math.max(0, m.index - 40), m.index))) return false;
  return !HEDGED.test(sentence) && !QUALIFIED.test(sentence);
}

/** The sentences of `text` that admit a loop (at most `max` characters read). */
export function loopAdmissions(text: string, max = 8_000): string[] {
  const out: string[] = [];
  for (const m of text.slice(0, max).matchAll(/[^.!?\n]+/g)) if (admitsLoop(m[0])) out.push(m[0].trim());
  return out;
}

const clip = (s: string, n = 120) => {
  const one = s
    .replace(/\s+/g, ' ')
    .replace(/^["'\s:]*(?:reason["']?\s*:\s*["']?)?/i, '')
    .trim();
  return one.length > n ? `${one.slice(0, n)}…` : one;
};

export const admittedLoop: Detector = ({ turns, from }) => {
  const admitted: Array<{ turn: number; sentence: string }> = [];
  turns.forEach((t, i) => {
    if (i < from || !t.text) return;
    const s = loopAdmissions(t.text);
    if (s.length > 0) admitted.push({ turn: i, sentence: s[0]! });
  });
  if (admitted.length < ADMIT_TURNS) return null;
  const last = admitted[admitted.length - 1]!;
  // A test-fix loop whose errors change is progress, whatever the agent says about it.
  const between = callsOf(turns).filter(({ turn, call }) => turn >= admitted[0]!.turn - 2 && turn <= last.turn && looksFailed(call));
  const errors = new Set(between.map(({ call }) => errorSignature(call.result)).filter((e) => e !== null));
  if (errors.size >= 2) return null;
  const finding: Finding = {
    kind: 'CORRECTION',
    pattern: 'SPIRALING',
    message: `You have said ${admitted.length} times yourself that you are going round in circles ("${clip(last.sentence)}"). Believe it: stop repeating the attempt, change the method or the source, or say what is blocking you.`,
    turns: uniq(admitted.map((a) => a.turn)),
  };
  return finding;
};
