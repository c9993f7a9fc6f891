/**
 * Hedging, pure: what the end of one tick means for a task that may have several live attempts.
 *
 * tickTask (policy.ts) says what the rules want for one attempt: a log line, a steer, replace it,
 * or fail the task. With a hedge budget of 1 that is carried out as before: a replaced attempt is
 * closed and another started (replacement), a failure fails the task. With a hedge budget N > 1:
 *
 *  - an attempt that misses the ack SLA or stalls (a restart, its agent still running) is kept on
 *    and a hedge, another worker attempt, is started beside it, if the task has fewer than N live
 *    attempts, the mesh has a free slot under the cap and the task has restarts left (a hedge
 *    counts as a restart, so a task still has at most 1 + MAX_RESTARTS + 1 attempts besides the
 *    rebase ones);
 *  - a kept attempt that stalls on is left alone while a hedge (an attempt not itself kept on) runs;
 *  - an attempt that ends, fails or gives up while another attempt of the task runs is closed, and
 *    the task carries on with the others (the last live attempt is replaced or fails the task as
 *    with one attempt);
 *  - the first live attempt whose patch passes the gates and integrates wins: the others are closed
 *    (losers), and their worktrees go like replaced attempts' (state.ts removableAttempts).
 */
import { MAX_RESTARTS, replacement, type TaskAction } from './policy.js';
import { liveAttempts, type Attempt, type TaskRecord } from './state.js';

/** The hedge's slice of a mesh attempt. Only this file writes it. */
export interface AttemptHedge {
  /** It missed the ack SLA or stalled and was kept on with a hedge (another attempt) beside it (absent otherwise). */
  hedged?: boolean;
}

/** What the shell needs to know to hedge: the budget (1 = no hedging), the mesh's live attempts and its cap. */
export interface HedgeRoom {
  budget: number;
  meshLive: number;
  cap: number;
}

/** What the shell does for one ticked attempt, in order. `spawn` starts another attempt of the task from `a.diffBase`. */
export type AttemptStep =
  | { kind: 'log'; text: string }
  | { kind: 'steer'; text: string }
  /** Close this attempt (stop its agent). */
  | { kind: 'close'; reason: string }
  | { kind: 'spawn'; attempt: 'worker' | 'takeover' }
  | { kind: 'fail'; reason: string };

const ends = (x: TaskAction) => x.kind === 'replace' || x.kind === 'fail';

/** Whether the tick's actions end the attempt (so the shell asks about hedging, see HedgeRoom). */
export const endsAttempt = (actions: readonly TaskAction[]): boolean => actions.some(ends);

/** The steps for attempt `a` of task `r` after tickTask returned `actions`. */
export function settleAttempt(r: TaskRecord, a: Attempt, actions: readonly TaskAction[], room: HedgeRoom): AttemptStep[] {
  const out: AttemptStep[] = [];
  const others = liveAttempts(r).filter((x) => x !== a);
  const hedging = room.budget > 1;
  for (const x of actions) {
    if (x.kind === 'log' || x.kind === 'steer') {
      out.push(x);
      continue;
    }
    if (x.kind === 'fail') {
      if (hedging && others.length) out.push(...closeOnly(r, a, x.reason, others));
      else out.push({ kind: 'fail', reason: x.reason });
      continue;
    }
    // replace
    if (hedging && x.how === 'restart' && a.kind === 'worker' && a.agentEnded === null) {
      // Kept on while a hedge (an attempt not itself kept on) carries the task: two kept attempts never hold each other up.
      if (a.hedged && others.some((y) => !y.hedged)) return out.filter((y) => y.kind !== 'log');
      if (!a.hedged && others.length + 1 < room.budget && room.meshLive < room.cap && r.restarts < MAX_RESTARTS) {
        markHedged(a);
        r.restarts += 1;
        const n = r.attempts.length + 1;
        const live = [...others, a].map((y) => y.attempt).sort((p, q) => p - q);
        out.push({
          kind: 'log',
          text: `HEDGE: task ${r.task.index} ${r.task.slug} spawned attempt ${n} alongside attempt${live.length > 1 ? 's' : ''} ${live.join(', ')} (${x.reason}); attempt ${a.attempt} stays on (hedge budget ${room.budget})`,
        });
        out.push({ kind: 'spawn', attempt: 'worker' });
        continue;
      }
    }
    if (hedging && a.hedged && others.length) {
      out.push(...closeOnly(r, a, `${x.how}: ${x.reason}`, others));
      continue;
    }
    const next = replacement(r, a, x.how, x.reason);
    if (next.kind === 'fail' && hedging && others.length) {
      out.push(...closeOnly(r, a, next.reason, others));
      continue;
    }
    out.push({ kind: 'close', reason: `${x.how}: ${x.reason}` });
    if (next.kind === 'fail') out.push({ kind: 'fail', reason: next.reason });
    else out.push({ kind: 'log', text: next.log }, { kind: 'spawn', attempt: next.attempt });
  }
  return out;
}

function closeOnly(r: TaskRecord, a: Attempt, reason: string, others: Attempt[]): AttemptStep[] {
  const rest = others.map((y) => y.attempt).join(', ');
  return [
    {
      kind: 'log',
      text: `CLOSED task ${r.task.index} attempt ${a.attempt} (${reason}); attempt${others.length > 1 ? 's' : ''} ${rest} carr${others.length > 1 ? 'y' : 'ies'} on`,
    },
    { kind: 'close', reason },
  ];
}

/** The attempt won (integrated or done): the task's other live attempts lose; the reason each is closed with. */
export function losers(r: TaskRecord, winner: Attempt): Array<[Attempt, string]> {
  return liveAttempts(r)
    .filter((x) => x !== winner)
    .map((x): [Attempt, string] => [x, `attempt ${winner.attempt} won the task (its patch passed the gates first)`]);
}

/** Kept on with a hedge beside it. */
function markHedged(a: AttemptHedge): void {
  a.hedged = true;
}
