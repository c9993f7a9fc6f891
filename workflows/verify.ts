/**
 * Done-claims (src/domain/agent/verification.ts): read the start commit once for protected paths,
 * and check a claim with the verifyDone activity. The check heartbeats, so a worker that dies
 * mid-check is noticed within the heartbeat timeout and the check runs once more; if that fails
 * too, the verification is skipped (never a pass).
 */
import { CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { AgentContext } from '../src/domain/agent/context.js';
import type { StartedEvaluation } from '../src/domain/agent/supervision.js';
import {
  baselineInput,
  baselineRead,
  protectedEvidenceInput,
  startVerification,
  verificationCancelled,
  verificationFinished,
  verificationSkipped,
} from '../src/domain/agent/verification.js';
import { commit } from '../src/domain/agent/visibility.js';
import { run } from '../src/domain/agent/steps.js';
import type { ProtectedDiffInput } from '../src/domain/contract/activity-types.js';
import type { Shell } from './ports.js';

const message = (err: unknown): string => (err instanceof Error ? ((err as { cause?: Error }).cause?.message ?? err.message) : String(err));

export async function recordBaseline(ctx: AgentContext, shell: Shell): Promise<void> {
  try {
    const out = await shell.activities.startCommit.executeWithOptions(
      { startToCloseTimeout: '1m', retry: { maximumAttempts: 3 }, summary: `start commit of ${ctx.core.spec.agentId}` },
      [baselineInput(ctx.core)],
    );
    baselineRead(ctx, out);
  } catch (err) {
    baselineRead(ctx, { error: `could not read the start commit: ${message(err)}` });
  }
}

export async function verifyClaim(ctx: AgentContext, shell: Shell): Promise<void> {
  const v = startVerification(ctx);
  commit(ctx); // verifying, while the check runs
  // A stop or an abort cancels the check (its process group is killed); a pause lets it finish.
  const scope = new CancellationScope();
  let settled = false;
  const running = scope.run(() =>
    shell.activities.verifyDone.executeWithOptions(
      { startToCloseTimeout: v.startToCloseTimeoutMs, heartbeatTimeout: '15s', retry: { maximumAttempts: 2, initialInterval: '1s' }, summary: v.summary },
      [v.input],
    ),
  );
  running.then(
    () => (settled = true),
    () => (settled = true),
  );
  await condition(() => settled || verificationCancelled(ctx.core));
  if (!settled) scope.cancel();
  try {
    run(ctx, verificationFinished(ctx, await running));
  } catch (err) {
    run(
      ctx,
      verificationSkipped(ctx, isCancellation(err) ? `cancelled: the agent became ${ctx.core.s.state}` : `the verification activity failed: ${message(err)}`),
    );
  }
}

/**
 * AgentSpec.protect: read the protected paths' changes right before an evaluation and hand them to
 * the evaluator. A failed read leaves the evaluation without the evidence. Null when there is
 * nothing to read (no protect, or no start commit): the caller then awaits nothing, which spares
 * every evaluation of an unprotected agent an async call and its promises.
 */
export function protectedEvidence(ctx: AgentContext, shell: Shell, started: StartedEvaluation): Promise<void> | null {
  const input = protectedEvidenceInput(ctx.core);
  return input ? readProtected(ctx, shell, started, input) : null;
}

async function readProtected(ctx: AgentContext, shell: Shell, started: StartedEvaluation, input: ProtectedDiffInput): Promise<void> {
  try {
    const out = await shell.activities.protectedDiff.executeWithOptions(
      { startToCloseTimeout: '1m', retry: { maximumAttempts: 2, initialInterval: '1s' }, summary: `protected paths of ${ctx.core.spec.agentId}` },
      [input],
    );
    if (out.protectedChanges.length) started.input.protectedChanges = out.protectedChanges;
  } catch (err) {
    ctx.ports.log.warn('protected paths not read for this evaluation', { agentId: ctx.core.spec.agentId, cause: message(err) });
  }
}
