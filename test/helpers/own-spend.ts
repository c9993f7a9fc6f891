/**
 * Checks shared by the tests of a hooked session's own spend (Claude Code's transcript, Codex's
 * rollout): a recording hook client for the unit tests, and for the integration tests the agent's
 * counted tokens and what `warden status` says of them.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { WardenClient } from '../../src/client/index.js';
import type { TurnInput } from '../../src/domain/contract/schemas.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import type { HookClient } from '../../src/hooks/protocol.js';
import { waitForStatus } from './agents.js';
import { ROOT } from './stack.js';

/** A hook client that answers `status` with a running agent (and `status`), and records the turns reported. */
export function recordingHookClient(status: Record<string, unknown> = {}) {
  const turns: TurnInput[] = [];
  const c = {
    signal: async () => {},
    reportTurn: async (_id: string, t: TurnInput) => {
      turns.push(t);
      return { accepted: true, duplicate: false, whispers: [], paused: false, stop: false, interrupt: false, state: 'running' };
    },
    status: async () => ({ state: 'running', pendingWhispers: 0, paused: false, checksDone: false, toolAllowlist: [], ...status }),
  } as unknown as HookClient;
  return { client: async () => c, turns };
}

/** `warden status <agentId>` by the built CLI against `server`. */
export const cliStatus = (server: { address: string; namespace: string }, agentId: string) =>
  execa(process.execPath, [join(ROOT, 'dist/src/cli/main.js'), 'status', agentId, '--address', server.address, '--namespace', server.namespace], {
    reject: false,
  });

/** Waits until the agent has counted `tokens` in and out (20 s), and checks that no cost was: `output` is shown when it does not. */
export async function expectTokensCounted(warden: WardenClient, agentId: string, tokens: { in: number; out: number }, output: string): Promise<AgentStatus> {
  const total = tokens.in + tokens.out;
  const s = await waitForStatus(warden, agentId, (x) => x.tokens.total === total, 'every turn counted', 20_000).catch(async (err) => {
    throw new Error(`${(err as Error).message}\n${JSON.stringify((await warden.status(agentId)).tokens)}\n${output}`);
  });
  expect(s.tokens).toEqual({ ...tokens, total });
  expect(s.costUsd).toBe(0); // neither CLI writes a cost, and the session's user config gives no prices
  return s;
}

/** `warden status` of an agent paused at its token budget whose cost budget cannot hold. */
export async function expectBudgetPausedWithoutPrice(server: { address: string; namespace: string }, agentId: string): Promise<void> {
  const cli = await cliStatus(server, agentId);
  expect(cli.stdout, cli.stderr).toContain('budgets: tokens');
  expect(cli.stdout).toContain('— paused at a budget');
  expect(cli.stdout).toMatch(/ {2}warning: cost budget cannot be enforced: no price for /);
}
