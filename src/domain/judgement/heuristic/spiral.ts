/**
 * SPIRALING detectors. Each counts only evidence turns (index ≥ `from`); context turns may only
 * complete a cycle that the evidence turns continue.
 *
 * - repeatedFailure: three or more failing attempts that are one approach: the same command up to
 *   noise (numbers, temp paths, flag order, output trimming), or the same error under different
 *   commands. A failing call that later succeeds with the same signature is waiting, not a spiral
 *   (a server that comes up on the fourth `curl`). Failures whose errors change are progress.
 * - repeatedObservation: the same call with the same output four or more times (re-reading an
 *   unchanged file, re-listing a directory). Polls whose output changes are never counted, since the
 *   output is part of the key; identical "still running" polls count only from eight on.
 * - repeatedMessage: the same text three or more times in turns without a tool call (turns with
 *   calls are judged by their calls: a poll may well say "checking again" each time; so is a text
 *   that the next calls carry as their arguments, such as an instruction to a sub-agent), with
 *   nothing new said between the first and the last time (a text said only once: between repeats
 *   it shows the agent coming back to something, such as a page it opens again, not looping).
 * - pingPong: calls alternating A-B-A-B-A-B (or A-B-C-A-B-C) with identical outputs.
 * - editRevert: an edit undone and redone (apply, revert, apply) on the same file.
 */
import { commandSignature, errorSignature, looksFailed, outputSignature, textSignature } from './normalize.js';
import { callsOf, jsonArgs, uniq, type Call, type Detector, type Finding } from './types.js';
import type { Turn } from '../../contract/schemas.js';

const FAIL_REPEAT = 3;
const OBSERVATION_REPEAT = 4;
const POLL_REPEAT = 8;
const TEXT_REPEAT = 3;
const WAITING = /\b(?:running|pending|queued|in[ _-]?progress|waiting|starting|building|deploying|not ready|still)\b/i;

const spiral = (message: string, turns: number[], key?: string): Finding => ({
  kind: 'CORRECTION',
  pattern: 'SPIRALING',
  message,
  turns: uniq(turns),
  ...(key === undefined ? {} : { key }),
});
const clip = (s: string, n = 120) => (s.length > n ? `${s.slice(0, n)}…` : s);

export const repeatedFailure: Detector = ({ turns, from }) => {
  const all = callsOf(turns);
  type Attempt = { turn: number; call: Call; cmd: string; err: string | null; pos: number };
  const attempts: Attempt[] = [];
  all.forEach(({ turn, call }, pos) => {
    if (turn >= from && looksFailed(call)) attempts.push({ turn, call, cmd: commandSignature(call), err: errorSignature(call.result), pos });
  });
  const resolved = (a: Attempt) => all.some((x, pos) => pos > a.pos && !looksFailed(x.call) && commandSignature(x.call) === a.cmd);
  const groups = new Map<string, Attempt[]>();
  for (const a of attempts) {
    if (resolved(a)) continue;
    // One approach: the same error (under any command), else the same command (no readable error).
    const byCommand = `cmd\u0000${a.cmd}`;
    groups.set(byCommand, [...(groups.get(byCommand) ?? []), a]);
    if (a.err) groups.set(`err\u0000${a.err}`, [...(groups.get(`err\u0000${a.err}`) ?? []), a]);
  }
  let best: { key: string; list: Attempt[] } | null = null;
  for (const [key, list] of groups) {
    if (list.length < FAIL_REPEAT) continue;
    if (key.startsWith('cmd')) {
      // The same command failing with errors that change each time is someone fixing things one by one.
      const errs = list.map((a) => a.err).filter((e): e is string => e !== null);
      const counts = new Map<string, number>();
      for (const e of errs) counts.set(e, (counts.get(e) ?? 0) + 1);
      const top = Math.max(0, ...counts.values());
      const unread = list.length - errs.length;
      if (top + unread < FAIL_REPEAT) continue;
    }
    if (!best || list.length > best.list.length) best = { key, list };
  }
  if (!best) return null;
  const { key, list } = best;
  const n = list.length;
  const raws = new Set(list.map((a) => `${a.call.name} ${a.call.args ?? ''}`));
  const first = list[0]!.call;
  const what = clip(first.args ? `${first.name} ${first.args}` : first.name);
  const evidence = list.map((a) => a.turn);
  // The finding's key: the group's whole signature (the full normalised command, or the error), not
  // the clipped first attempt the message quotes, and no count, so a growing spiral keeps it.
  if (raws.size === 1)
    return spiral(
      `You have run the same failing call ${n} times (${what}). Stop retrying it: read the error, change the approach, or ask for help.`,
      evidence,
      key,
    );
  if (key.startsWith('cmd'))
    return spiral(
      `You have retried the same failing command ${n} times with only cosmetic changes (${what}). Read the error and change the approach.`,
      evidence,
      key,
    );
  return spiral(
    `The same error came back ${n} times under different commands ("${clip(key.slice(4), 100)}"). Rewording the command does not fix it: find the cause.`,
    evidence,
    key,
  );
};

export const repeatedObservation: Detector = ({ turns, from }) => {
  const groups = new Map<string, { turns: number[]; call: Call }>();
  for (const { turn, call } of callsOf(turns, from)) {
    if (looksFailed(call)) continue;
    const key = `${commandSignature(call)}\u0000${outputSignature(call.result)}`;
    const g = groups.get(key) ?? { turns: [], call };
    g.turns.push(turn);
    groups.set(key, g);
  }
  for (const [key, { turns: ts, call }] of groups) {
    const limit = WAITING.test(call.result ?? '') ? POLL_REPEAT : OBSERVATION_REPEAT;
    if (ts.length >= limit)
      return spiral(
        `You have made the same call ${ts.length} times and got the same output each time (${clip(`${call.name} ${call.args ?? ''}`.trim())}). Nothing changes between attempts: act on what it shows, or try something else.`,
        ts,
        key,
      );
  }
  return null;
};

/**
 * Whether the text of turn `i` is handed on as the arguments of a call in the next few turns: an
 * orchestrator's instruction that a sub-agent then receives. Its repetition is judged by what the
 * calls return (repeatedObservation, rephrasedLookup), not by the words.
 */
function handedOn(turns: readonly Turn[], i: number): boolean {
  const text = textSignature(turns[i]!.text);
  for (let j = i + 1; j < Math.min(turns.length, i + 4); j++)
    for (const c of turns[j]!.toolCalls ?? []) {
      const args = textSignature(c.args ?? '');
      if (args.length >= 20 && text.includes(args.slice(0, 400))) return true;
    }
  return false;
}

export const repeatedMessage: Detector = ({ turns, from }) => {
  const groups = new Map<string, number[]>();
  turns.forEach((t, i) => {
    if (i < from) return;
    if ((t.toolCalls ?? []).length > 0) return; // turns with calls are judged by their calls
    const k = textSignature(t.text);
    if (k.length < 3) return;
    groups.set(k, [...(groups.get(k) ?? []), i]);
  });
  // A text said once only (in the window's evidence) is something new: said between the repeats, the
  // agent is coming back to something (a page it re-opens), not looping. The triage still sends it.
  const once = new Set([...groups.values()].filter((g) => g.length === 1).map((g) => g[0]!));
  for (const [text, all] of groups) {
    if (all.length < TEXT_REPEAT) continue;
    const ts = all.filter((i) => !handedOn(turns, i)); // so is a request that the next calls carry (an instruction to a sub-agent)
    const newBetween = [...once].some((i) => i > ts[0]! && i < ts.at(-1)!);
    if (ts.length >= TEXT_REPEAT && !newBetween)
      return spiral(
        `You have said the same thing ${ts.length} times ("${clip(text, 80)}"). You are looping; name the blocker and try a different approach.`,
        ts,
        text,
      );
  }
  return null;
};

export const pingPong: Detector = ({ turns, from }) => {
  const seq = callsOf(turns, from).map(({ turn, call }) => ({ turn, key: `${commandSignature(call)}\u0000${outputSignature(call.result)}`, call }));
  for (const period of [2, 3]) {
    const need = period === 2 ? 6 : 6; // three A-B rounds, or two A-B-C rounds
    for (let start = 0; start + need <= seq.length; start++) {
      const head = seq.slice(start, start + period);
      if (new Set(head.map((x) => x.key)).size !== period) continue;
      let end = start + period;
      while (end < seq.length && seq[end]!.key === seq[end - period]!.key) end++;
      if (end - start >= need) {
        const span = seq.slice(start, end);
        const names = head.map((x) => clip(`${x.call.name} ${x.call.args ?? ''}`.trim(), 50)).join(' ↔ ');
        return spiral(
          `You are alternating between the same ${period} calls with the same results (${names}), ${Math.floor((end - start) / period)} rounds. Stop and rethink the approach.`,
          span.map((x) => x.turn),
          `${period}\u0000${head
            .map((x) => x.key)
            .sort()
            .join('\u0000')}`,
        );
      }
    }
  }
  return null;
};

interface Edit {
  turn: number;
  file: string;
  before: string;
  after: string;
}

const EDIT_TOOL = /edit|replace|patch|write|str_replace/i;
const squashCode = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Edits readable from a call: {file, old, new}-style arguments, or a unified/apply_patch diff. */
export function editsOf(call: Call, turn: number): Edit[] {
  if (!EDIT_TOOL.test(call.name) && !/^\*\*\* (?:Begin Patch|Update File)|^--- |^@@ /m.test(call.args ?? '')) return [];
  const raw = call.args ?? '';
  const o = jsonArgs(raw) as Record<string, unknown> | undefined;
  if (o && typeof o === 'object') {
    const file = String(o.file_path ?? o.path ?? o.file ?? o.filename ?? '');
    const before = o.old_string ?? o.old_str ?? o.oldText ?? o.search;
    const after = o.new_string ?? o.new_str ?? o.newText ?? o.replace;
    if (typeof before === 'string' && typeof after === 'string') return [{ turn, file, before: squashCode(before), after: squashCode(after) }];
    const patch = o.patch ?? o.diff ?? o.input;
    if (typeof patch === 'string') return diffEdits(patch, turn, file);
  }
  return diffEdits(raw, turn, ''); // a raw diff
}

function diffEdits(text: string, turn: number, fallbackFile: string): Edit[] {
  const out: Edit[] = [];
  let file = fallbackFile;
  let minus: string[] = [];
  let plus: string[] = [];
  const flush = () => {
    if (minus.length || plus.length) out.push({ turn, file, before: squashCode(minus.join('\n')), after: squashCode(plus.join('\n')) });
    minus = [];
    plus = [];
  };
  for (const line of text.split(/\r?\n/)) {
    const header = /^(?:\*\*\* (?:Update|Add|Delete) File: |\+\+\+ (?:b\/)?)(.+)$/.exec(line);
    if (header) {
      flush();
      file = header[1]!.trim();
      continue;
    }
    if (line.startsWith('--- ') || line.startsWith('@@')) {
      flush();
      continue;
    }
    if (line.startsWith('-')) minus.push(line.slice(1));
    else if (line.startsWith('+')) plus.push(line.slice(1));
    else flush();
  }
  flush();
  return out;
}

export const editRevert: Detector = ({ turns, from }) => {
  const edits = callsOf(turns)
    .flatMap(({ turn, call }) => editsOf(call, turn))
    .filter((e) => e.before !== e.after);
  for (let i = 0; i < edits.length; i++) {
    const a = edits[i]!;
    const chain = [a];
    for (let j = i + 1; j < edits.length; j++) {
      const e = edits[j]!;
      const last = chain[chain.length - 1]!;
      if (e.file !== a.file) continue;
      if (e.before === last.after && e.after === last.before) chain.push(e);
    }
    const inEvidence = chain.filter((e) => e.turn >= from);
    if (chain.length >= 3 && inEvidence.length >= 2)
      return spiral(
        `You have applied and undone the same edit ${chain.length - 1} times${a.file ? ` in ${clip(a.file, 80)}` : ''}. Going back and forth does not converge: decide which version is right and why.`,
        inEvidence.map((e) => e.turn),
        `${a.file}\u0000${[a.before, a.after].sort().join('\u0000')}`,
      );
  }
  return null;
};
