/**
 * The driven-turn activity: run one turn of the agent through its driver. Heartbeats (so a dead
 * worker's turn is retried elsewhere after the heartbeat timeout) and turns Temporal cancellation
 * into the driver's abort signal; a cancelled turn ends as a CancelledFailure carrying the partial
 * turn, so the workflow keeps what the agent did before it was stopped. A finished turn carries
 * the fingerprint of the agent's working tree (src/tree/fingerprint.ts) when it is a git tree.
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { RunTurnInput, TurnResult } from '../src/domain/contract/activity-types.js';
import type { Turn } from '../src/domain/contract/schemas.js';
import { classifyTurnFailure, RATE_LIMITED_FAILURE, type RateLimit } from '../src/domain/agent/rate-limit.js';
import { RateLimitedError, TurnProtocolError } from './drivers/command.js';
import { driverFor } from './drivers/index.js';
import { killMarked } from './process-group.js';
import { treeFingerprint } from '../src/tree/fingerprint.js';

export function wardenHome(): string {
  return process.env.WARDEN_HOME ?? join(homedir(), '.warden');
}

/** The agent's working and state directories, stable across turns and worker restarts. */
export function agentDirs(agentId: string, workDir?: string): { workDir: string; homeDir: string } {
  const base = join(wardenHome(), 'agents', agentId);
  return { workDir: resolve(workDir ?? join(base, 'work')), homeDir: join(base, 'home') };
}

export function makeRunTurn(log: Logger) {
  return async function runTurn(input: RunTurnInput): Promise<TurnResult> {
    const ctx = Context.current();
    const dirs = agentDirs(input.agentId, input.workDir);
    mkdirSync(dirs.workDir, { recursive: true });
    mkdirSync(dirs.homeDir, { recursive: true, mode: 0o700 });
    const tlog = log.child({ agentId: input.agentId, turn: input.turnNumber, driver: input.driver.kind, attempt: ctx.info.attempt });
    const driver = await driverFor(input.driver);
    // Turns of one agent never overlap, so anything of this agent still running is a leftover of a
    // worker that died mid-turn (same host): kill it, never let two copies work in one directory.
    const stale = await killMarked([`WARDEN_AGENT_HOME=${dirs.homeDir}`, `CODEX_HOME=${dirs.homeDir}`, `HOME=${dirs.homeDir}`]);
    if (stale.length) tlog.warn({ pids: stale }, 'killed leftover processes of this agent from an earlier attempt');
    // Heartbeat on a timer too, so a quiet agent still proves the worker is alive and cancellation arrives.
    let lastPartial: Partial<Turn> | undefined;
    const beat = setInterval(() => ctx.heartbeat(lastPartial), 1_000);
    tlog.info('turn started');
    try {
      const result = await driver.runTurn(
        { ...input, ...dirs },
        {
          signal: ctx.cancellationSignal,
          killGraceMs: input.killGraceMs,
          heartbeat: (partial) => {
            lastPartial = partial;
            ctx.heartbeat(partial);
          },
          log: tlog,
        },
      );
      if (result.interrupted || ctx.cancellationSignal.aborted) {
        tlog.info('turn cancelled; partial turn kept');
        throw new CancelledFailure('turn cancelled', [{ ...result, interrupted: true }]);
      }
      // The working tree as the turn left it: warden's reading, never the agent's (a driver's turn may not set it).
      const { tree: _claimed, ...turn } = result.turn;
      const tree = await treeFingerprint(dirs.workDir);
      tlog.info({ done: result.done, toolCalls: turn.toolCalls?.length ?? 0, tree: tree ? { head: tree.head, files: tree.files } : null }, 'turn finished');
      return { ...result, turn: tree ? { ...turn, tree } : turn };
    } catch (err) {
      if (err instanceof TurnProtocolError) throw ApplicationFailure.nonRetryable(err.message, 'TurnProtocolError');
      // A rate-limited or overloaded model: the workflow waits on a timer and retries (the agent is blocked).
      const limit: RateLimit | null =
        err instanceof RateLimitedError
          ? err.limit
          : classifyTurnFailure({ driver: input.driver.kind, text: err instanceof Error ? err.message : String(err) });
      if (limit) {
        tlog.warn({ reason: limit.reason, retryAfterMs: limit.retryAfterMs }, 'turn rate-limited');
        throw ApplicationFailure.create({ type: RATE_LIMITED_FAILURE, message: err instanceof Error ? err.message : String(err), details: [limit] });
      }
      throw err;
    } finally {
      clearInterval(beat);
    }
  };
}
