/**
 * One driven turn: the turn activity inside its own cancellation scope (interrupt, abort and a
 * stop past its drain deadline cancel it; the process group gets its grace period), then the
 * core's rules for what the turn's outcome means, as steps the shell carries out (`run`). What the rules changed is committed before every
 * wait (the turn, a drain, a backoff, the result's check); the loop commits the rest.
 */
import { ActivityCancellationType, CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { CheckResultOutput, TurnResult } from '../src/domain/contract/activity-types.js';
import type { AgentContext } from '../src/domain/agent/context.js';
import { claimWithResult } from '../src/domain/agent/verification.js';
import { beginTurn, completeTask, drainDeadline, drainTimedOut, endTurn, resultChecked, turnFinished } from '../src/domain/agent/driven.js';
import { turnFailed } from '../src/domain/agent/rails.js';
import { blockedFor, rateLimitOf, retryAfterBlock, turnRateLimited } from '../src/domain/agent/blocking.js';
import { commit } from '../src/domain/agent/visibility.js';
import { run } from '../src/domain/agent/steps.js';
import type { Shell } from './ports.js';

export async function runDrivenTurn(ctx: AgentContext, shell: Shell): Promise<void> {
  const scope = new CancellationScope();
  shell.turnScope = scope;
  const t = run(ctx, beginTurn(ctx));
  commit(ctx);
  let settled = false;
  const running = scope.run(() =>
    shell.activities.runTurn.executeWithOptions(
      {
        startToCloseTimeout: t.startToCloseTimeoutMs,
        heartbeatTimeout: t.heartbeatTimeoutMs,
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        retry: t.retry,
        summary: t.summary,
      },
      [t.input],
    ),
  );
  running.then(
    () => (settled = true),
    () => (settled = true),
  );
  // A stop drains: the turn may finish until the drain deadline; after that it is cancelled.
  while (!settled) {
    const deadline = drainDeadline(ctx.core);
    if (deadline !== null) {
      const finished = await condition(() => settled, Math.max(1, deadline - ctx.ports.now()));
      if (!finished) {
        drainTimedOut(ctx);
        commit(ctx);
        scope.cancel();
      }
      break;
    }
    await condition(() => settled || ctx.core.s.state === 'cancelling');
  }
  let result: TurnResult | null = null;
  try {
    result = await running;
  } catch (err) {
    if (isCancellation(err)) {
      // Cut short: the driver hands back the partial turn as the cancellation's details.
      const details = (err as { cause?: { details?: unknown[] } }).cause?.details;
      result = (details?.[0] as TurnResult | undefined) ?? null;
    } else {
      const inner = (err as { cause?: { message?: string; type?: string; nonRetryable?: boolean; details?: unknown } }).cause;
      shell.turnScope = null;
      endTurn(ctx);
      const cause = inner?.message ?? (err instanceof Error ? err.message : String(err));
      // A rate-limited model: blocked on a timer, then the same turn again; restart intensity is not charged.
      const limit = rateLimitOf(inner);
      if (limit) {
        const waitMs = run(ctx, turnRateLimited(ctx, { turnNumber: t.turnNumber, whispers: t.whispers, cause, limit }));
        // Blocked (or a compaction turn, which stays compacting) until the timer, or until a human moves the agent.
        const waitingIn = ctx.core.s.state === 'compacting' ? 'compacting' : 'blocked';
        commit(ctx);
        if (waitMs !== null) {
          const from = ctx.ports.now();
          await condition(() => ctx.core.s.state !== waitingIn, waitMs);
          blockedFor(ctx, ctx.ports.now() - from);
        }
        run(ctx, retryAfterBlock(ctx));
        return;
      }
      const backoffMs = run(
        ctx,
        turnFailed(ctx, {
          turnNumber: t.turnNumber,
          whispers: t.whispers,
          cause,
          protocolError: Boolean(inner?.nonRetryable && inner.type === 'TurnProtocolError'),
        }),
      );
      // Running (or compacting: the compaction turn is retried) until the backoff ends or a human steps in.
      const retryingIn = ctx.core.s.state === 'compacting' ? 'compacting' : 'running';
      commit(ctx);
      if (backoffMs !== null) await condition(() => ctx.core.s.state !== retryingIn, backoffMs);
      return;
    }
  } finally {
    shell.turnScope = null;
    endTurn(ctx);
  }
  const next = run(ctx, turnFinished(ctx, result, t.turnNumber));
  if (next.kind === 'complete') run(ctx, completeTask(ctx));
  if (next.kind !== 'check-result') return;
  commit(ctx);
  let check: CheckResultOutput;
  try {
    check = await shell.activities.checkResult.executeWithOptions(
      { startToCloseTimeout: '30s', retry: { maximumAttempts: 3 }, summary: `check the result of ${ctx.core.spec.agentId}` },
      [next.input],
    );
  } catch (err) {
    check = { ok: false, errors: `could not check the result: ${err instanceof Error ? err.message : String(err)}` };
  }
  // With verify/protect, a result that keeps its contract still waits for warden's check (verification.ts).
  if (!run(ctx, claimWithResult(ctx, check))) run(ctx, resultChecked(ctx, check));
}
