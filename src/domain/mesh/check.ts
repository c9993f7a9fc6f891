/**
 * A task's own check (its `verify` command, src/domain/mesh/config.ts TaskCheck), pure: when it is
 * due, what the meshTaskCheck activity is asked, and what its result means. It runs on an attempt
 * whose patch passed the other gates, before integration, on the integration head plus exactly the
 * gated patch bytes in a worktree warden makes (never the worker's own worktree). A pass lets
 * the patch go on to integration; a failure sends the worker a `[VERIFY]` steer with the command and
 * its output and waits for a new patch; after `checkAttempts` failures (over all attempts) the task
 * fails with gate V.
 */
import type { VerifyOutput } from '../contract/activity-types.js';
import type { TaskCheckInput } from './activity-types.js';
import { VERIFY_WHISPER_TAIL_CHARS } from '../contract/limits.js';
import type { Tunables } from './config.js';
import { setGate, unready } from './gates.js';
import { moveTo, type Attempt, type TaskRecord } from './state.js';
import { checkFailed } from './waits.js';

/** The task check's slice of a mesh attempt. Only this file writes it. */
export interface AttemptCheck {
  /** The task's own check (its `verify` command) on this attempt's last gated patch (absent otherwise). */
  check?: TaskCheckResult | null;
}

/** One run of a task's check command in the attempt's worktree. */
export interface TaskCheckResult {
  command: string;
  /** The patch draft it checked. */
  sha: string | null;
  passed: boolean;
  exitCode: number | null;
  timedOut: boolean;
  outputTail: string;
  at: number;
}

/** The check's result on the attempt (gate V is set beside it). */
function recordCheck(a: AttemptCheck, result: TaskCheckResult): void {
  a.check = result;
}

/** Failed checks per task when the tunables do not say (older runs). */
export const CHECK_ATTEMPTS = 3;

/** The draft the check is about: the one whose gates passed. */
const checkedSha = (a: Attempt): string | null => a.gatedSha ?? a.patchSha;

/** The attempt is ready and its gated patch has not passed the task's check yet. */
export function checkDue(r: TaskRecord, a: Attempt): boolean {
  if (!r.task.check || !a.ready || a.closed || a.mode === 'analysis-only') return false;
  return !(a.check?.passed && a.check.sha === checkedSha(a));
}

/**
 * The meshTaskCheck input: the command on the integration head plus the gated patch bytes, in a
 * worktree warden makes for the check (the attempt's own worktree is the worker's to change).
 */
export function taskCheckInput(r: TaskRecord, a: Attempt, integrationDir: string, head: string | null): TaskCheckInput {
  const c = r.task.check!;
  return {
    integrationDir,
    patchPath: a.patchPath,
    expectSha: checkedSha(a),
    head,
    diffBase: a.diffBase,
    key: a.agentId,
    command: c.command,
    timeoutMs: c.timeoutMs,
  };
}

/** The activity's start-to-close timeout: the command's, plus time for the kill grace and git. */
export const checkActivityTimeoutMs = (r: TaskRecord): number => r.task.check!.timeoutMs + 60_000;

export type CheckOutcome = { kind: 'pass'; log: string } | { kind: 'retry'; log: string; steer: string } | { kind: 'fail'; reason: string };

const tailOf = (text: string): string => (text.length <= VERIFY_WHISPER_TAIL_CHARS ? text : `…${text.slice(-VERIFY_WHISPER_TAIL_CHARS)}`);
const how = (out: Pick<VerifyOutput, 'exitCode' | 'timedOut'>): string =>
  out.timedOut ? 'timed out' : out.exitCode === null ? 'could not run' : `exit ${out.exitCode}`;

/**
 * What a check's result means. Records it on the attempt (gate V). Pass: on to integration. A
 * failure: not ready any more, wait for a new patch draft (`waitingFor: check`, the patch draft
 * timeout), or past the bound fail the task.
 */
export function checkOutcome(
  r: TaskRecord,
  a: Attempt,
  out: Pick<VerifyOutput, 'exitCode' | 'passed' | 'timedOut' | 'outputTail'>,
  now: number,
  t: Partial<Pick<Tunables, 'checkAttempts'>>,
): CheckOutcome {
  const command = r.task.check!.command;
  recordCheck(a, { command, sha: checkedSha(a), passed: out.passed, exitCode: out.exitCode, timedOut: out.timedOut, outputTail: out.outputTail, at: now });
  setGate(a, 'V', out.passed ? 'ok' : 'fail');
  if (out.passed) return { kind: 'pass', log: `CHECK PASSED task ${r.task.index} ${a.agentId}: ${command}` };
  const failures = (r.checkFailures ?? 0) + 1;
  r.checkFailures = failures;
  const bound = t.checkAttempts ?? CHECK_ATTEMPTS;
  const lastLine = out.outputTail.trim().split('\n').at(-1)?.slice(0, 200) ?? '';
  if (failures >= bound)
    return {
      kind: 'fail',
      reason: `gate V failed: the task's check \`${command}\` failed ${failures} times (${how(out)}${lastLine ? `: ${lastLine}` : ''}); not integrated`,
    };
  unready(a, true);
  moveTo(a, 'needs_reemit');
  checkFailed(a, a.patchSha, now);
  const output = out.outputTail.trim() ? `\nOutput (tail):\n${tailOf(out.outputTail.trimEnd())}` : '';
  return {
    kind: 'retry',
    log: `CHECK FAILED task ${r.task.index} ${a.agentId} (${failures} of ${bound}): ${command} (${how(out)}); not integrated, a new patch requested`,
    steer: `[VERIFY] warden ran this task's check on your patch and it failed (${how(out)}, failure ${failures} of ${bound}): \`${command}\`${output}\nFix it, run the check yourself, write the patch draft again at ${a.patchPath} and set your checkpoint to done.`,
  };
}
