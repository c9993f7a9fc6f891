/**
 * Tick rules (the mesh's progress enforcement), pure: given an attempt, what the tick saw on disk
 * and the time, update the attempt's monitoring fields and gates and decide one action.
 *
 *  - Ack SLA: no valid checkpoint by spawnedAt + ackSla → restart (once per task; with a hedge budget, a hedge: hedge.ts).
 *  - Checkpoint integrity: a checkpoint that vanished, turned invalid, or claims a patch that does
 *    not exist → one unreliable strike and a re-checkpoint request; past `missingArtifactStrikes` → restart.
 *  - Checkpoint interval: no checkpoint update for two intervals → ask for a minimal checkpoint.
 *  - Stall: no progress (neither status_code + status_detail nor the patch draft changed) for
 *    `stallThreshold` × the tick interval of wall-clock time since the tick that last saw a change
 *    → STALL DETECTED, restart (take over after the patch draft timeout). Time, not tick counts:
 *    the extra ticks a wake-up causes never count. (Runs from before this rule count ticks.)
 *  - Waiting for a changed output after a rebase request or a failed task check (the patch draft
 *    timeout) or a re-emit request (the stall time): past it, the task fails with the reason.
 *  - Patch draft timeout: no patch draft that long after the task's first spawn → cancel and take
 *    over with a direct-edit attempt (unless continueWaiting).
 *  - First edit target: a patch-first or direct-edit attempt whose patch draft shows no real change
 *    (no draft, or one touching no file) by spawnedAt + firstEditTarget → FIRST EDIT TARGET MISSED
 *    and the stall rule's action (restart; take over after the patch draft timeout). Once per
 *    attempt, never once it had a real change; analysis-only attempts are exempt.
 *  - Waiting for feedback: nobody in the mesh answers it, so a `waiting_for_feedback` status
 *    unchanged for the patch draft timeout (or the stall time, if longer) is a stall too.
 *  - Ready: status_code done (and a patch draft, for patch-first tasks) → the gates decide.
 */
import type { CheckpointParse } from './checkpoint.js';
import type { Tunables } from './config.js';
import { setGate } from './gates.js';
import { firstEdit, nudgedCheckpoint, sawAck, sawCheckpoint, sawProgress, sawTick, strike as addStrike } from './monitor.js';
import { activeAttempt, moveTo, readyAttempt, type Attempt, type TaskRecord } from './state.js';
import { doneWaiting, stillWaiting } from './waits.js';

export interface PatchObservation {
  exists: boolean;
  size: number;
  mtimeMs: number | null;
  sha: string | null;
  unified: boolean;
  files: string[];
  /** Who wrote the draft: the worker, or warden from the worktree's diff. */
  by: 'worker' | 'warden' | null;
  /**
   * Why the draft cannot be used at all, starting with the gate it fails (`gate D: …` not a regular
   * file, over its byte budget, no worktree warden made; `gate P: …` a path git would refuse). The
   * task fails with it: no re-emit or rebase can make a hostile artifact safe.
   */
  refused?: string | null;
}

export interface Observation {
  /** `refused`: the checkpoint is not a regular file or is over its byte budget (it was not read). */
  checkpoint: { exists: boolean; mtimeMs: number | null; parse: CheckpointParse | null; refused?: string | null };
  patch: PatchObservation;
  /** The agent's final message so far: its latest turn in the deliverable format, else its latest turn. */
  lastTurn: { text: string; at: string | null } | null;
  /** How many turns the agent has taken (null: it could not be asked). */
  turns?: number | null;
}

/** What a re-emit or rebase must change: the patch draft (rebase, a failed task check), or the patch or the checkpoint (re-emit). */
export function outputMark(what: 'rebase' | 'reemit' | 'check', obs: Observation): string | null {
  return what !== 'reemit' ? obs.patch.sha : `${obs.patch.sha}@${obs.checkpoint.mtimeMs}@${obs.turns ?? ''}`;
}

export type TickAction =
  | { kind: 'none' }
  | { kind: 'ready' }
  | { kind: 'steer'; text: string }
  | { kind: 'restart'; reason: string; event: string }
  | { kind: 'takeover'; reason: string; event: string }
  | { kind: 'fail'; reason: string };

/** The regular tick interval in ms (`off`: the shortest of 5 minutes, the ack SLA and the checkpoint interval). */
export const tickMs = (t: Pick<Tunables, 'tickInterval' | 'ackSla' | 'checkpointInterval'>): number =>
  t.tickInterval === 'off' ? Math.min(300_000, t.ackSla, t.checkpointInterval) : t.tickInterval;
/** Wall-clock time without progress after which an attempt is stalled: the stall threshold × the tick interval. */
export const stallAfterMs = (t: Pick<Tunables, 'tickInterval' | 'ackSla' | 'checkpointInterval' | 'stallThreshold'>): number => t.stallThreshold * tickMs(t);

/** Only gate O stands between this finished attempt and integration (patch modes, a unified diff). */
export const onlyOutputMissing = (a: Attempt): boolean => a.mode !== 'analysis-only' && a.gates.D !== 'fail';

/** A real change in the patch draft: one that touches at least one file (an empty diff is none). */
export const realChange = (p: PatchObservation): boolean => p.exists && !p.refused && p.files.length > 0;

/** What the workflow lets a rule do: `firstEdit` answers whether the first edit target may act (unset: it may). */
export interface RuleGates {
  firstEdit?: () => boolean;
}

const WAITING_CODES = new Set(['done', 'waiting_for_feedback']);
const secs = (ms: number) => `${Math.round(ms / 1000)}s`;

/**
 * One tick of one attempt. Stall and output waits are measured in wall-clock time. Correct work is
 * kept (docs/using/mesh.md, gate O): a finished patch whose only fault is the final message's
 * missing sections is integrated after one re-emit request; an attempt that never acks even after
 * the ack restart fails; waiting for feedback nobody gives ends.
 */
export function tickAttempt(task: TaskRecord, a: Attempt, obs: Observation, now: number, t: Tunables, gates: RuleGates = {}): TickAction {
  sawTick(a, now, obs.turns);
  const patchFirst = a.mode !== 'analysis-only';
  // Artifacts warden refused to read or use (a FIFO, a device, a symlink, an oversized file, a path git refuses).
  if (obs.checkpoint.refused) {
    setGate(a, 'C', 'fail');
    return { kind: 'fail', reason: `gate C refused: ${obs.checkpoint.refused}` };
  }
  if (patchFirst && obs.patch.refused) {
    const gate = /^gate ([A-Z]):/.exec(obs.patch.refused)?.[1] === 'P' ? 'P' : 'D';
    setGate(a, gate, 'fail');
    return { kind: 'fail', reason: `${obs.patch.refused.replace(/^gate ([A-Z]):/, 'gate $1 refused:')}; not integrated` };
  }
  if (patchFirst && a.firstEdit !== 'seen' && realChange(obs.patch)) firstEdit(a, 'seen');
  const cp = obs.checkpoint.parse?.ok ? obs.checkpoint.parse.checkpoint : null;
  const firstSpawn = task.firstSpawnAt ?? a.spawnedAt;

  // Gate D (and the patch draft timeout) for patch-first attempts.
  if (patchFirst) setGate(a, 'D', obs.patch.exists ? (obs.patch.unified ? 'ok' : 'fail') : '--');
  const draftDeadline = (a.kind === 'takeover' ? a.spawnedAt : firstSpawn) + t.patchDraftTimeout;
  if (patchFirst && !obs.patch.exists && now >= draftDeadline && !t.continueWaiting) {
    const event = `TIMEOUT ESCALATION: no patch draft after ${secs(now - (a.kind === 'takeover' ? a.spawnedAt : firstSpawn))} (patch draft timeout ${secs(t.patchDraftTimeout)})`;
    if (a.kind === 'takeover' || task.tookOver) return { kind: 'fail', reason: `${event}; the direct-edit attempt produced no patch either` };
    return { kind: 'takeover', reason: 'patch draft timeout', event };
  }

  // Gate A: the ack SLA.
  if (!a.acked) {
    if (cp) {
      sawAck(a);
      setGate(a, 'A', 'ok');
      moveTo(a, 'acked');
    } else if (now >= a.spawnedAt + t.ackSla) {
      setGate(a, 'A', 'fail');
      const why = obs.checkpoint.exists
        ? `checkpoint invalid (${obs.checkpoint.parse && !obs.checkpoint.parse.ok ? obs.checkpoint.parse.error : 'unreadable'})`
        : 'no checkpoint';
      if (task.ackRestarts < 1)
        return {
          kind: 'restart',
          reason: `ack SLA missed: ${why} ${secs(now - a.spawnedAt)} after spawn (SLA ${secs(t.ackSla)})`,
          event: `ACK SLA MISSED: ${why}`,
        };
      // After the one ack restart, an attempt that still writes no checkpoint is given the patch draft timeout more, then fails.
      if (now >= a.spawnedAt + t.ackSla + t.patchDraftTimeout)
        return {
          kind: 'fail',
          reason: `gate A failed: ${why} ${secs(now - a.spawnedAt)} after spawn, after the ack restart (limit: the ack SLA ${secs(t.ackSla)} + the patch draft timeout ${secs(t.patchDraftTimeout)})`,
        };
      moveTo(a, 'waiting_checkpoint');
      return { kind: 'none' };
    } else {
      moveTo(a, 'spawned');
      return { kind: 'none' };
    }
  }

  // Gate C: checkpoint integrity, missing-artifact strikes.
  let strike: string | null = null;
  if (!obs.checkpoint.exists) strike = 'checkpoint missing';
  else if (!cp) strike = `checkpoint invalid: ${obs.checkpoint.parse && !obs.checkpoint.parse.ok ? obs.checkpoint.parse.error : 'unreadable'}`;
  else if (cp.statusCode === 'done' && patchFirst && !obs.patch.exists) strike = 'checkpoint says done but the patch draft does not exist';
  if (strike) {
    setGate(a, 'C', 'fail');
    const strikes = addStrike(a);
    if (strikes > t.missingArtifactStrikes)
      return { kind: 'restart', reason: `missing-artifact incident ${strikes}: ${strike}`, event: `UNRELIABLE: ${strike} (strike ${strikes})` };
    moveTo(a, 'waiting_checkpoint');
    return {
      kind: 'steer',
      text: `Checkpoint integrity: ${strike}. Write the checkpoint at ${a.checkpointPath} in the required format (and the patch draft at ${a.patchPath} if you claim one). Do not claim artifacts that are not on disk. (unreliable strike ${strikes})`,
    };
  }
  setGate(a, 'C', 'ok');
  sawCheckpoint(a, obs.checkpoint.mtimeMs);
  const cpAge = now - (a.lastCheckpointMtime ?? now);
  const waiting = WAITING_CODES.has(cp!.statusCode);

  // Stall: no change of status or patch draft for the stall time (before: the same status or draft N ticks).
  const status = `${cp!.statusCode}|${cp!.statusDetail}`;
  const patchStat = obs.patch.exists ? `${obs.patch.size}:${obs.patch.sha}` : null;
  const progressAt = sawProgress(a, status, patchStat, now);

  if (cp!.statusCode === 'done' && (!patchFirst || obs.patch.exists)) {
    if (a.waitingFor) {
      const changed = outputMark(a.waitingFor.what, obs) !== a.waitingFor.sha;
      if (!changed) {
        const waited = stillWaiting(a, now);
        const budget = a.waitingFor.what === 'reemit' ? stallAfterMs(t) : t.patchDraftTimeout;
        // A re-emit that is not coming (the agent ended, or the wait is over) does not throw a correct patch away: the gates decide.
        if (a.waitingFor.what === 'reemit' && onlyOutputMissing(a) && (a.agentEnded !== null || waited >= budget)) {
          doneWaiting(a);
          return { kind: 'ready' };
        }
        if (waited >= budget)
          return {
            kind: 'fail',
            reason:
              a.waitingFor.what === 'rebase'
                ? `no new patch ${secs(waited)} after the rebase request (the agent kept the patch that did not apply; limit: the patch draft timeout, ${secs(budget)})`
                : a.waitingFor.what === 'check'
                  ? `gate V failed: no new patch ${secs(waited)} after the task's check failed (limit: the patch draft timeout, ${secs(budget)})`
                  : `no re-emitted output ${secs(waited)} after the request (limit ${secs(budget)})`,
          };
        return { kind: 'none' };
      }
      doneWaiting(a);
    }
    return { kind: 'ready' };
  }
  // First edit target: no real change in the patch draft by then → the stall rule's action, once per attempt.
  if (patchFirst && !a.firstEdit && now >= a.spawnedAt + t.firstEditTarget && (gates.firstEdit?.() ?? true)) {
    firstEdit(a, 'missed');
    moveTo(a, 'stalled');
    const reason = `no change in the patch draft after ${secs(now - a.spawnedAt)} (first edit target ${secs(t.firstEditTarget)})`;
    const event = `FIRST EDIT TARGET MISSED: ${reason}`;
    if (now >= draftDeadline && a.kind !== 'takeover' && !task.tookOver)
      return { kind: 'takeover', reason: 'first edit target missed after the patch draft timeout', event };
    return { kind: 'restart', reason: `first edit target missed: ${reason}`, event };
  }
  const quiet = now - progressAt;
  // Waiting for feedback nobody in the mesh gives: not a stall for the patch draft timeout (or the stall time, if longer), then one.
  const stallAfter = waiting ? Math.max(stallAfterMs(t), t.patchDraftTimeout) : stallAfterMs(t);
  if (waiting && quiet < stallAfter) {
    moveTo(a, 'running');
    return { kind: 'none' };
  }
  if (quiet >= stallAfter) {
    moveTo(a, 'stalled');
    const reason = `no progress for ${secs(quiet)} (status "${cp!.statusCode}: ${cp!.statusDetail}"${obs.patch.exists ? ' and the patch draft unchanged' : ', no patch draft'}; ${waiting ? `nobody answers a worker waiting for feedback; limit ${secs(stallAfter)}` : `stall time ${secs(stallAfter)}`})`;
    const event = `STALL DETECTED: ${reason}`;
    if (patchFirst && now >= draftDeadline && a.kind !== 'takeover' && !task.tookOver)
      return { kind: 'takeover', reason: 'stall after the patch draft timeout', event };
    return { kind: 'restart', reason: `stall: ${reason}`, event };
  }
  moveTo(a, 'running');
  if (cpAge >= 2 * t.checkpointInterval && (a.checkpointNudgedAt === null || now - a.checkpointNudgedAt >= t.checkpointInterval)) {
    nudgedCheckpoint(a, now);
    return {
      kind: 'steer',
      text: `No checkpoint update for ${secs(cpAge)} (interval ${secs(t.checkpointInterval)}). Write a minimal checkpoint now: status_code, status_detail and artifact paths, at ${a.checkpointPath}.`,
    };
  }
  return { kind: 'none' };
}

/** The next task allowed to integrate: patches go in task order, so the first open task. */
export function integrationTurn(tasks: readonly TaskRecord[]): number | null {
  const open = tasks.find((t) => t.state !== 'integrated' && t.state !== 'done' && t.state !== 'failed');
  return open ? open.task.index : null;
}

/** The task's dashboard state follows its active attempt (with hedges: the one ready to integrate, else the newest). */
export function taskState(task: TaskRecord): TaskRecord['state'] {
  if (task.state === 'integrated' || task.state === 'done' || task.state === 'failed') return task.state;
  const a = readyAttempt(task) ?? activeAttempt(task);
  return a ? a.state : 'queued';
}
