/**
 * A driven Codex agent whose turn spawns a sub-agent (`spawn_agent`), end to end on a real dev
 * server and worker: the real `codex` binary runs each turn against the scripted model server
 * (Responses API). codex's `turn.completed` usage counts only the session's own thread, so the
 * driver reads what the sub-agent spent from its own rollout under the agent's CODEX_HOME and adds
 * it to the turn, each sub-agent once (activities/drivers/codex-subagents.ts): the turn's tokens
 * are the session's and the sub-agent's as the model server reported them, and a token budget
 * the session's own turn stays under is reached by the sub-agent's.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { TurnResult } from '../../activities/drivers/types.js';
import type { AgentSpecInput } from '../../src/domain/contract/schemas.js';
import {
  functionCallItem,
  functionCallOutputs,
  inputTexts,
  message,
  respond,
  startModelServer,
  type ModelReply,
  type ModelServer,
  type Usage,
} from '../fixtures/model-server.js';
import { finalStatus, waitForStatus } from '../helpers/agents.js';
import { useStack } from '../helpers/stack.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const noCredentials = mkdtempSync(join(tmpdir(), 'warden-nocreds-'));
const MODEL = 'warden-test-model';

/** A call of codex's sub-agent tools (the `multi_agent_v1` namespace: spawn_agent, wait_agent, send_input). */
function agentTool(name: string, args: Record<string, unknown>, callId: string, usage: Partial<Usage>): ModelReply {
  const call = functionCallItem(name, args, callId);
  return { kind: 'events', events: respond([{ ...call, item: { ...(call.item as object), namespace: 'multi_agent_v1' } }], usage) };
}

/**
 * Turn 1: the session spawns a sub-agent (1000 in, 200 out), waits for it (500, 5) and says so
 * (300, 30); the sub-agent answers once (7000, 70). Turn 2 (`resume`): the session sends the
 * sub-agent more work — codex names it again, though a resumed session's old sub-agents are gone
 * (`not_found`) — (10, 1), waits (20, 2) and finishes (40, 4).
 */
const OWN1 = { in: 1000 + 500 + 300, out: 200 + 5 + 30 };
const SUB = { in: 7000, out: 70 };
const OWN2 = { in: 10 + 20 + 40, out: 1 + 2 + 4 };

let model: ModelServer;
let subCalls = 0;
beforeAll(async () => {
  model = await startModelServer({
    script: (req) => {
      const said = inputTexts(req.body, 'user').join('\n');
      if (!said.includes('PARENT-TASK')) {
        subCalls += 1;
        return message('sub done', { input_tokens: SUB.in, output_tokens: SUB.out });
      }
      const outputs = functionCallOutputs(req.body);
      const done = new Set(outputs.map((o) => o.callId));
      const sub = /"agent_id":"([^"]+)"/.exec(outputs.find((o) => o.callId === 'call_spawn')?.output ?? '')?.[1] ?? 'unknown';
      if (!done.has('call_spawn'))
        return agentTool('spawn_agent', { message: 'SUBAGENT-TASK: look at the tests' }, 'call_spawn', { input_tokens: 1000, output_tokens: 200 });
      if (!done.has('call_wait1'))
        return agentTool('wait_agent', { targets: [sub], timeout_ms: 30_000 }, 'call_wait1', { input_tokens: 500, output_tokens: 5 });
      if (!inputTexts(req.body, 'assistant').includes('First turn over.')) return message('First turn over.', { input_tokens: 300, output_tokens: 30 });
      if (!done.has('call_send'))
        return agentTool('send_input', { target: sub, message: 'MORE-WORK: and the docs' }, 'call_send', { input_tokens: 10, output_tokens: 1 });
      if (!done.has('call_wait2')) return agentTool('wait_agent', { targets: [sub], timeout_ms: 30_000 }, 'call_wait2', { input_tokens: 20, output_tokens: 2 });
      return message('TASK COMPLETE — the sub-agent looked.', { input_tokens: 40, output_tokens: 4 });
    },
  });
});
afterAll(async () => {
  await model?.close();
});

const stack = useStack();

function codexAgent(agentId: string, extra: Partial<AgentSpecInput> = {}): AgentSpecInput {
  const workDir = join(process.env.WARDEN_HOME!, 'work', agentId);
  mkdirSync(workDir, { recursive: true });
  return {
    agentId,
    task: 'PARENT-TASK: have a sub-agent look around.',
    driver: { kind: 'codex', model: MODEL, config: model.codexOverrides(), credentialsHome: noCredentials },
    supervisor: { idleAfterMs: 0 },
    ...extra,
    driven: { workDir, killGraceMs: 3_000 },
  };
}

/** Each driven turn's result (the runTurn activity's), in order, read from the agent's history. */
async function turnResults(agentId: string): Promise<TurnResult[]> {
  const history = await stack.warden.handle(agentId).fetchHistory();
  const out: TurnResult[] = [];
  for (const e of history.events ?? []) {
    const payload = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
    if (!payload) continue;
    const r = JSON.parse(Buffer.from(payload).toString('utf8')) as Partial<TurnResult>;
    if (r.turn?.id?.startsWith(`${agentId}-turn-`)) out.push(r as TurnResult);
  }
  return out;
}

test("a driven codex turn's tokens include its sub-agent's, as the model server reported them; the sub-agent counts once", async () => {
  const agentId = 'cxd-sub-tokens';
  subCalls = 0;
  await stack.warden.start(codexAgent(agentId));
  const done = await finalStatus(stack.warden.handle(agentId));
  expect(done).toMatchObject({ state: 'done', turns: 2 });
  expect(subCalls).toBe(1);
  const [t1, t2] = await turnResults(agentId);
  expect(t1!.turn).toMatchObject({ id: `${agentId}-turn-1`, text: 'First turn over.', tokensIn: OWN1.in + SUB.in, tokensOut: OWN1.out + SUB.out });
  // Named again in turn 2 (its send_input and wait failed): nothing more to count of it.
  expect(t2!.turn).toMatchObject({ id: `${agentId}-turn-2`, tokensIn: OWN2.in, tokensOut: OWN2.out });
  const total = { in: OWN1.in + SUB.in + OWN2.in, out: OWN1.out + SUB.out + OWN2.out };
  expect(done.tokens).toEqual({ ...total, total: total.in + total.out });
  expect(done.budgets.tokens.used).toBe(total.in + total.out);
});

test("a token budget just above the session's own turn is reached by its sub-agent's tokens and pauses the agent", async () => {
  const agentId = 'cxd-sub-budget';
  const own = OWN1.in + OWN1.out;
  const limit = own + 50;
  await stack.warden.start(codexAgent(agentId, { budgets: { tokens: limit } }));
  const s = await waitForStatus(stack.warden, agentId, (x) => x.turns >= 1 && !x.turnRunning && x.state !== 'running', 'the first turn counted', 90_000);
  const used = own + SUB.in + SUB.out;
  expect(s).toMatchObject({ state: 'paused-by-user', budgetPaused: true, turns: 1, pauseReason: `budget exhausted: tokens ${used} of ${limit}` });
  expect(s.tokens.total).toBe(used);
  await stack.warden.signal(agentId, 'abort', {});
});
