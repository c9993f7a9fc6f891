/**
 * STALLING detectors.
 *
 * - idle: an idle check finds the agent silent, after no evidence turn (the silence is the
 *   evidence) or after an evidence turn without substance.
 * - emptyTail: the last three evidence turns have no tool call and no substance (short or filler).
 * - promiseWithoutAction: three consecutive evidence turns that announce an action ("I'll run the
 *   tests now", "Let me fix the import") and make no tool call (the monologue that OpenHands and
 *   Gemini CLI both watch for).
 * - noProgress: six or more evidence turns that touch no file the window had not touched and get
 *   no output the window had not seen, although they make tool calls.
 */
import { commandSignature, commandText, outputSignature } from './normalize.js';
import { uniq, type Detector, type Finding } from './types.js';
import type { Turn } from '../../contract/schemas.js';

const STALL_TURNS = 3;
const PROMISE_TURNS = 3;
const NO_PROGRESS_TURNS = 6;

const FILLER =
  /^(?:ok(?:ay)?|sure|hmm+|thinking|working(?: on it)?|let me (?:think|check|look|see)|i(?:'ll| will) (?:now |continue|try|look|check)|continuing|still working|one moment|please wait|\.+)\b/i;
const PROMISE =
  /\b(?:i(?:'ll| will| am going to|'m going to)|let me|let's|next,? i(?:'ll| will)?|now i(?:'ll| will)?|going to)\b[^.!?\n]{0,80}\b(?:run|fix|edit|update|implement|write|add|change|try|apply|create|remove|refactor|rerun|re-run|test|build|install|patch|commit)\b/i;

export function insubstantial(t: Turn): boolean {
  if ((t.toolCalls ?? []).length > 0) return false;
  const text = t.text.trim();
  return text.length < 40 || (FILLER.test(text) && text.length < 160);
}

const stalling = (message: string, turns: number[]): Finding => ({ kind: 'CORRECTION', pattern: 'STALLING', message, turns: uniq(turns) });

export const idle: Detector = ({ turns, from, reason }) => {
  if (reason !== 'idle') return null;
  if (turns.length <= from) return stalling('You have gone quiet without finishing. Restate the goal, name the blocker, and take the next concrete step.', []);
  const last = turns.length - 1;
  if (insubstantial(turns[last]!))
    return stalling('You have gone quiet without finishing. Restate the goal, name the blocker, and take the next concrete step.', [last]);
  return null;
};

export const emptyTail: Detector = ({ turns, from }) => {
  const start = Math.max(from, turns.length - STALL_TURNS);
  const tail = turns.slice(start);
  if (tail.length >= STALL_TURNS && tail.every(insubstantial))
    return stalling(
      `Your last ${tail.length} turns produced no tool calls and no substance. Name the next concrete command or edit and run it now.`,
      tail.map((_, k) => start + k),
    );
  return null;
};

export const promiseWithoutAction: Detector = ({ turns, from }) => {
  let run: number[] = [];
  for (let i = from; i < turns.length; i++) {
    const t = turns[i]!;
    if ((t.toolCalls ?? []).length === 0 && PROMISE.test(t.text)) run.push(i);
    else run = [];
    if (run.length >= PROMISE_TURNS)
      return stalling(
        `You have announced an action in ${run.length} turns in a row without making a single tool call. Stop describing it: run the command or make the edit now.`,
        run,
      );
  }
  return null;
};

const FILE_ARG = /(?:^|[\s"'=:(])((?:\.{0,2}\/)?(?:[\w@.-]+\/)*[\w@-]+\.[A-Za-z0-9]{1,8})\b/g;

function filesOf(t: Turn): string[] {
  const out: string[] = [];
  for (const c of t.toolCalls ?? []) for (const m of `${c.args ?? ''} ${commandText(c)}`.matchAll(FILE_ARG)) out.push(m[1]!);
  return out;
}

export const noProgress: Detector = ({ turns, from }) => {
  const evidence = turns.slice(from);
  if (evidence.length < NO_PROGRESS_TURNS || evidence.some((t) => (t.toolCalls ?? []).length === 0)) return null;
  const files = new Set<string>();
  const outputs = new Set<string>();
  const calls = new Set<string>();
  turns.slice(0, from).forEach((t) => {
    for (const f of filesOf(t)) files.add(f);
    for (const c of t.toolCalls ?? []) {
      outputs.add(outputSignature(c.result));
      calls.add(commandSignature(c));
    }
  });
  let stale = 0;
  for (let i = from; i < turns.length; i++) {
    const t = turns[i]!;
    const fresh = filesOf(t).some((f) => !files.has(f)) || (t.toolCalls ?? []).some((c) => !outputs.has(outputSignature(c.result)));
    for (const f of filesOf(t)) files.add(f);
    for (const c of t.toolCalls ?? []) {
      outputs.add(outputSignature(c.result));
      calls.add(commandSignature(c));
    }
    if (!fresh && i > from) stale++;
  }
  if (stale >= NO_PROGRESS_TURNS - 1)
    return stalling(
      `${stale} turns in a row touched no new file and got no new output. You are busy but not progressing: say what you are trying to learn, then take a different step.`,
      evidence.map((_, k) => from + k),
    );
  return null;
};
