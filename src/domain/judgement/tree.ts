/**
 * Evidence from the working tree, which no transcript holds: each turn of a hooked or driven agent
 * carries the fingerprint of its tree when the turn ended (`Turn.tree`: HEAD, a hash of status and
 * diff, files changed; src/tree/fingerprint.ts reads it). Pure.
 *
 * - treeStreak: how long the tree has stayed as it is now.
 * - treeStuck: the same command failing again and again over turns while the tree stays the same:
 *   nothing the agent did between the attempts could change their outcome (SPIRALING evidence).
 * - treeProgress: a command failed, the tree changed, and the same command now passes: progress,
 *   whatever the text says (it ends a spiral that came before it).
 *
 * Turns without a fingerprint (older histories, read-only tool calls, a tree git could not read
 * in time) neither change the tree nor keep it: they are skipped. The transcript data sets carry no
 * fingerprints, so none of this fires on them.
 */
import type { TreeFingerprint, Turn } from '../contract/schemas.js';
import { commandSignature, looksFailed } from './heuristic/normalize.js';

/** Failing calls of one command, over the same tree, that make it stuck (as repeatedFailure counts). */
export const STUCK_FAILURES = 3;
/** ... in at least this many turns (a driven turn may hold many calls; the tree is read once a turn). */
export const STUCK_TURNS = 3;

export const sameTree = (a: TreeFingerprint, b: TreeFingerprint): boolean => a.head === b.head && a.hash === b.hash;

export interface TreeStreak {
  /** The newest fingerprint. */
  tree: TreeFingerprint;
  /** Index of the first turn of the span over which the tree has been the newest one. */
  since: number;
  /** Turns in the span, the newest included (turns without a fingerprint inside it count). */
  turns: number;
  /** The span reaches back to the window's first fingerprint: the tree may have been so for longer. */
  atLeast: boolean;
}

/** How long the tree has been as the newest fingerprint shows it; null when no turn carries one. */
export function treeStreak(turns: readonly Turn[]): TreeStreak | null {
  let newest = -1;
  for (let i = turns.length - 1; i >= 0; i--)
    if (turns[i]!.tree) {
      newest = i;
      break;
    }
  if (newest < 0) return null;
  const tree = turns[newest]!.tree!;
  let since = newest;
  let atLeast = true;
  for (let i = newest - 1; i >= 0; i--) {
    const t = turns[i]!.tree;
    if (!t) continue;
    if (!sameTree(t, tree)) {
      atLeast = false;
      break;
    }
    since = i;
  }
  return { tree, since, turns: turns.length - since, atLeast };
}

export interface TreeStuck {
  streak: TreeStreak;
  /** The failing command as the agent last wrote it (tool name and arguments). */
  command: string;
  /** The command's signature (commandSignature): the finding's key. */
  signature: string;
  /** Its failing calls over the unchanged tree. */
  failures: number;
  /** Indices of the turns of those calls at or after `from`. */
  evidence: number[];
}

/**
 * The same command (up to noise: commandSignature) failing at least STUCK_FAILURES times in at
 * least STUCK_TURNS turns, all since the tree last changed, and never passing after; at least one
 * of the failures at or after `from`. The command with the most failures wins. Null otherwise.
 */
export function treeStuck(turns: readonly Turn[], from = 0): TreeStuck | null {
  const streak = treeStreak(turns);
  if (!streak || streak.turns < STUCK_TURNS) return null;
  const groups = new Map<string, { turns: number[]; failures: number; command: string; passed: boolean }>();
  for (let i = streak.since; i < turns.length; i++) {
    for (const call of turns[i]!.toolCalls ?? []) {
      const sig = commandSignature(call);
      const g = groups.get(sig) ?? { turns: [], failures: 0, command: '', passed: false };
      if (looksFailed(call)) {
        g.failures++;
        if (!g.turns.includes(i)) g.turns.push(i);
        g.command = call.args ? `${call.name} ${call.args}` : call.name;
        g.passed = false;
      } else if (g.failures > 0) g.passed = true;
      groups.set(sig, g);
    }
  }
  let best: TreeStuck | null = null;
  for (const [signature, g] of groups) {
    if (g.passed || g.failures < STUCK_FAILURES || g.turns.length < STUCK_TURNS) continue;
    const evidence = g.turns.filter((t) => t >= from);
    if (evidence.length === 0) continue;
    if (!best || g.failures > best.failures) best = { streak, command: g.command, signature, failures: g.failures, evidence };
  }
  return best;
}

/**
 * The newest turn at or after `from` where a command that had failed passes on a tree other than
 * the one it failed on (both read): the agent changed something and it worked. Null when none.
 */
export function treeProgress(turns: readonly Turn[], from = 0): { turn: number; command: string } | null {
  const failedOn = new Map<string, TreeFingerprint>();
  let tree: TreeFingerprint | undefined;
  let found: { turn: number; command: string } | null = null;
  for (let i = 0; i < turns.length; i++) {
    const t = turns[i]!;
    // A turn's fingerprint is the tree when it ended; its calls ran on it (or on the one before, for a driven turn's first calls).
    tree = t.tree ?? tree;
    for (const call of t.toolCalls ?? []) {
      const sig = commandSignature(call);
      if (looksFailed(call)) {
        if (tree) failedOn.set(sig, tree);
        continue;
      }
      const before = failedOn.get(sig);
      if (before && t.tree && !sameTree(before, t.tree) && i >= from) found = { turn: i, command: call.args ? `${call.name} ${call.args}` : call.name };
      failedOn.delete(sig);
    }
  }
  return found;
}

/** A commit id as status shows it. */
export const shortHead = (head: string | null): string => (head ? head.slice(0, 8) : 'no commit yet');

/** The status's view of a streak (AgentStatus.tree). */
export interface TreeView {
  head: string | null;
  files: number;
  partial?: boolean;
  unchangedTurns: number;
  atLeast: boolean;
}

export const treeView = (s: TreeStreak): TreeView => ({
  head: s.tree.head,
  files: s.tree.files,
  ...(s.tree.partial ? { partial: true } : {}),
  unchangedTurns: s.turns,
  atLeast: s.atLeast,
});

/** The tree in words for status and the prompt: `HEAD 1a2b3c4d, 3 files changed, unchanged for 6 turns`. */
export function treeSummary(v: TreeView): string {
  const files = `${v.files}${v.partial ? '+' : ''} file${v.files === 1 ? '' : 's'} changed`;
  const same =
    v.unchangedTurns <= 1
      ? v.atLeast
        ? 'first read in the newest turn'
        : 'changed in the newest turn'
      : `unchanged for ${v.atLeast ? 'at least ' : ''}${v.unchangedTurns} turns`;
  return `HEAD ${shortHead(v.head)}, ${files}, ${same}`;
}
