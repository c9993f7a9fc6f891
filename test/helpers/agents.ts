/** Scripted turns for externally running test agents, and waits on supervision progress. */
import type { WardenClient } from '../../src/client/index.js';
import type { TurnInput } from '../../src/domain/contract/schemas.js';
import type { AgentStatus, ReportTurnResult } from '../../src/domain/contract/status.js';
import { RUN_LIMITS } from '../../src/domain/agent/run-limits.js';
import { eventually } from './stack.js';

/** The same failing build, again and again: what the heuristic evaluator calls SPIRALING. */
export function spiralTurn(i: number): TurnInput {
  return {
    id: `spiral-${i}`,
    text: 'The build failed again, retrying the build.',
    toolCalls: [{ name: 'shell', args: 'npm run build', result: "error TS2307: Cannot find module './config'", ok: false }],
    tokensIn: 1000,
    tokensOut: 100,
    costUsd: 0.01,
  };
}

/** Varied, productive turns: the heuristic evaluator says OK. */
export function productiveTurn(i: number): TurnInput {
  return {
    id: `work-${i}`,
    text: `Step ${i}: edited module ${i} and ran its tests; they pass, moving on to the next module.`,
    toolCalls: [
      { name: 'apply_patch', args: `*** Update File: src/module${i}.ts`, ok: true },
      { name: 'shell', args: `npm test -- module${i}`, result: `1 passed`, ok: true },
    ],
  };
}

/** `n` productive turns numbered from `from`, each with the same spend (`extra`). */
export function productiveTurns(from: number, n: number, extra: Partial<TurnInput> = {}): TurnInput[] {
  return Array.from({ length: n }, (_, i) => ({ ...productiveTurn(from + i), ...extra }));
}

export async function waitForEvaluations(client: WardenClient, agentId: string, n: number, timeoutMs = 30_000): Promise<AgentStatus> {
  return eventually(
    async () => {
      const s = await client.status(agentId);
      return s.evaluations.total >= n ? s : null;
    },
    { timeoutMs, what: `${n} evaluations of ${agentId}` },
  );
}

/** Report `turns`, waiting after every `every`-th for its evaluation to finish; returns the replies. */
/**
 * Wait longer than RUN_LIMITS.quietGapMs: the agent's next turn comes after a quiet moment, so a
 * run past its event limit continues as new after it (src/domain/agent/run-limits.ts).
 */
export const pauseForQuiet = () => new Promise<void>((r) => setTimeout(r, (RUN_LIMITS.quietGapMs ?? 0) + 200));

export async function reportWithEvaluations(
  client: WardenClient,
  agentId: string,
  turns: TurnInput[],
  every = 5,
  startEvaluations = 0,
): Promise<ReportTurnResult[]> {
  const replies: ReportTurnResult[] = [];
  let evals = startEvaluations;
  for (let i = 0; i < turns.length; i++) {
    replies.push(await client.reportTurn(agentId, turns[i]!));
    if ((i + 1) % every === 0) await waitForEvaluations(client, agentId, ++evals);
  }
  return replies;
}

/** Poll `status` until `pred` holds; returns that status. */
export function waitForStatus(
  client: WardenClient,
  agentId: string,
  pred: (s: AgentStatus) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<AgentStatus> {
  return eventually(
    async () => {
      const s = await client.status(agentId);
      return pred(s) ? s : null;
    },
    { what, timeoutMs },
  );
}

/** Every turn the workflow accepted through reportTurn, read from its history. */
export async function reportedTurns(client: WardenClient, agentId: string): Promise<TurnInput[]> {
  const history = await client.handle(agentId).fetchHistory();
  const turns: TurnInput[] = [];
  for (const e of history.events ?? []) {
    const accepted = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    const payloads = accepted?.args?.payloads;
    if (accepted?.name !== 'reportTurn' || !payloads?.length) continue;
    turns.push(JSON.parse(Buffer.from(payloads[0]!.data!).toString('utf8')) as TurnInput);
  }
  return turns;
}

/**
 * The status an agent's workflow ended with: its result when it completed, or the details of its
 * failure when it failed (an aborted or failed agent is a failed workflow).
 */
export async function finalStatus(handle: { result(): Promise<unknown> }): Promise<AgentStatus> {
  try {
    return (await handle.result()) as AgentStatus;
  } catch (err) {
    const details = (err as { cause?: { details?: unknown[] } }).cause?.details;
    if (details?.[0]) return details[0] as AgentStatus;
    throw err;
  }
}
