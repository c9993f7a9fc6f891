/**
 * Group budgets on a real dev server with real worker processes. The counter reads visibility:
 * three agents labelled team=payments are capped together (paused with the reason when their sum
 * crosses the cap, one alert to a real HTTP listener naming the group), an agent that joins later
 * is paused at the next poll, a raise resumes the agents the group paused and only those; and
 * spend is counted exactly once across a worker SIGKILL, a dev-server restart and the agents'
 * continue-as-new (forced early by dynamic config). Supervision's spend (a paid evaluator's) is
 * shown beside the group's and never counted against its cap. Short intervals through the inputs.
 * A delegated child counts in its parent's groups, once: a parent publishes only its own turns' spend.
 * Two counters' histories are recorded for the replay corpus (a budget, a poll counting two agents
 * that exhausts it, a raise; and a run that continued as new with its carried state).
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { groupStatus, setGroupBudget } from '../../src/client/groups.js';
import type { WardenClient } from '../../src/client/index.js';
import { finalStatus, waitForEvaluations } from '../helpers/agents.js';
import { WardenCostUsd, WardenLabels } from '../../src/domain/contract/search-attributes.js';
import { recordHistory } from '../helpers/histories.js';
import { ROOT, eventually, useWorkerProcesses } from '../helpers/stack.js';
import { startWebhookListener } from '../helpers/webhook.js';

const stack = useWorkerProcesses({}, { dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 60 } });

/** Counters poll every 300 ms; labelled agents publish their spend at most every 100 ms. */
const POLL = { pollIntervalMs: 300 };
const startAgent = (w: WardenClient, agentId: string, team: string) =>
  w.start({ agentId, task: 'Ship the payments fix', labels: { team }, safety: { groupReportIntervalMs: 100 } });
const pausedBy = (w: WardenClient, id: string, what: string) =>
  eventually(
    async () => {
      const st = await w.status(id);
      return st.paused ? st : null;
    },
    { timeoutMs: 30_000, what },
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A `command` evaluator that answers OK and reports what its model call cost: $0.0042 an evaluation. */
const PAID_JUDGE = {
  kind: 'command' as const,
  command: [
    process.execPath,
    '-e',
    `process.stdin.resume();process.stdin.on('end',()=>{process.stderr.write('warden-usage {"tokensIn":700,"tokensOut":9,"costUsd":0.0042}\\n');process.stdout.write('{"verdict":"OK"}')})`,
  ],
};

test('three agents in one group are capped together: paused at the sum with the reason, one alert naming the group', { timeout: 180_000 }, async () => {
  const hook = await startWebhookListener();
  const worker = stack.spawnWorker();
  const alerts = () => hook.accepted().filter((d) => (d.json as { event?: string }).event === 'group-budget-exhausted');
  try {
    const w = stack.warden;
    await setGroupBudget(w, 'team=payments', { costUsd: 1, per: 'day', webhooks: [{ url: hook.url }] }, POLL);
    for (const id of ['pay-a', 'pay-b', 'pay-c', 'pay-h']) {
      const r = await startAgent(w, id, 'payments');
      expect(r.labelsSearchable).toBe(true);
    }
    // A human paused pay-h for their own reason: the group must never resume it.
    await w.signal('pay-h', 'pause', { reason: 'a human looks at it' });
    // 0.3 a turn: 0.9 after a round of three (under the cap), 1.2 after the next turn crosses it.
    for (const id of ['pay-a', 'pay-b', 'pay-c']) await w.reportTurn(id, { id: `${id}-1`, text: 'working', costUsd: 0.3, tokensIn: 300 });
    const under = await eventually(
      async () => {
        const g = await groupStatus(w, 'team=payments');
        return g.spent.costUsd >= 0.9 - 1e-9 ? g : null;
      },
      { timeoutMs: 30_000, what: 'the first round counted' },
    );
    expect(under.exhausted).toBeNull();
    await sleep(150); // past pay-b's publication interval
    await w.reportTurn('pay-b', { id: 'pay-b-2', text: 'working', costUsd: 0.3, tokensIn: 300 });
    for (const id of ['pay-a', 'pay-b', 'pay-c']) {
      const s = await pausedBy(w, id, `${id} paused by its group`);
      expect(s.pauseReason).toBe('group team=payments budget exhausted: cost $1.2000 of $1.0000 per day');
      expect(s.labels).toEqual({ team: 'payments' });
    }
    const [alert] = await eventually(async () => (alerts().length ? alerts() : null), { timeoutMs: 30_000, what: 'the group alert' });
    expect(alert!.json).toMatchObject({
      event: 'group-budget-exhausted',
      agentId: 'group-team=payments',
      workflowId: 'warden-group-team=payments',
      reason: 'group team=payments budget exhausted: cost $1.2000 of $1.0000 per day; paused 3 agents: pay-a, pay-b, pay-c',
    });
    // A late agent joins the exhausted group: paused at the next poll, and no second alert.
    await startAgent(w, 'pay-late', 'payments');
    expect((await pausedBy(w, 'pay-late', 'the late agent paused')).pauseReason).toMatch(/^group team=payments budget exhausted/);
    await sleep(1_500);
    expect(alerts()).toHaveLength(1);
    expect((await w.list()).find((r) => r.agentId === 'pay-a')?.labels).toEqual({ team: 'payments' });
    const exhausted = await groupStatus(w, 'team=payments');
    expect(exhausted.pausedByGroup).toEqual(['pay-a', 'pay-b', 'pay-c', 'pay-late']);

    // A raise above the spend: the agents the group paused run again, and only those.
    await setGroupBudget(w, 'team=payments', { costUsd: 5, per: 'day' });
    for (const id of ['pay-a', 'pay-b', 'pay-c', 'pay-late'])
      await eventually(async () => !(await w.status(id)).paused, { timeoutMs: 30_000, what: `${id} resumed by the raise` });
    await sleep(1_000);
    expect(await w.status('pay-h')).toMatchObject({ paused: true, pauseReason: 'a human looks at it' });
    const g = await groupStatus(w, 'team=payments');
    expect(g).toMatchObject({ exhausted: null, pausedByGroup: [], budget: { costUsd: 5, per: 'day' } });
    expect(g.agents.map((a) => a.agentId)).toEqual(['pay-a', 'pay-b', 'pay-c', 'pay-h', 'pay-late']);
    expect(g.spent.costUsd).toBeCloseTo(1.2, 9);
    expect(g.spent.tokens).toBe(1200);
    expect(alerts()).toHaveLength(1);

    // The same through the CLI: status as text and JSON; no such group is exit 3; a budget without a cap, exit 2.
    const cli = (args: string[]) => execa('node', [join(ROOT, 'dist/src/cli/main.js'), '--address', stack.server.address, ...args], { reject: false });
    const text = await cli(['group', 'status', 'team=payments']);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^group team=payments: at most \$5 per day\n {2}period .*: spent \$1\.2000, 1200 tokens/);
    expect(text.stdout).toMatch(/pay-h \$0\.0000 \(paused\)/);
    const json = await cli(['group', 'status', 'team=payments', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ group: 'team=payments', spent: { costUsd: expect.closeTo(1.2, 9), tokens: 1200 }, pausedByGroup: [] });
    expect((await cli(['group', 'status', 'team=nobody'])).exitCode).toBe(3);
    const bad = await cli(['group', 'budget', 'team=payments']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/needs --cost-usd or --tokens/);
  } finally {
    await stack.kill(worker);
    await hook.close();
  }
});

test('spend is counted exactly once across a worker SIGKILL, a dev-server restart and continue-as-new', { timeout: 240_000 }, async () => {
  let worker = stack.spawnWorker();
  const w = stack.warden;
  const turns: Promise<unknown>[] = [];
  let n = 0;
  const report = (id: string) => {
    n += 1;
    // Each turn has its id: the client retries it through the crash, the agent dedupes it by id.
    const p = w.reportTurn(id, { id: `${id}-${n}`, text: `turn ${n}`, costUsd: 0.01 * n, tokensIn: n });
    turns.push(p);
    return p;
  };
  const round = async (k: number) => {
    for (let i = 0; i < k; i++) for (const id of ['crash-a', 'crash-b']) await report(id);
  };
  try {
    await setGroupBudget(w, 'team=crash', { costUsd: 1000, per: 'day' }, POLL);
    await startAgent(w, 'crash-a', 'crash');
    await startAgent(w, 'crash-b', 'crash');
    await round(4);
    // Reports in flight while the worker is SIGKILLed: their tasks and the counter's polls run again on the next worker.
    void report('crash-a');
    void report('crash-b');
    await sleep(30);
    await stack.kill(worker);
    worker = stack.spawnWorker();
    await round(4);
    // Reports in flight while the dev server restarts (same SQLite file).
    void report('crash-a');
    void report('crash-b');
    await sleep(30);
    stack.server = await stack.server.restart();
    if (worker.exitCode !== null) worker = stack.spawnWorker();
    await round(4);
    await Promise.all(turns);
    // A turn is published at once when the last publication is older than the interval (100 ms):
    // one more turn each, without spend, after it, so the last figures are in visibility.
    await sleep(300);
    for (const id of ['crash-a', 'crash-b']) await w.reportTurn(id, { id: `${id}-final`, text: 'done for now' });
    const a = await w.status('crash-a');
    const b = await w.status('crash-b');
    expect(a.turns + b.turns).toBe(n + 2);
    expect(a.runs + b.runs).toBeGreaterThan(2); // at least one continued as new
    const expectedTokens = (n * (n + 1)) / 2;
    expect(a.tokens.total + b.tokens.total).toBe(expectedTokens);
    let last: unknown = null;
    const g = await eventually(
      async () => {
        const v = await groupStatus(w, 'team=crash');
        last = v;
        return v.spent.tokens >= expectedTokens ? v : null;
      },
      { timeoutMs: 60_000, what: 'every turn counted' },
    ).catch((err: unknown) => {
      throw new Error(
        `${String(err)}; group: ${JSON.stringify(last)}; a: ${JSON.stringify({ state: a.state, paused: a.paused, tokens: a.tokens })}; b: ${JSON.stringify({ state: b.state, paused: b.paused, tokens: b.tokens })}`,
      );
    });
    // Give it a few more polls: nothing more may be added.
    const later = await eventually(
      async () => {
        const v = await groupStatus(w, 'team=crash');
        return v.polls >= g.polls + 2 ? v : null;
      },
      { timeoutMs: 30_000, what: 'two more group polls' },
    );
    expect(later.spent.tokens).toBe(expectedTokens);
    expect(later.spent.costUsd).toBeCloseTo(a.costUsd + b.costUsd, 9);
    expect(later.agents.map((x) => x.agentId)).toEqual(['crash-a', 'crash-b']);
    // The counter continued as new too (the server suggests it at 60 events): its current run started from carried state.
    const counter = w.client.workflow.getHandle('warden-group-team=crash');
    const d = await counter.describe();
    expect(d.runId).not.toBe(d.raw.workflowExecutionInfo?.firstRunId);
    await recordHistory(stack.server.address, counter, 'group-budget-continued');
  } finally {
    await stack.kill(worker);
  }
});

test("supervision's spend is shown beside the group's spend and never counted against its cap", { timeout: 120_000 }, async () => {
  const worker = stack.spawnWorker();
  try {
    const w = stack.warden;
    // A cap of $0.01: the agent's own $0.003 stays under it; its evaluator's $0.0126 alone would cross it.
    // The evaluator runs after every turn ($0.0042 each); the next turn publishes what it cost.
    await setGroupBudget(w, 'team=watched', { costUsd: 0.01, per: 'day' }, POLL);
    await w.start({
      agentId: 'watched',
      task: 'Ship the payments fix',
      labels: { team: 'watched' },
      safety: { groupReportIntervalMs: 100 },
      supervisor: { idleAfterMs: 0, evalInterval: 1 },
      evaluator: PAID_JUDGE,
    });
    for (let i = 1; i <= 3; i++) {
      await w.reportTurn('watched', { id: `watched-${i}`, text: `working ${i}`, costUsd: 0.001, tokensIn: 10 });
      await waitForEvaluations(w, 'watched', i);
      await sleep(150); // past the publication interval
    }
    // A turn without spend publishes the third evaluation's figure (its own evaluation's is published by no later turn).
    await w.reportTurn('watched', { id: 'watched-4', text: 'done for now' });
    const cli = (args: string[]) => execa('node', [join(ROOT, 'dist/src/cli/main.js'), '--address', stack.server.address, ...args], { reject: false });
    const g = await eventually(
      async () => {
        const r = await cli(['group', 'status', 'team=watched', '--json']);
        const v = JSON.parse(r.stdout) as { supervision?: { costUsd: number }; spent: { costUsd: number } };
        return (v.supervision?.costUsd ?? 0) >= 0.0126 - 1e-9 && v.spent.costUsd >= 0.003 - 1e-9 ? v : null;
      },
      { timeoutMs: 30_000, what: "the evaluator's spend counted in the group's supervision" },
    );
    expect(g).toMatchObject({ group: 'team=watched', exhausted: null, pausedByGroup: [], spent: { costUsd: expect.closeTo(0.003, 9), tokens: 30 } });
    expect(g.supervision!.costUsd).toBeCloseTo(0.0126, 9);
    // Counted once: more polls add nothing, and the agent still runs.
    await sleep(1_000);
    const later = JSON.parse((await cli(['group', 'status', 'team=watched', '--json'])).stdout) as { supervision: { costUsd: number } };
    expect(later.supervision.costUsd).toBeCloseTo(0.0126, 9);
    expect((await w.status('watched')).paused).toBe(false);
    const text = await cli(['group', 'status', 'team=watched']);
    expect(text.stdout).toMatch(/supervision \(the evaluators' own model calls\): \$0\.0126, not counted against the cap/);
  } finally {
    await stack.kill(worker);
  }
});

test('a budget, a poll counting two agents that exhausts it, a raise: the counter as recorded for replay', { timeout: 120_000 }, async () => {
  const worker = stack.spawnWorker();
  try {
    const w = stack.warden;
    const group = 'team=replay';
    const counter = w.client.workflow.getHandle('warden-group-team=replay');
    // Polls once a minute here, so its history holds only the polls this scenario asks for: a budget signal wakes it.
    await setGroupBudget(w, group, { costUsd: 0.5, per: 'day' }, { pollIntervalMs: 60_000 });
    await eventually(async () => ((await groupStatus(w, group)).polls >= 1 ? true : null), { timeoutMs: 30_000, what: 'the first poll' });
    for (const id of ['rec-a', 'rec-b']) await startAgent(w, id, 'replay');
    await sleep(150); // past the publication interval
    for (const id of ['rec-a', 'rec-b']) await w.reportTurn(id, { id: `${id}-1`, text: 'working', costUsd: 0.3, tokensIn: 100 });
    // The same budget again wakes the counter for a poll; again until visibility shows both agents' spend.
    const counted = await eventually(
      async () => {
        await setGroupBudget(w, group, { costUsd: 0.5, per: 'day' });
        await sleep(500);
        const g = await groupStatus(w, group);
        return g.spent.costUsd >= 0.6 - 1e-9 ? g : null;
      },
      { timeoutMs: 30_000, what: 'a poll counting both agents' },
    );
    expect(counted.agents.map((a) => a.agentId)).toEqual(['rec-a', 'rec-b']);
    expect(counted.spent).toEqual({ costUsd: expect.closeTo(0.6, 9), tokens: 200 });
    for (const id of ['rec-a', 'rec-b'])
      expect((await pausedBy(w, id, `${id} paused by its group`)).pauseReason).toMatch(/^group team=replay budget exhausted/);
    // The raise: the next poll (at once) resumes both.
    await setGroupBudget(w, group, { costUsd: 5, per: 'day' });
    for (const id of ['rec-a', 'rec-b']) await eventually(async () => !(await w.status(id)).paused, { timeoutMs: 30_000, what: `${id} resumed by the raise` });
    expect(await groupStatus(w, group)).toMatchObject({ exhausted: null, pausedByGroup: [], budget: { costUsd: 5 } });
    // One run: nothing here continued as new, so the recorded history is the whole scenario.
    const d = await counter.describe();
    expect(d.runId).toBe(d.raw.workflowExecutionInfo?.firstRunId);
    await recordHistory(stack.server.address, counter, 'group-budget-raise');
  } finally {
    await stack.kill(worker);
  }
});

test("a delegated child carries its parent's labels: its spend counts in the group once, beside its parent's", { timeout: 120_000 }, async () => {
  const worker = stack.spawnWorker();
  try {
    const w = stack.warden;
    await setGroupBudget(w, 'team=tree', { costUsd: 100, per: 'day' }, POLL);
    await startAgent(w, 'tree-boss', 'tree');
    await sleep(150); // past the publication interval
    await w.reportTurn('tree-boss', { id: 'boss-1', text: 'planning', costUsd: 0.25, tokensIn: 100 });
    const turns = [
      { text: 'working', toolCalls: [{ name: 'shell', args: 'make answer', ok: true }], costUsd: 0.125, tokensIn: 50 },
      { text: 'TASK COMPLETE', costUsd: 0.125, tokensIn: 50 },
    ];
    await w.delegate('tree-boss', {
      childId: 'kid',
      objective: 'Compute the answer.',
      resultSchema: { type: 'object' },
      definitionOfDone: 'the answer is computed and returned as JSON',
      toolAllowlist: ['shell'],
      driver: { kind: 'scripted', turns, turnDelayMs: 200, result: { answer: 1 } },
    });
    const kid = await finalStatus(w.handle('tree-boss.kid'));
    expect(kid).toMatchObject({ state: 'done', labels: { team: 'tree' }, costUsd: 0.25 });
    const d = await w.handle('tree-boss.kid').describe();
    expect(d.typedSearchAttributes.get(WardenLabels)).toEqual(['team=tree']);
    // Its own epoch, kept across its continue-as-new (the run id would change with each run and count it again).
    expect((d.memo as { wardenEpoch?: string }).wardenEpoch).toMatch(/^[\w-]+\/agent-tree-boss\.kid\/\d+$/);
    await sleep(150);
    await w.reportTurn('tree-boss', { id: 'boss-2', text: 'waiting' });
    const g = await eventually(
      async () => {
        const v = await groupStatus(w, 'team=tree');
        return v.spent.costUsd >= 0.5 - 1e-9 ? v : null;
      },
      { timeoutMs: 30_000, what: "the child's spend counted in its parent's group" },
    );
    // The parent publishes its own turns' spend only (its budget covers the subtree, its WardenCostUsd does not).
    expect((await w.handle('tree-boss').describe()).typedSearchAttributes.get(WardenCostUsd)).toBe(0.25);
    // Later polls (however long a loaded box takes to run them) count nothing again.
    const later = await eventually(
      async () => {
        const v = await groupStatus(w, 'team=tree');
        return v.polls >= g.polls + 2 ? v : null;
      },
      { timeoutMs: 30_000, what: 'two more group polls' },
    );
    expect(later.spent).toEqual({ costUsd: 0.5, tokens: 200 });
    await w.signal('tree-boss', 'abort', {});
  } finally {
    await stack.kill(worker);
  }
});
