/**
 * Cheap, general signals that a window may hold a problem: the first tier of `tiered` sends a
 * window to the model when one of them crosses its threshold, even where the heuristic's detectors
 * (which must be precise: they speak alone under the offline default) stay silent. A triage must
 * miss nothing a model would catch, so these are deliberately loose and name no agent's phrasing:
 * repetition (the same or nearly the same call, request, result or reply again), failures, words
 * that bring nothing new, words that are not the task's, and (where turns carry its fingerprint)
 * a working tree that stays the same while calls fail.
 *
 * Words are `contentTokens` (heuristic/similarity.ts): lower case, stopwords, numbers and ids out,
 * crudely stemmed. "Nearly the same" is a token-set Jaccard of at least NEAR; "the same" is the
 * same text with case, whitespace and digits ignored (heuristic/normalize.ts).
 */
import type { Turn } from '../contract/schemas.js';
import { commandSignature, looksFailed, textSignature } from './heuristic/normalize.js';
import { contentTokens, jaccard } from './heuristic/similarity.js';
import { treeStreak } from './tree.js';

/** Two texts whose word sets overlap this much (Jaccard) say the same thing in other words. */
export const NEAR = 0.5;
/** Texts with fewer content words than this are too short to compare by their words. */
export const MIN_WORDS = 4;

/** What the signals measure on one window (the evidence turns, with the turns before as context). */
export interface TriageMeasures {
  /** Tool calls that repeat an earlier call of the window: the same tool with the same or nearly the same arguments. */
  repeatedCalls: number;
  /** Turns that repeat an earlier turn: their text, or one of their calls (the union of the two above, by turn). */
  repeatedTurns: number;
  /** Failing tool calls (`ok: false`, or a result that reads like a failure). */
  failures: number;
  /** The longest run of failing calls in a row. */
  failureStreak: number;
  /** Turns whose text says again, in the same or other words, what an earlier turn of the window said. */
  repeatedTexts: number;
  /** The most times replies without a tool call say the same words in the same order (case, punctuation, whitespace and digits aside; no words: not counted). */
  sameReply: number;
  /** Share of the newest half's words that no earlier turn of the window used (1: all new). */
  novelty: number;
  /** Share of the task's words the newest half uses; null when the task or the half has too few words. */
  taskOverlap: number | null;
  /** Evidence turns measured. */
  turns: number;
  /** Turns with tool calls since the working tree last changed (judgement/tree.ts); 0 when no turn carries a fingerprint. */
  treeStillTurns: number;
  /** Failing tool calls since the working tree last changed. */
  treeStillFailures: number;
}

interface Seen {
  tokens: Set<string>;
  exact: string;
}

interface Item {
  /** Only items of one group are compared (a tool's calls with its own calls). */
  group: string;
  /** The item up to noise; '' (nothing to compare) never repeats. */
  exact: string;
  tokens: Set<string>;
  /** Index of the item's turn. */
  turn: number;
}

/** The turns of `items` that repeat an earlier item of their group: the same up to noise, or nearly the same words. */
function repeats(items: readonly Item[]): number[] {
  const earlier = new Map<string, Seen[]>();
  const out: number[] = [];
  for (const it of items) {
    const prev = earlier.get(it.group) ?? [];
    const near = (p: Seen) => it.tokens.size >= MIN_WORDS && p.tokens.size >= MIN_WORDS && jaccard(p.tokens, it.tokens) >= NEAR;
    if (it.exact !== '' && prev.some((p) => p.exact === it.exact || near(p))) out.push(it.turn);
    prev.push({ tokens: it.tokens, exact: it.exact });
    earlier.set(it.group, prev);
  }
  return out;
}

/** A reply's words in order: a text signature with punctuation gone ("Done. Anything else?" = "done! anything else"). */
export const replyWords = (signature: string): string => signature.replace(/[^\p{L}\p{N}#]+/gu, ' ').trim();

function turnWords(t: Turn): Set<string> {
  const out = contentTokens(t.text);
  for (const c of t.toolCalls ?? []) {
    for (const w of contentTokens(c.args ?? '')) out.add(w);
    for (const w of contentTokens(c.result ?? '')) out.add(w);
  }
  return out;
}

/** The measures of one window; `from` is the index of its first evidence turn. Pure. */
export function measureWindow(task: string, turns: readonly Turn[], from = 0): TriageMeasures {
  const evidence = (i: number) => i >= from;
  const calls = turns.flatMap((t, turn) => (t.toolCalls ?? []).map((call) => ({ call, turn })));
  const callRepeats = repeats(
    calls.map(({ call, turn }) => ({ group: call.name, exact: commandSignature(call), tokens: contentTokens(call.args ?? ''), turn })),
  );
  const texts = turns.map((t, turn) => ({ group: '', exact: textSignature(t.text), tokens: contentTokens(t.text), turn }));
  const textRepeats = repeats(texts);
  let failures = 0;
  let streak = 0;
  let failureStreak = 0;
  for (const { call, turn } of calls) {
    if (!evidence(turn)) continue;
    streak = looksFailed(call) ? streak + 1 : 0;
    if (streak) failures++;
    failureStreak = Math.max(failureStreak, streak);
  }
  const replies = new Map<string, number>();
  let sameReply = 0;
  for (const t of texts) {
    // A reply that does nothing but talk: one with calls is judged by its calls (a poll may say "checking again" each time).
    if (!evidence(t.turn) || (turns[t.turn]!.toolCalls ?? []).length > 0) continue;
    const words = replyWords(t.exact);
    if (words === '') continue;
    const k = (replies.get(words) ?? 0) + 1;
    replies.set(words, k);
    sameReply = Math.max(sameReply, k);
  }
  // The newest half of the evidence turns (at least one), against every turn before it.
  const count = Math.max(0, turns.length - from);
  const half = turns.length - Math.ceil(count / 2);
  const before = new Set<string>();
  const newest = new Set<string>();
  turns.forEach((t, i) => {
    for (const w of turnWords(t)) (i < half ? before : newest).add(w);
  });
  let fresh = 0;
  for (const w of newest) if (!before.has(w)) fresh++;
  const taskWords = contentTokens(task, 8_000);
  let used = 0;
  for (const w of taskWords) if (newest.has(w)) used++;
  const inEvidence = (xs: number[]) => xs.filter(evidence);
  // The working tree (hooked and driven agents): the evidence turns since it last changed.
  const still = treeStreak(turns);
  let treeStillTurns = 0;
  let treeStillFailures = 0;
  if (still)
    for (let i = Math.max(still.since, from); i < turns.length; i++) {
      const tcs = turns[i]!.toolCalls ?? [];
      if (tcs.length) treeStillTurns++;
      treeStillFailures += tcs.filter(looksFailed).length;
    }
  return {
    repeatedCalls: inEvidence(callRepeats).length,
    repeatedTexts: inEvidence(textRepeats).length,
    repeatedTurns: new Set(inEvidence([...callRepeats, ...textRepeats])).size,
    failures,
    failureStreak,
    sameReply,
    novelty: newest.size === 0 ? 0 : fresh / newest.size,
    taskOverlap: taskWords.size < 8 || newest.size < MIN_WORDS ? null : used / taskWords.size,
    turns: count,
    treeStillTurns,
    treeStillFailures,
  };
}

/** At least this many evidence turns repeat an earlier turn (a third of a full window of 20). */
export const REPEATED_TURNS = 6;
/** The same reply text this many times. */
export const SAME_REPLY = 3;
/** This many failing calls in a row. */
export const FAILURE_STREAK = 3;
/** Under this share of the newest half's words are new. */
export const LOW_NOVELTY = 0.2;
/** The newest half uses under this share of the task's words (offTask's bound, on the newest half alone). */
export const LOW_TASK_OVERLAP = 0.1;
/** Novelty and task overlap need this many evidence turns (a half of at least two). */
export const MIN_TURNS = 3;
/** This many evidence turns of tool calls with the working tree unchanged ... */
export const TREE_STILL_TURNS = 5;
/** ... and at least this many of their calls failing. */
export const TREE_STILL_FAILURES = 2;

/**
 * The signals that cross their thresholds, in words (empty: none). Each alone sends the window to
 * the model; none of them is a verdict.
 */
export function triageSignals(m: TriageMeasures): string[] {
  const out: string[] = [];
  if (m.repeatedTurns >= REPEATED_TURNS)
    out.push(`${m.repeatedTurns} turns repeat an earlier one (${m.repeatedCalls} calls, ${m.repeatedTexts} texts the same or nearly the same)`);
  if (m.sameReply >= SAME_REPLY) out.push(`the same reply ${m.sameReply} times`);
  if (m.failureStreak >= FAILURE_STREAK) out.push(`${m.failureStreak} failing calls in a row`);
  if (m.turns >= MIN_TURNS && m.novelty < LOW_NOVELTY) out.push(`little new: ${Math.round(m.novelty * 100)} % of the newest turns' words are new`);
  if (m.turns >= MIN_TURNS && m.taskOverlap !== null && m.taskOverlap < LOW_TASK_OVERLAP)
    out.push(`off the task's words: the newest turns use ${Math.round(m.taskOverlap * 100)} % of them`);
  if (m.treeStillTurns >= TREE_STILL_TURNS && m.treeStillFailures >= TREE_STILL_FAILURES)
    out.push(`the working tree unchanged over ${m.treeStillTurns} turns of tool calls, ${m.treeStillFailures} of the calls failing`);
  return out;
}
